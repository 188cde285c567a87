"""Compile history: every successful compile, kept with its source, options, target,
every stage and its summary figures, so any two can be compared later, also after a
server restart.

    store = HistoryStore(settings.workspace_dir / ".history")
    info = store.add("vector_add.py", request, result, figures_json)
    store.list()            # RecordInfo, oldest first (the newest `keep` are kept, within max_bytes)
    store.load(info.id)     # CompileRecord with the whole CompileResult

One record is two files: `<id>.meta.json` (small: what a list shows) and
`<id>.json.gz` (the request and result). No shared index, so two servers or
sessions adding at once cannot lose each other's records.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from inspectors.base.files import atomic_write
from inspectors.base.result import CompileRequest, CompileResult

_ID_RE = re.compile(r"^\d{8}-\d{6}-\d{6}$")     # 20250101-120301-123456: sorts by time
_INFOS: dict[str, "RecordInfo"] = {}            # a meta file's path -> its record (HistoryStore.list)
_INFOS_MAX = 20_000


@dataclass(frozen=True)
class RecordInfo:
    id: str
    when: float                  # POSIX time of the compile
    kernel: str                  # what the user compiled: `vector_add.py`, a library title
    target: str
    options: str                 # `num_warps=8, BLOCK_SIZE=512` (what the user set), "" for defaults
    launches: int
    figures: dict = field(default_factory=dict)   # diff.Figures.to_json() of launch 1

    def label(self) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(self.when))
        opts = f" · {self.options}" if self.options else ""
        return f"{stamp} · {self.kernel} · {self.target}{opts}"


@dataclass(frozen=True)
class CompileRecord:
    info: RecordInfo
    request: CompileRequest
    result: CompileResult


def describe_options(request: CompileRequest) -> str:
    """What the user chose beyond the launcher: `num_warps=8, BLOCK_SIZE=512`."""
    parts = []
    if request.num_warps is not None:
        parts.append(f"num_warps={request.num_warps}")
    if request.num_stages is not None:
        parts.append(f"num_stages={request.num_stages}")
    parts += [f"{k}={v}" for k, v in request.constexprs.items()]
    if request.signature:
        parts.append(f"signature {request.signature}")
    if getattr(request, "triton_version", ""):
        parts.append(f"Triton {request.triton_version}")
    return ", ".join(parts)


def new_record(kernel: str, request: CompileRequest, result: CompileResult, figures: dict,
               when: float | None = None) -> CompileRecord:
    when = time.time() if when is None else when
    rid = time.strftime("%Y%m%d-%H%M%S", time.localtime(when)) + f"-{int(when * 1e6) % 1_000_000:06d}"
    info = RecordInfo(rid, when, kernel, request.target, describe_options(request), len(result.kernels), figures)
    return CompileRecord(info, request, result)


HISTORY_BYTES = 64 << 20      # one workspace's history on disk (a class's student's: theirs alone)
MAX_RECORD_BYTES = 64 << 20   # a record's JSON, read back at most (its gzip is not unpacked past it)


class HistoryStore:
    def __init__(self, root: Path, keep: int = 40, max_bytes: int = HISTORY_BYTES):
        self.root = Path(root).expanduser()
        self.keep, self.max_bytes = keep, max_bytes

    def add(self, record: CompileRecord, result_gz: bytes | None = None) -> RecordInfo:
        """Write one record (atomically) and forget the oldest beyond `keep`. `result_gz`: the
        result's JSON already gzipped (the result cache's file): the body is then three gzip
        members, `{"request": ..., "result": ` + those bytes + `}`, which read back as one
        (gzip.decompress reads every member), with no second serialization of the result."""
        self.root.mkdir(parents=True, exist_ok=True)
        rid = record.info.id
        if result_gz:
            head = b'{"request": ' + json.dumps(record.request.to_json()).encode() + b', "result": '
            data = gzip.compress(head, 1, mtime=0) + result_gz + gzip.compress(b"}", 1, mtime=0)
        else:
            body = {"request": record.request.to_json(), "result": record.result.to_json()}
            data = gzip.compress(json.dumps(body).encode(), 1, mtime=0)
        self._write(self.root / f"{rid}.json.gz", data)
        self._write(self.root / f"{rid}.meta.json", json.dumps(asdict(record.info)).encode())
        self._prune()
        return record.info

    def list(self) -> tuple[RecordInfo, ...]:
        """The records on disk, oldest first. A record's files are written once (atomically)
        and never changed, so each meta file is read once per process (`_INFOS`): the explorer
        lists the history on every run of its page, and a class's student has 40 records."""
        try:
            names = sorted(e.name for e in os.scandir(self.root) if e.name.endswith(".meta.json"))
        except OSError:
            return ()
        out = []
        for name in names:
            if not _ID_RE.match(name[:-len(".meta.json")]):
                continue
            path = os.path.join(self.root, name)
            info = _INFOS.get(path)
            if info is None:
                try:
                    info = RecordInfo(**json.loads(Path(path).read_text(encoding="utf-8")))
                except (OSError, ValueError, TypeError):
                    continue       # half-written or from another version: skipped, not fatal
                if len(_INFOS) >= _INFOS_MAX:
                    _INFOS.clear()
                _INFOS[path] = info
            out.append(info)
        return tuple(out)

    def bytes_used(self) -> int:
        """What the records hold on disk (at most max_bytes, past the newest one)."""
        try:
            return sum(_size(p) for p in self.root.iterdir() if p.is_file())
        except OSError:
            return 0

    def load(self, rid: str) -> CompileRecord | None:
        if not _ID_RE.match(rid or ""):
            return None
        try:
            info = RecordInfo(**json.loads((self.root / f"{rid}.meta.json").read_text(encoding="utf-8")))
            with gzip.open(self.root / f"{rid}.json.gz", "rb") as f:
                body = json.loads(f.read(MAX_RECORD_BYTES))
            return CompileRecord(info, CompileRequest(**body["request"]), CompileResult.from_json(body["result"]))
        except (OSError, ValueError, TypeError, KeyError, EOFError):
            return None

    def _write(self, path: Path, data: bytes) -> None:
        atomic_write(path, data)

    def _prune(self) -> None:
        """The oldest records forgotten beyond `keep`, and beyond `max_bytes` on disk (the newest
        one always stays)."""
        ids = sorted(m.name[:-len(".meta.json")] for m in self.root.glob("*.meta.json"))
        drop = set(ids[:-self.keep] if self.keep else ids)
        total = 0
        for rid in reversed(ids):                  # newest first: what fits is kept
            if rid in drop:
                continue
            total += sum(_size(self.root / f"{rid}{suffix}") for suffix in (".meta.json", ".json.gz"))
            if total > self.max_bytes and rid != ids[-1]:
                drop.add(rid)
        for rid in drop:
            for suffix in (".meta.json", ".json.gz"):
                (self.root / f"{rid}{suffix}").unlink(missing_ok=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
