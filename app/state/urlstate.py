"""The explorer's state in the URL, so a link reproduces the page: kernel, target,
options, the stages side by side, the launch, the followed Python line and presentation mode.

    ?kernel=vector_add&target=cuda:80&num_warps=8&constexprs=BLOCK_SIZE%3D512
     &panels=source,ttgir,ptx&launch=2&line=27&run=1&present=1

`parse` is pure (tested directly): it checks every value and says what it ignored,
since a link is input from anyone.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from inspectors.base import stages

KEYS = ("kernel", "target", "num_warps", "num_stages", "constexprs", "signature", "panels", "launch", "line", "run",
        "present")
_MAX_TEXT = 500


@dataclass(frozen=True)
class UrlState:
    kernel: str | None = None
    target: str | None = None
    num_warps: int | None = None
    num_stages: int | None = None
    constexprs: str | None = None
    signature: str | None = None
    panels: tuple[str, ...] | None = None
    launch: int | None = None        # 0-based (the URL says 1-based)
    line: int | None = None
    run: bool = False
    present: bool = False
    ignored: tuple[str, ...] = field(default_factory=tuple)   # "target='sm_61'" ...


def parse(params: dict, kernels: list[str], targets: list[str], warps: list, stage_counts: list) -> UrlState:
    """`params` as `st.query_params.to_dict()` gives them (str values)."""
    ignored = []
    values: dict = {}

    def bad(key):
        ignored.append(f"{key}={str(params.get(key))[:40]!r}")

    def as_int(key, allowed=None, minimum=None):
        raw = params.get(key)
        if raw in (None, ""):
            return None
        try:
            n = int(raw)
        except (TypeError, ValueError):
            bad(key)
            return None
        if (allowed is not None and n not in allowed) or (minimum is not None and n < minimum):
            bad(key)
            return None
        return n

    if params.get("kernel"):
        (values.__setitem__("kernel", params["kernel"]) if params["kernel"] in kernels else bad("kernel"))
    if params.get("target"):
        (values.__setitem__("target", params["target"]) if params["target"] in targets else bad("target"))
    values["num_warps"] = as_int("num_warps", allowed=[w for w in warps if isinstance(w, int)])
    values["num_stages"] = as_int("num_stages", allowed=[s for s in stage_counts if isinstance(s, int)])
    for key in ("constexprs", "signature"):
        raw = params.get(key)
        if raw:
            (values.__setitem__(key, raw) if len(raw) <= _MAX_TEXT and "\n" not in raw else bad(key))
    if params.get("panels"):
        names = [p for p in params["panels"].split(",") if p]
        if names and all(n in stages.BY_NAME for n in names) and len(names) <= 3:
            values["panels"] = tuple(dict.fromkeys(names))
        else:
            bad("panels")
    launch = as_int("launch", minimum=1)
    values["launch"] = None if launch is None else launch - 1
    values["line"] = as_int("line", minimum=1)
    values["run"] = params.get("run") == "1"
    values["present"] = params.get("present") == "1"
    return UrlState(**{k: v for k, v in values.items() if v is not None}, ignored=tuple(ignored))


def encode(state: dict) -> dict[str, str]:
    """Session values -> query parameters; None and empty values are left out."""
    out = {}
    for key in KEYS:
        value = state.get(key)
        if value is None or value == "" or value is False:
            continue
        if key == "panels":
            value = ",".join(value)
        elif key == "launch":
            value = value + 1
        elif key in ("run", "present"):
            value = 1
        out[key] = str(value)
    return out
