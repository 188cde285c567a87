"""Kernels from Triton's cache and dump folders, without compiling anything.

Layouts read (checked with triton 3.9.0 here and triton 3.6.0 on the GPU machine):

* the cache (`TRITON_CACHE_DIR`, default `~/.triton/cache`; torch.compile's is
  `/tmp/torchinductor_<user>/triton/0`): one folder per kernel hash, e.g.
  `KIHSJYIALBS7.../` holding `add_kernel.{ttir,ttgir,llir,ptx,cubin,json}` (triton 3.9 adds
  `add_kernel.source`, the MLIR the front end produced -- not Python) and
  `__grp__add_kernel.json`, which lists the group's files::

      {"child_paths": {"add_kernel.ttir": "/.../KIHSJYIALBS7.../add_kernel.ttir", ...}}

  `add_kernel.json` is the compile's metadata: `{"target": {"backend": "cuda", "arch": 90,
  "warp_size": 32}, "num_warps": 4, "num_stages": 3, "shared": 0, "name": "add_kernel",
  "triton_version": "3.9.0", ...}` (no `triton_version` in 3.6).
* a dump (`TRITON_KERNEL_DUMP=1`, `TRITON_DUMP_DIR`): the same folders without the
  metadata JSON, plus `add_kernel.sass`; target and warps then come from the TTGIR's
  `module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", ...}`.

`scan` is cheap enough for caches of thousands of kernels: per folder one `scandir`, a
`stat` per file, and the two small JSON files; no IR is read. `load` reads one folder
into a `KernelResult` for the stage viewer and the insight panels.
"""
from __future__ import annotations

import base64
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from inspectors.base import stages as stage_table
from inspectors.base.result import CUBIN_TOO_LARGE, MAX_CUBIN_BYTES, MAX_STAGE_CHARS, KernelResult, bound_text
from inspectors.read.mlir import parse_ttir_args  # noqa: F401 - re-exported: cache.parse_ttir_args(...)

# File suffix (after the kernel name) -> stage name, from the stage table: the cache names
# files after `CompiledKernel.asm` keys (`.ttir`, `.llir`), a dump adds `.sass`.
STAGE_FILES: dict[str, str] = {(s.asm_key or s.ext): s.name for s in stage_table.STAGES if s.name != "source"}
BINARIES = {binary: backend for backend, binary in stage_table.BINARY.items()}
# What a complete entry holds, per backend (the metadata JSON only in a cache, not a dump): every
# stage Triton always writes for it, then its binary.
EXPECTED = {backend: tuple(s.asm_key for s in stage_table.stages_for(backend) if s.asm_key and not s.optional)
            + (binary,) for backend, binary in stage_table.BINARY.items()}
# The IRs a kernel's folder is read from for its Python file and arguments, first choice first: the
# table's MLIR rows (Gluon IR or TTIR, what the kernel starts from; TTGIR for a Gluon kernel of a
# Triton without Gluon IR).
FIRST_IR: tuple[str, ...] = tuple(s.asm_key for s in sorted(stage_table.STAGES, key=lambda s: s.order)
                                  if s.family == "mlir" and s.asm_key)
_MAX_SOURCE_BYTES = 4 << 20
_KERNEL_SUFFIXES = frozenset(STAGE_FILES) | {"json", "grp"} | frozenset(BINARIES)
_PRESENT_ORDER = ("json", *(s.asm_key for s in sorted(stage_table.STAGES, key=lambda s: s.order) if s.asm_key),
                  *BINARIES, *(s.ext for s in stage_table.STAGES if not s.asm_key and s.name != "source"))


@dataclass(frozen=True)
class CacheEntry:
    """One kernel folder, from its file names, sizes and metadata JSON alone."""
    path: str
    key: str                         # the folder name (Triton's hash)
    name: str                        # kernel name, "" if no file says it
    kind: str                        # cache | dump
    status: str                      # ok | partial | broken
    target: str = ""                 # cuda:90, hip:gfx942; "" until opened, for dumps
    num_warps: int | None = None
    num_stages: int | None = None
    triton_version: str = ""
    mtime: float = 0.0
    size: int = 0
    files: tuple[str, ...] = ()      # suffixes present: ("json", "ttir", ...)
    missing: tuple[str, ...] = ()    # files a complete entry would have
    problem: str = ""                # why it is broken or partial, in words

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(STAGE_FILES[f] for f in self.files if f in STAGE_FILES)

    def matches(self, query: str) -> bool:
        q = query.lower().strip()
        return not q or any(q in s.lower() for s in (self.name, self.key, self.target, self.status, self.path))


