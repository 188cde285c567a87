"""The figures that matter in one compile (loads and stores by vector width, registers,
spills, shared memory, occupancy, instructions per stage) and the delta table between two:

    t = delta_table(figures(k_a, insight_a), figures(k_b, insight_b))
    t.headline                                           # 'loads v1 → v4, registers 10 → 18'
"""
from __future__ import annotations

from dataclasses import dataclass

from inspectors.base.result import KernelResult
from inspectors.explain.insight import Insight
from inspectors.base import stages as stage_table


@dataclass(frozen=True)
class Figures:
    """What one compiled kernel comes to, in the numbers worth comparing."""
    name: str
    target: str
    num_warps: int | None
    num_stages: int | None
    constexprs: tuple[tuple[str, str], ...]         # the launch's constexpr values
    loads: tuple[tuple[str, int], ...]              # global loads by width: (("v4.b32", 4),)
    stores: tuple[tuple[str, int], ...]
    atomics: int
    shared_loads: int
    shared_stores: int
    registers: int | None                           # per thread, from the cubin (CUDA)
    spills: int | None                              # spill-store bytes
    shared_bytes: int                               # per block
    occupancy: str | None                           # e.g. "48/64 warps"
    instructions: tuple[tuple[str, int], ...]       # per stage
    lines: tuple[tuple[str, int], ...]              # per stage

    def to_json(self) -> dict:
        return {"name": self.name, "target": self.target, "num_warps": self.num_warps,
                "num_stages": self.num_stages, "constexprs": dict(self.constexprs),
                "loads": dict(self.loads), "stores": dict(self.stores), "atomics": self.atomics,
                "shared_loads": self.shared_loads, "shared_stores": self.shared_stores,
                "registers": self.registers, "spills": self.spills, "shared_bytes": self.shared_bytes,
                "occupancy": self.occupancy, "instructions": dict(self.instructions), "lines": dict(self.lines)}

    @classmethod
    def from_json(cls, d: dict) -> "Figures":
        d = dict(d)
        for key in ("constexprs", "loads", "stores", "instructions", "lines"):
            d[key] = tuple(d.get(key, {}).items())
        return cls(**d)

    def short(self) -> str:
        """One line for a history list: `loads v4 · stores v4 · 18 registers`."""
        parts = []
        if self.loads:
            parts.append("loads " + _widths(self.loads))
        if self.stores:
            parts.append("stores " + _widths(self.stores))
        if self.registers is not None:
            parts.append(f"{self.registers} registers")
        if self.spills:
            parts.append(f"{self.spills} B spilled")
        return " · ".join(parts)


def width_label(vector: int, bits: int) -> str:
    """`v4.b32`: elements per instruction and bits per element."""
    return f"v{vector}.b{bits}"


def figures(kernel: KernelResult, insight: Insight) -> Figures:
    """The comparable numbers of one kernel, from its insight (memory ops come from the
    PTX, or AMDGCN for AMD targets; registers and spills from the cubin)."""
    loads: dict[str, int] = {}
    stores: dict[str, int] = {}
    atomics = shared_loads = shared_stores = 0
    for m in insight.memory_ops:
        if m.kind == "atomic":
            atomics += 1
        elif m.space == "global":
            table = loads if m.kind == "load" else stores
            label = width_label(m.vector, m.bits)
            table[label] = table.get(label, 0) + 1
        elif m.space == "shared":
            if m.kind == "load":
                shared_loads += 1
            else:
                shared_stores += 1
    r, occ = insight.resources, insight.occupancy
    names = stage_table.ordered(insight.summaries)
    return Figures(
        name=kernel.name, target=kernel.target,
        num_warps=kernel.options.get("num_warps"), num_stages=kernel.options.get("num_stages"),
        constexprs=tuple((a.name, str(a.value)) for a in kernel.args if a.type == "constexpr"),
        loads=_by_width(loads), stores=_by_width(stores), atomics=atomics,
        shared_loads=shared_loads, shared_stores=shared_stores,
        registers=r.registers if r else None, spills=r.spills if r else None,
        shared_bytes=r.shared_bytes if r else int(kernel.metadata.get("shared", 0) or 0),
        occupancy=f"{occ.warps_per_sm}/{occ.max_warps_per_sm} warps" if occ else None,
        instructions=tuple((s, insight.summaries[s].instructions) for s in names if s != "source"),
        lines=tuple((s, insight.summaries[s].lines) for s in names),
    )


