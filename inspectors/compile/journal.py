"""What a compile job leaves on disk as it goes, read back when its worker died mid-compile.

Per launch, the worker writes `launch-N/kernel.json` (name, target, options, args, label, the
source) before compiling it (`begin`); then each of Triton's stages as it is made
(`launch-N/stage.ttir`, `stage.ttgir`, ...; `stage.cubin` in binary: `made`) and, while a
stage runs, `launch-N/running` holding its name (`running`; both from the shim's stage
recorder). An LLVM abort while making LLVM IR leaves `stage.ttir`, `stage.ttgir` and
`running` = `llir`:

    kernels, stage = recover(job)         # (KernelResult per launch, "llir"); job: a JobDir

Streamed as the job goes: once example() has run, `launches.json` lists every launch it made
(`listed`), and each launch's whole result is `launch-N.answer.json` as soon as it is compiled
(`answered`); the engine reads them while the job runs (`Stream`), the page shows the first.
"""
from __future__ import annotations

import base64
import json
import os
import secrets
import stat
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from inspectors.base import stages as stage_table
from inspectors.base.errors import CompileError
from inspectors.base.result import ArgSpec, CompileResult, KernelResult, bound_text, bounded, loads_bounded
from inspectors.base.targets import parse as parse_target


def begin(job_dir: Path, index: int, kernel: KernelResult) -> Path:
    """The folder of launch `index`, with the launch described (its stages come later)."""
    folder = job_dir / f"launch-{index}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps({
        "name": kernel.name, "target": kernel.target, "options": kernel.options,
        "args": [a.__dict__ for a in kernel.args], "launch": kernel.launch, "label": kernel.label,
        "source": kernel.stages.get("source", "")}))
    return folder


def graph_begun(job_dir: Path, index: int, which: str) -> None:
    """torch.compile's graph `index` (0-based) of the job begun in example(): "forward", "backward" or
    "inference" (a big model's step traces and lowers graphs long before its first launch is begun)."""
    try:
        (Path(job_dir) / f"graph-{index}").write_text(which)
    except OSError:          # the job's code removed its folder: its limit does not grow
        pass


def graphs_begun(job_fd: int, limit: int) -> tuple[int, str]:
    """How many of the first `limit` graphs the job has begun, and the last one's kind; asked by
    name through the job folder's descriptor, as the launches are (a gap ends the count: graphs
    begin in order). Its limit grows by them too (worker_handle.grown_by_launches)."""
    begun, which = 0, ""
    for i in range(limit):
        try:
            which = read_at(job_fd, (f"graph-{i}",), 16).decode("utf-8", "replace")
        except OSError:
            break
        begun += 1
    return begun, which


def listed(job_dir: Path, labels: list[str], example_s: float) -> None:
    """Every launch example() made (its label), before any is compiled; `example_s`: what
    loading the file and running example() took."""
    (job_dir / "launches.json").write_text(json.dumps({"labels": labels, "example_s": example_s}))


def answered(job_dir: Path, index: int, data: dict) -> None:
    """Launch `index` done: `{"kernel": KernelResult JSON}` or `{"error": CompileError JSON}`,
    written whole (a rename) so that whoever sees the file sees all of it."""
    part = job_dir / f"launch-{index}.answer.json.part"
    part.write_text(json.dumps(data))
    os.replace(part, job_dir / f"launch-{index}.answer.json")


WANTED = "wanted.json"      # the launches the page asked to see, the latest last (written by the server)


def next_launch(job_dir: Path, todo: list[int]) -> int:
    """Taken from `todo` (launch indices still to compile): the one the page asked to see last
    (Stream.want: a reader opened it while the others compile), else the first in launch order."""
    try:
        wanted = json.loads((job_dir / WANTED).read_text()[:4096])
    except (OSError, ValueError):
        wanted = []
    for i in reversed(wanted if isinstance(wanted, list) else []):
        if i in todo:
            todo.remove(i)
            return i
    return todo.pop(0)


def running(folder: Path, stage: str | None) -> None:
    """Triton's stage `stage` starts (None: no stage runs any more)."""
    if stage is None:
        (folder / "running").unlink(missing_ok=True)
    else:
        (folder / "running").write_text(stage)


def made(folder: Path, stage: str, output: str | bytes) -> None:
    (folder / f"stage.{stage}").write_bytes(output if isinstance(output, bytes) else output.encode())