@dataclass(frozen=True)
class ScanResult:
    root: str
    entries: tuple[CacheEntry, ...]
    skipped: int = 0                 # folders that hold no kernel (driver .so builds, Inductor's .py files)
    seconds: float = 0.0
    error: str = ""                  # the root itself could not be read

    @property
    def broken(self) -> int:
        return sum(e.status != "ok" for e in self.entries)


def kernel_dirs(root: Path) -> list[Path]:
    """Folders under `root` that may hold kernels: its children, and for an Inductor cache
    (`/tmp/torchinductor_root`) the children of `triton/<device>/`. A root that is itself
    a kernel folder is returned alone."""
    out = []
    with os.scandir(root) as it:
        children = sorted((e for e in it), key=lambda e: e.name)
    if any(e.is_file() and _suffix(e.name)[1] in STAGE_FILES for e in children):
        return [root]
    for e in children:
        if not e.is_dir(follow_symlinks=False):
            continue
        if e.name == "triton":
            for dev in sorted(Path(e.path).iterdir()):
                if dev.is_dir():
                    out.extend(sorted(p for p in dev.iterdir() if p.is_dir()))
        else:
            out.append(Path(e.path))
    return out


def _suffix(filename: str) -> tuple[str, str]:
    """`add_kernel.ttgir` -> ("add_kernel", "ttgir"); `__grp__add_kernel.json` -> ("add_kernel", "grp")."""
    if filename.startswith("__grp__") and filename.endswith(".json"):
        return filename[len("__grp__"):-len(".json")], "grp"
    stem, _, suffix = filename.rpartition(".")
    return stem, suffix


def scan(root: Path | str, query: str = "") -> ScanResult:
    """Every kernel folder under `root`, newest first; `query` keeps matching ones."""
    started = time.perf_counter()
    root = Path(root).expanduser()
    try:
        dirs = kernel_dirs(root)
    except OSError as e:
        return ScanResult(str(root), (), error=f"cannot read {root}: {e.strerror or e}")
    entries, skipped = [], 0
    for d in dirs:
        entry = read_entry(d)
        if entry is None:
            skipped += 1
        elif entry.matches(query):
            entries.append(entry)
    entries.sort(key=lambda e: (-e.mtime, e.name, e.key))
    return ScanResult(str(root), tuple(entries), skipped, time.perf_counter() - started)


def read_entry(folder: Path | str) -> CacheEntry | None:
    """One folder -> CacheEntry, or None for a folder that is not a kernel (a driver
    helper build). Never raises: what cannot be read is reported in `problem`.
    Plain strings and bytes here: this runs once per folder of caches of thousands."""
    path = os.fspath(folder)
    key = os.path.basename(path)
    try:
        with os.scandir(path) as it:
            listing = list(it)
        files = {e.name: e.stat() for e in listing if e.is_file()}
    except OSError as e:
        return CacheEntry(path, key, "", "cache", "broken", problem=f"unreadable: {e.strerror or e}")
    if not listing:
        return CacheEntry(path, key, "", "cache", "broken", problem="empty folder")
    by_suffix: dict[str, str] = {}
    names: list[str] = []
    for filename in files:
        stem, suffix = _suffix(filename)
        if suffix == "json" and filename.endswith(".autotune.json"):
            continue
        by_suffix.setdefault(suffix, filename)
        if suffix in _KERNEL_SUFFIXES:
            names.append(stem)
    if not names:
        # not a kernel: a driver helper build (`cuda_utils.so`), Inductor's generated .py
        # files next to `triton/` (`/tmp/torchinductor_root/ab/cabc.py`), a folder of folders
        return None
    mtime = max(s.st_mtime for s in files.values())
    size = sum(s.st_size for s in files.values())
    name = _kernel_name(by_suffix, names)
    present = tuple(s for s in _PRESENT_ORDER if s in by_suffix)
    kind = "cache" if ("json" in by_suffix or "grp" in by_suffix) else "dump"
    meta, problem = {}, ""
    if "json" in by_suffix:
        try:
            with open(os.path.join(path, by_suffix["json"]), "rb") as f:
                meta = json.loads(f.read())
            if not isinstance(meta, dict):
                raise ValueError("not an object")
        except (OSError, ValueError, UnicodeDecodeError) as e:
            meta, problem = {}, f"metadata {by_suffix['json']} unreadable ({type(e).__name__})"
    backend = _backend(meta, by_suffix)
    missing = _grp_missing(os.path.join(path, by_suffix["grp"]), files) if "grp" in by_suffix else []
    if not missing:
        missing = [f"{name}.{s}" for s in EXPECTED.get(backend, ()) if s not in by_suffix]
        if kind == "cache" and "json" not in by_suffix:
            missing.insert(0, f"{name}.json")
    if problem or not any(s in STAGE_FILES for s in by_suffix):
        status = "broken"
        problem = problem or "no IR files"
    elif missing:
        status = "partial"
        problem = "missing " + ", ".join(missing)
    else:
        status = "ok"
    return CacheEntry(
        path=path, key=key, name=name, kind=kind, status=status,
        target=_target_text(meta.get("target")), num_warps=_int(meta.get("num_warps")),
        num_stages=_int(meta.get("num_stages")), triton_version=str(meta.get("triton_version") or ""),
        mtime=mtime, size=size, files=present, missing=tuple(missing), problem=problem)