def _by_width(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    def key(label: str):
        v, b = label[1:].split(".b")
        return int(v) * int(b), int(v)
    return tuple(sorted(counts.items(), key=lambda kv: key(kv[0])))


def _widths(counts) -> str:
    """`v1/v4` (bits dropped when every width is 32-bit), `v1.b16/v4.b32` otherwise."""
    labels = [label for label, _ in counts]
    if all(label.endswith(".b32") for label in labels):
        labels = [label[:-4] for label in labels]
    return "/".join(labels) or "none"


@dataclass(frozen=True)
class DeltaRow:
    group: str           # launch | memory | resources | instructions | lines
    metric: str          # e.g. "global loads v4.b32", "registers / thread", "ptx"
    a: object            # int, str or None (not known for this target)
    b: object

    @property
    def changed(self) -> bool:
        return self.a != self.b

    @property
    def change(self) -> str:
        """`+4`, `-8`, `→` for text, "" when equal."""
        if not self.changed:
            return ""
        if isinstance(self.a, int) and isinstance(self.b, int):
            return f"{self.b - self.a:+d}"
        return "→"

    def to_json(self) -> dict:
        return {"group": self.group, "metric": self.metric, "a": self.a, "b": self.b,
                "changed": self.changed, "change": self.change}


@dataclass(frozen=True)
class DeltaTable:
    rows: tuple[DeltaRow, ...]
    headline: str        # e.g. "loads v1 → v4, stores v1 → v4, registers 10 → 18"

    def changed_rows(self) -> tuple[DeltaRow, ...]:
        return tuple(r for r in self.rows if r.changed)

    def to_json(self) -> dict:
        return {"headline": self.headline, "rows": [r.to_json() for r in self.rows]}


def delta_table(a: Figures, b: Figures) -> DeltaTable:
    """Every figure of `a` next to `b`; widths that only one side has count 0 on the other."""
    rows = [
        DeltaRow("launch", "kernel", a.name, b.name),
        DeltaRow("launch", "target", a.target, b.target),
        DeltaRow("launch", "num_warps", a.num_warps, b.num_warps),
        DeltaRow("launch", "num_stages", a.num_stages, b.num_stages),
    ]
    ca, cb = dict(a.constexprs), dict(b.constexprs)
    rows += [DeltaRow("launch", name, ca.get(name), cb.get(name)) for name in _union(ca, cb)]
    for what, ta, tb in (("global loads", dict(a.loads), dict(b.loads)),
                         ("global stores", dict(a.stores), dict(b.stores))):
        rows += [DeltaRow("memory", f"{what} {w}", ta.get(w, 0), tb.get(w, 0))
                 for w in _by_width_keys(ta, tb)]
    rows += [
        DeltaRow("memory", "atomics", a.atomics, b.atomics),
        DeltaRow("memory", "shared loads", a.shared_loads, b.shared_loads),
        DeltaRow("memory", "shared stores", a.shared_stores, b.shared_stores),
        DeltaRow("resources", "registers / thread", a.registers, b.registers),
        DeltaRow("resources", "spill bytes", a.spills, b.spills),
        DeltaRow("resources", "shared memory / block (B)", a.shared_bytes, b.shared_bytes),
        DeltaRow("resources", "occupancy", a.occupancy, b.occupancy),
    ]
    ia, ib = dict(a.instructions), dict(b.instructions)
    # per stage, in the table's order (a stage only one side made, Gluon IR of a newer Triton, in its place)
    rows += [DeltaRow("instructions", s, ia.get(s), ib.get(s)) for s in stage_table.ordered(_union(ia, ib))]
    la, lb = dict(a.lines), dict(b.lines)
    rows += [DeltaRow("lines", s, la.get(s), lb.get(s)) for s in stage_table.ordered(_union(la, lb))]
    return DeltaTable(tuple(rows), headline(a, b))


def headline(a: Figures, b: Figures) -> str:
    """What changed, most telling first: `loads v1 → v4, registers 26 → 18`."""
    parts = []
    for what, ta, tb in (("loads", a.loads, b.loads), ("stores", a.stores, b.stores)):
        if [w for w, _ in ta] != [w for w, _ in tb]:
            parts.append(f"{what} {_widths(ta)} → {_widths(tb)}")
        elif sum(n for _, n in ta) != sum(n for _, n in tb):
            parts.append(f"{what} {sum(n for _, n in ta)} → {sum(n for _, n in tb)} instructions")
    for label, x, y in (("registers", a.registers, b.registers), ("spills", a.spills, b.spills),
                        ("shared memory", a.shared_bytes, b.shared_bytes),
                        ("occupancy", a.occupancy, b.occupancy)):
        if x != y and x is not None and y is not None:
            unit = " B" if label in ("spills", "shared memory") else ""
            parts.append(f"{label} {x:,}{unit} → {y:,}{unit}" if isinstance(x, int) else f"{label} {x} → {y}")
    isa = stage_table.machine_stage(set(dict(a.instructions)) & set(dict(b.instructions)))
    if isa:
        x, y = dict(a.instructions)[isa], dict(b.instructions)[isa]
        if x != y:
            parts.append(f"{isa.upper()} instructions {x} → {y}")
    if not parts:
        return "no change in memory widths, registers, shared memory or instruction counts"
    return ", ".join(parts)


def _union(x: dict, y: dict) -> list:
    return list(dict.fromkeys([*x, *y]))


def _by_width_keys(x: dict, y: dict) -> list[str]:
    return [label for label, _ in _by_width({k: 0 for k in _union(x, y)})]