# What is read back from one file of a job at most: stage texts are cut further before any
# parsing (inspectors.base.result.bound_text).
MAX_FILE_BYTES = 64 << 20
MAX_RECOVERED_BYTES = 96 << 20
MAX_LAUNCHES = 1024           # a training step's launches listed, streamed and recovered, at most
MAX_GRAPHS_NAMED = 64         # torch.compile graphs counted in a stopped job's message, at most


class JobDir:
    """A job's folder as the server holds it: created by the server under an unguessable name
    and opened once, before the job is sent; everything read back afterwards goes through that
    descriptor (`openat` with no link followed at any level). The job's code may rename its
    folder away and put a link to another student's job folder in its place: the descriptor
    still names the folder the server made, so what is read back is only ever the job's own.

        job = JobDir.create(worker_folder)      # worker_folder/job-3f9c0a1b2e4d5f60
        ... send str(job.path) to the worker ...
        kernels, stage = recover(job)
        job.close()
    """

    def __init__(self, path: Path, fd: int):
        self.path, self.fd = path, fd
        self.budget = MAX_RECOVERED_BYTES

    @classmethod
    def create(cls, parent: Path) -> "JobDir":
        path = parent / f"job-{secrets.token_hex(8)}"
        os.mkdir(path, 0o700)
        return cls(path, os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def read(self, *names: str, limit: int = MAX_FILE_BYTES) -> bytes:
        """The bytes of the regular file at `names` (folders, then the file) under the job's folder,
        within what is left of the job's whole read budget (MAX_RECOVERED_BYTES: 256 launches of
        seven 64 MB files must not be read into the server)."""
        if self.budget <= 0:
            raise OSError("the job's read budget is spent")
        data = read_at(self.fd, names, min(limit, self.budget))
        self.budget -= len(data)
        return data

    def entries(self, *names: str) -> list[str]:
        """The names in a folder under the job's folder (none followed through a link)."""
        fd = _open_dirs(self.fd, names)
        try:
            return os.listdir(fd)
        finally:
            os.close(fd)


def _open_dirs(dir_fd: int, names) -> int:
    """A new descriptor of the folder `names` under `dir_fd`, no level followed through a link."""
    fd = os.dup(dir_fd)
    for name in names:
        if not name or "/" in name or name in (".", ".."):
            os.close(fd)
            raise OSError(f"bad name {name!r}")
        try:
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def read_at(dir_fd: int, names, limit: int = MAX_FILE_BYTES, tail: bool = False) -> bytes:
    """The bytes (at most `limit`; with `tail`, the last ones) of the regular file `names[-1]` in
    the folders `names[:-1]` under `dir_fd`; OSError for a link at any level, a FIFO, a device
    or a missing file."""
    names = tuple(names)
    parent = _open_dirs(dir_fd, names[:-1])
    try:
        fd = os.open(names[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    finally:
        os.close(parent)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{names[-1]} is not a regular file")
        if tail:
            os.lseek(fd, max(0, os.fstat(fd).st_size - limit), os.SEEK_SET)
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_plain(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of `path` if it is a regular file reached without following a link in its last
    two levels (the file and its folder). For a job's files use JobDir.read: a folder held by
    path can be swapped for a link by the job."""
    parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        return read_at(parent, (path.name,), limit)
    finally:
        os.close(parent)


def _launch_number(name: str) -> int | None:
    head, _, n = name.partition("-")
    return int(n) if head == "launch" and n.isdigit() and len(n) < 6 else None


def recover(job: JobDir) -> tuple[tuple[KernelResult, ...], str | None]:
    """Every launch the job started, with the stages it made, and the stage (our name) that
    was running when the process died, or None if none was. Read only through the job's
    descriptor (see JobDir)."""
    kernels, running = [], None
    try:
        names = job.entries()
    except OSError:
        return (), None
    launches = sorted((n, name) for name in names if (n := _launch_number(name)) is not None)[:MAX_LAUNCHES]
    for _, folder in launches:
        def text(name: str) -> str:
            return job.read(folder, name).decode("utf-8", "replace")
        try:
            meta = loads_bounded(text("kernel.json"))
            backend = parse_target(meta["target"]).backend
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue
        texts = {"source": str(meta.get("source", ""))}
        for stage in stage_table.stages_for(backend):
            if stage.asm_key:
                try:
                    texts[stage.name] = text(f"stage.{stage.asm_key}")
                except OSError:
                    pass
        try:
            cubin = base64.b64encode(job.read(folder, "stage.cubin")).decode()
        except OSError:
            cubin = ""
        try:
            kernels.append(KernelResult(
                name=meta["name"], target=meta["target"], options=meta["options"],
                args=tuple(ArgSpec(**a) for a in meta["args"]), stages=texts, launch=meta["launch"],
                label=meta["label"], cubin=cubin))
        except (KeyError, TypeError, ValueError):
            continue
        try:
            running = stage_table.from_triton(text("running").strip())
        except OSError:
            pass
    return tuple(kernels), running


MAX_STREAMED_BYTES = 48 << 20      # a job's answers read while it runs, all together


@dataclass
class Progress:
    """A running job as the page sees it: the launches example() made (labels; empty until it
    has run), and those compiled so far (`done`: launch index -> when the server saw it done,
    in seconds since the job was sent). A done launch's result (stages; its analysis when a
    child made it) is read from the job folder when first asked for (`kernel(i)`, `first()`),
    while the job runs: the page reads one, a tool may read each. `example_s`: loading the
    file and running example(), by the worker's clock; `listed_s`: when the server saw the list."""
    labels: tuple[str, ...] = ()
    example_s: float | None = None
    listed_s: float | None = None
    done: dict[int, float] = field(default_factory=dict)
    _kernels: dict = field(default_factory=dict, repr=False, compare=False)
    _read: object = field(default=None, repr=False, compare=False)
    _want: object = field(default=None, repr=False, compare=False)

    @property
    def total(self) -> int:
        return len(self.labels)

    def kernel(self, i: int) -> KernelResult | None:
        """Launch i's result, None if it is not done or cannot be read (the final answer says why)."""
        if i not in self._kernels and i in self.done and self._read is not None:
            self._kernels[i] = self._read(i)
        return self._kernels.get(i)

    def want(self, i: int) -> None:
        """Launch i compiled next (once a core is free), if it is not done yet: a reader opened it."""
        if self._want is not None and i not in self.done:
            self._want(i)

    def first(self) -> KernelResult | None:
        """The earliest launch (in launch order) compiled so far that can be read."""
        return next((k for i in sorted(self.done) if (k := self.kernel(i)) is not None), None)


class Stream:
    """What a running job has finished, seen through its folder's descriptor (JobDir): the list
    of launches, and which launches are done (their answer files, written whole by a rename).
    An answer is read, once and bounded as the final result is, only when asked for, within a
    budget of its own (MAX_STREAMED_BYTES; the recovery after a crash keeps its own); one that
    cannot be read is None. `poll()` -> the Progress if something new came since the last
    poll, else None."""

    def __init__(self, job: JobDir, started: float | None = None):
        self.job, self.started = job, time.monotonic() if started is None else started
        self.progress = Progress(_read=self._kernel, _want=self._wanted)
        self.budget = MAX_STREAMED_BYTES
        self.wanted: list[int] = []

    def _file(self, name: str, limit: int) -> bytes:
        if self.budget <= 0:
            raise OSError("the stream's read budget is spent")
        data = read_at(self.job.fd, (name,), min(limit, self.budget))
        self.budget -= len(data)
        return data

    def _kernel(self, i: int) -> KernelResult | None:
        try:
            data = loads_bounded(self._file(f"launch-{i}.answer.json", MAX_FILE_BYTES))
            return bounded(CompileResult(kernels=(KernelResult.from_json(data["kernel"]),))).kernels[0]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None

    def _wanted(self, i: int) -> None:
        """WANTED rewritten with i last, through the folder's descriptor: a fresh file of a random
        name (never one the job put there, never through a link), then renamed over the old."""
        if not isinstance(i, int) or not 0 <= i < self.progress.total or (self.wanted and self.wanted[-1] == i):
            return
        self.wanted = [w for w in self.wanted if w != i][-15:] + [i]
        part = f".wanted-{secrets.token_hex(6)}"
        try:
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=self.job.fd)
            try:
                os.write(fd, json.dumps(self.wanted).encode())
            finally:
                os.close(fd)
            os.replace(part, WANTED, src_dir_fd=self.job.fd, dst_dir_fd=self.job.fd)
        except OSError:
            pass                           # the job is over (its folder closed) or refused it: nothing to ask

    def _exists(self, name: str) -> bool:
        try:
            os.stat(name, dir_fd=self.job.fd, follow_symlinks=False)
            return True
        except OSError:
            return False

    def poll(self) -> Progress | None:
        """What is new, asked by name (the list, then each launch not done yet): never a listing
        of the folder, whose files the job may multiply (48,000 cost every poll a walk)."""
        new, now, progress = False, time.monotonic() - self.started, self.progress
        if not progress.labels and self._exists("launches.json"):
            try:
                meta = loads_bounded(self._file("launches.json", 1 << 20))
                labels = tuple(bound_text(str(x), 1000) for x in meta["labels"][:MAX_LAUNCHES])
                example_s = meta.get("example_s")
                progress.example_s = float(example_s) if isinstance(example_s, (int, float)) else None
                progress.labels, progress.listed_s, new = labels, now, True
            except (OSError, ValueError, KeyError, TypeError, RecursionError):
                pass
        for n in range(progress.total):
            if n not in progress.done and self._exists(f"launch-{n}.answer.json"):
                progress.done[n], new = now, True
        return progress if new else None


def crashed(job: JobDir, how: str, filename: str, triton_version: str, seconds: float) -> CompileResult:
    """The result of a job whose worker died (`how`: its exit, in words): the stages made before
    the crash, read back from the folder, with the crash as the last launch's error."""
    kernels, stage = recover(job)
    label = stage_table.BY_NAME[stage].label if stage in stage_table.BY_NAME else stage
    where = f" while making {label}" if stage else " while running the file"
    error = CompileError("crash", f"the compile worker died ({how}){where}; it was restarted",
                         filename, None, output_tail(job), stage=stage)
    if kernels and stage:      # the stages made before the crash, the last launch's error in place
        kernels = kernels[:-1] + (replace(kernels[-1], error=error),)
    return bounded(CompileResult(kernels=kernels if stage else (), error=error,
                                 triton_version=triton_version, seconds=seconds))


def in_progress(job: JobDir) -> str:
    """What a job that ran past its limit was doing, in words ("" when it had begun no launch:
    example() itself was running): the launch whose stage was running, else the last one begun."""
    kernels, running = recover(job)
    if not kernels:
        graphs, which = graphs_begun(job.fd, MAX_GRAPHS_NAMED)
        if not graphs:
            return ""
        more = "+" if graphs == MAX_GRAPHS_NAMED else ""
        return (f"example() was running: torch.compile had begun {graphs}{more} graph(s), the last a {which} "
                f"graph (Dynamo, AOTAutograd and Inductor lower each before its kernels are compiled)")
    k = kernels[-1]
    if running:
        label = stage_table.BY_NAME[running].label if running in stage_table.BY_NAME else running
        return f"launch {k.launch + 1} ({k.name}) was stuck making its {label}"
    return (f"it had begun {len(kernels)} launch(es), the last launch {k.launch + 1} ({k.name}), and no "
            f"compiler stage was running")


def output_tail(job: JobDir, limit: int = 8000) -> str:
    """The end of what the job printed, then of what the compiler printed while launch N compiled
    (`diagnostics-N.txt`: an LLVM abort's message); only the job's own regular files."""
    parts = []
    try:
        diags = sorted(n for n in os.listdir(job.fd) if n.startswith("diagnostics-") and n.endswith(".txt"))[:64]
    except OSError:
        diags = []
    for name in ("output.txt", *diags):
        try:
            parts.append(read_at(job.fd, (name,), 4 * limit, tail=True).decode("utf-8", "replace")[-limit:])
        except OSError:
            pass
    return bound_text("\n".join(p for p in parts if p)[-limit:], limit, 2000)


def streamer(job: JobDir, on_progress):
    """What await_reply calls while the job runs: the launches done since its last call passed
    to `on_progress` (None: nothing streamed). A callback that raises is not called again (the
    page that asked went away); the job goes on."""
    if on_progress is None:
        return None
    stream = Stream(job)

    def tick() -> None:
        nonlocal on_progress
        progress = stream.poll() if on_progress is not None else None
        if progress is not None:
            try:
                on_progress(progress)
            except BaseException:  # noqa: BLE001 - the caller's own (a page's rerun): the job goes on
                on_progress = None
    return tick