def _kernel_name(by_suffix: dict[str, str], names: list[str]) -> str:
    for suffix in ("grp", "json"):
        if suffix in by_suffix:
            return _suffix(by_suffix[suffix])[0]
    return sorted(names)[0]


def _backend(meta: dict, by_suffix: dict) -> str:
    t = meta.get("target")
    if isinstance(t, dict) and t.get("backend") in ("cuda", "hip"):
        return t["backend"]
    for backend, binary in stage_table.BINARY.items():        # its binary, or a stage only it makes
        own = {s.asm_key or s.ext for s in stage_table.STAGES if s.backends == (backend,)}
        if binary in by_suffix or own & by_suffix.keys():
            return backend
    return ""


def _grp_missing(grp: str, files: dict) -> list[str]:
    """Files the group JSON lists that are not in the folder."""
    try:
        with open(grp, "rb") as f:
            children = json.loads(f.read()).get("child_paths", {})
    except (OSError, ValueError, AttributeError, UnicodeDecodeError):
        return []
    return [n for n in children if n not in files]


def _target_text(t) -> str:
    """{"backend": "cuda", "arch": 90} -> "cuda:90"; {"backend": "hip", "arch": "gfx942"} -> "hip:gfx942"."""
    if isinstance(t, dict) and t.get("backend") and t.get("arch") is not None:
        return f"{t['backend']}:{t['arch']}"
    return ""


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# ------------------------------------------------------------------------------ opening one


# The first file location in a TTIR (or Gluon IR), e.g.  #loc = loc("/tmp/torchinductor_root/ab/cabc.py":18:0)
_FILE_LOC_RE = re.compile(r'loc\("(?P<path>[^"]+)":\d+:\d+\)')
# TTGIR module attributes, e.g.  module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", ...
_TTGIR_WARPS_RE = re.compile(r'"?ttg\.num-warps"?\s*=\s*(\d+)')
_TTGIR_TARGET_RE = re.compile(r'ttg\.target"?\s*=\s*"(cuda:\d+|hip:gfx[0-9a-f]+)"')
# PTX target line, e.g.  .target sm_90a
_PTX_TARGET_RE = re.compile(r"^\s*\.target\s+sm_(\d+)", re.M)


@dataclass(frozen=True)
class OpenedKernel:
    """A cache folder read for the stage viewer."""
    kernel: KernelResult
    entry: CacheEntry
    filename: str                    # what the source map matches, e.g. "vector_add.py" or "cabc.py"
    loc_path: str = ""               # the Python file the TTIR names
    source_path: str = ""            # where its text was found on this machine, "" if nowhere
    notes: tuple[str, ...] = field(default_factory=tuple)


def ttir_file(folder: Path) -> str:
    """The Python file a kernel folder's first IR (FIRST_IR: its TTIR, or a Gluon kernel's Gluon IR)
    names (its first file location), or ""."""
    ttir = next((p for suffix in FIRST_IR for p in sorted(folder.glob(f"*.{suffix}"))), None)
    if ttir is None:
        return ""
    try:
        with open(ttir, encoding="utf-8", errors="replace") as f:
            head = f.read(16384)
    except OSError:
        return ""
    m = _FILE_LOC_RE.search(head)
    if m is None:       # the definitions sit at the bottom in some versions
        try:
            m = _FILE_LOC_RE.search(ttir.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return ""
    return m["path"] if m else ""


def find_source(loc_path: str, roots: list[Path], confined: Path | None = None) -> Path | None:
    """The Python file `loc_path` names, on this machine: the path itself if it exists,
    else a copy under one of `roots` or their parents (a copied Inductor cache keeps the
    kernel file `c<hash>.py` in `<cache>/<hash[0:2]>/`, next to `triton/0/`). `confined`: the
    IR was made by a user's job (its `loc` names any path it likes): only a regular file under
    this folder (settled: no links in it) is taken."""
    p = Path(loc_path)
    if confined is not None:
        found = _find_source(p, [r for r in roots if r.resolve().is_relative_to(confined.resolve())])
        ok = (found is not None and not found.is_symlink() and found.resolve().is_relative_to(confined.resolve()))
        return found if ok else None
    if p.is_absolute() and p.is_file():
        return p
    return _find_source(p, roots)


def _find_source(p: Path, roots: list[Path]) -> Path | None:
    name = p.name
    if not name.endswith(".py"):
        return None
    seen = set()
    for root in roots:
        for up in (root, *list(root.parents)[:3]):
            if up in seen:
                continue
            seen.add(up)
            for candidate in (up / name[1:3] / name, up / "inductor" / name[1:3] / name, up / name):
                if candidate.is_file():
                    return candidate
    return None


# Options shown for a cached kernel: the metadata JSON's scalars, less bulky or internal ones.
_SKIP_OPTIONS = {"hash", "name", "target", "extern_libs", "supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes",
                 "allowed_dot_input_precisions", "tensordesc_meta", "shared", "tmem_size", "global_scratch_size",
                 "global_scratch_align", "profile_scratch_size", "profile_scratch_align", "triton_version"}
_METADATA_KEYS = ("num_warps", "num_stages", "num_ctas", "shared", "name", "tmem_size", "global_scratch_size")


def _read_at_most(path: Path, limit: int) -> bytes:
    with open(path, "rb") as f:
        return f.read(limit)


def load(folder: Path | str, extra_roots: list[Path] | None = None, confined: Path | None = None) -> OpenedKernel:
    """Read one kernel folder into a KernelResult: every stage file, the cubin (base64, for
    SASS and registers), options and target from the metadata JSON (or the TTGIR for a
    dump), arguments from the TTIR, and the Python source where the file it names exists.
    Raises ValueError when the folder has no stage at all. `confined`: the folder was written by
    a user's job: it must lie in `confined` (settled: inspectors.compile.torch_compile_gpu.settle), and so
    must the source file its IR names."""
    folder = Path(folder)
    if confined is not None and (folder.is_symlink() or not folder.resolve().is_relative_to(confined.resolve())):
        raise ValueError(f"{folder} is not in the run's own folder")
    entry = read_entry(folder)
    if entry is None or not entry.stages:
        raise ValueError(f"{folder} holds no kernel IR" + (f" ({entry.problem})" if entry and entry.problem else ""))
    name = entry.name
    notes = []
    texts: dict[str, str] = {}
    for suffix, stage in STAGE_FILES.items():
        p = folder / f"{name}.{suffix}"
        if p.is_file():          # a job may have written it: read at most a stage's bound, then cut
            texts[stage] = bound_text(_read_at_most(p, MAX_STAGE_CHARS + 1).decode("utf-8", "replace"))
    meta: dict = {}
    jpath = folder / f"{name}.json"
    if jpath.is_file():
        try:
            meta = json.loads(_read_at_most(jpath, 1 << 20).decode("utf-8"))
            meta = meta if isinstance(meta, dict) else {}
        except (ValueError, UnicodeDecodeError, RecursionError):
            notes.append(f"{jpath.name} is not valid JSON: options unknown")
    ttgir = texts.get("ttgir", "")
    target = entry.target or _target_from_ir(ttgir, texts.get("ptx", ""))
    if not target:
        target = "cuda:90"
        notes.append("no target recorded anywhere: assuming cuda:90 for the insight panels")
    options = {k: v for k, v in meta.items()
               if k not in _SKIP_OPTIONS and (isinstance(v, (int, float, str, bool)) or v is None)}
    if "num_warps" not in options:
        w = _TTGIR_WARPS_RE.search(ttgir)
        if w:
            options["num_warps"] = int(w.group(1))
    metadata = {k: meta[k] for k in _METADATA_KEYS if isinstance(meta.get(k), (int, str, float))}
    cubin = ""
    cpath = folder / f"{name}.cubin"
    if cpath.is_file() and cpath.stat().st_size <= MAX_CUBIN_BYTES:      # larger: not read (SASS says why)
        cubin = base64.b64encode(_read_at_most(cpath, MAX_CUBIN_BYTES)).decode()
    elif cpath.is_file() and "sass" not in texts:
        texts["sass"] = f"{CUBIN_TOO_LARGE} ({cpath.stat().st_size / 2**20:.1f} MB; the limit is " \
                        f"{MAX_CUBIN_BYTES / 2**20:g} MB)"
    first_ir = next((texts[n] for n in map(STAGE_FILES.get, FIRST_IR) if n in texts), "")
    loc_path = ttir_file(folder) if first_ir else ""
    filename = Path(loc_path).name if loc_path else f"{name}.py"
    source_path = ""
    if loc_path:
        found = find_source(loc_path, [folder.parent, *(extra_roots or [])], confined)
        if found and found.stat().st_size <= _MAX_SOURCE_BYTES:
            texts = {"source": found.read_text(encoding="utf-8", errors="replace"), **texts}
            source_path = str(found)
            if found.stat().st_mtime > entry.mtime + 1:
                notes.append(f"{found} changed after this kernel was compiled: lines may not match")
        else:
            notes.append(f"the Python file {loc_path} is not on this machine: stages are shown without it "
                         "(lines still link stage to stage)")
    missing = [m for m in entry.missing]
    if missing:
        notes.append("incomplete folder: missing " + ", ".join(missing))
    label = f"{name} · {entry.key[:10]}"
    kernel = KernelResult(name=name, target=target, options=options,
                          args=parse_ttir_args(first_ir, name), stages=texts, launch=0, label=label,
                          compile_seconds=0.0, metadata=metadata, cubin=cubin)
    return OpenedKernel(kernel, entry, filename, loc_path, source_path, tuple(notes))


def _target_from_ir(ttgir: str, ptx: str) -> str:
    m = _TTGIR_TARGET_RE.search(ttgir[:65536]) or _TTGIR_TARGET_RE.search(ttgir)
    if m:
        return m.group(1)
    m = _PTX_TARGET_RE.search(ptx[:4096])
    return f"cuda:{m.group(1)}" if m else ""


# ------------------------------------------------------------------------------ where caches are

def default_locations(worker_cache: Path | None = None) -> list[tuple[str, Path]]:
    """(label, folder) of the caches this machine has: `TRITON_CACHE_DIR` (or
    `~/.triton/cache`), torch.compile's `/tmp/torchinductor_<user>/triton/<n>`, a dump
    folder (`TRITON_DUMP_DIR`, or `~/.triton/dump`), and Triton Lens's own worker cache.
    Only existing folders."""
    import getpass
    import tempfile
    home = Path.home()
    out = [("Triton cache (TRITON_CACHE_DIR)", Path(os.environ.get("TRITON_CACHE_DIR") or home / ".triton" / "cache"))]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    inductor = Path(os.environ.get("TORCHINDUCTOR_CACHE_DIR") or Path(tempfile.gettempdir()) / f"torchinductor_{user}")
    for dev in sorted((inductor / "triton").glob("*")):
        out.append((f"torch.compile cache ({dev})", dev))
    out.append(("Triton dump (TRITON_DUMP_DIR)", Path(os.environ.get("TRITON_DUMP_DIR") or home / ".triton" / "dump")))
    if worker_cache is not None:
        out.append(("Triton Lens's own compile cache", Path(worker_cache)))
    return [(label, p) for label, p in out if p.is_dir()]
