"""Loading the user's file in the worker: the file run as a fresh module, where its errors
are, and where each launched kernel is written (the user's file, a file beside it, an
installed library)."""
from __future__ import annotations

import sys
import traceback
from pathlib import Path

from inspectors.base.errors import CompileError
from inspectors.base.result import MAX_PROJECT_BYTES, MAX_PROJECT_FILES, PROJECT_FILE_RE

# A kernel's own file past this is cut (the largest library file seen, a flash-attention, ~100 KB)
MAX_HOME_BYTES = 4 << 20


class JobError(Exception):
    def __init__(self, error: CompileError):
        self.error = error


def user_line_from_tb(tb, path: str) -> int | None:
    line = None
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename == path:
            line = lineno
    return line


def compilation_error_line(exc, file_text: str) -> int | None:
    """CompilationError carries the failing function's source (`exc.src`, starting at
    its `def` line) and an AST node whose lineno is relative to it."""
    node, src = getattr(exc, "node", None), getattr(exc, "src", None)
    if node is None or not src or not hasattr(node, "lineno"):
        return None
    first = src.splitlines()[0]
    lines = file_text.splitlines()
    for i, text in enumerate(lines):
        if text.strip() == first.strip():
            return i + node.lineno
    return None


def load_module(path: Path, text: str, name: str, package: str = ""):
    """Execute the kernel file as a fresh module (never cached between jobs).

    The code is compiled under its bare file name and run with the job folder as the
    working directory, so `inspect` still finds the source while every stage names
    `vector_add.py` rather than a scratch path: `loc("vector_add.py":8:16)`,
    `.file 1 "vector_add.py"`. Two compiles of the same file then differ only where
    the compiler's output does."""
    import linecache
    import types
    # linecache keys on the bare name; an edit of the same size within the same second
    # would otherwise hand Triton the previous job's lines.
    linecache.cache.pop(path.name, None)
    try:
        code = compile(text, path.name, "exec")
    except SyntaxError as e:
        raise JobError(CompileError("syntax", f"{e.msg}", path.name, e.lineno,
                                     "".join(traceback.format_exception_only(e)))) from None
    module = types.ModuleType(name)
    module.__file__ = path.name
    if package:                # `from .utils import x` in a file of a package
        module.__package__ = package
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException as e:  # noqa: BLE001 - user code may raise anything, even SystemExit
        raise JobError(CompileError("runtime", f"importing the file raised {type(e).__name__}: {e}",
                                     path.name, user_line_from_tb(e.__traceback__, path.name),
                                     traceback.format_exc())) from None
    return module


def _reason(exc):
    """The innermost cause of a front-end error that carries no message of its own (Triton's
    CompilationError for a Gluon or Triton op that raised: the reason is the chained error)."""
    seen = set()
    while exc is not None and id(exc) not in seen and not getattr(exc, "error_message", None):
        seen.add(id(exc))
        cause = exc.__cause__ or exc.__context__
        if cause is None:
            return exc
        exc = cause
    return exc


def first_line(exc) -> str:
    """The compiler's message, whole: its error_message, else the error it was raised from
    (`ValueError: invalid axis 1 for a 1-D tensor`); never the caret line of the excerpt."""
    msg = getattr(exc, "error_message", None)
    if not msg:
        inner = _reason(exc)
        if inner is not exc and inner is not None:
            own = getattr(inner, "error_message", None)       # a nested front-end error: its message as it is
            msg = own or (f"{type(inner).__name__}: {inner}" if str(inner).strip() else type(inner).__name__)
    msg = (msg or str(exc)).strip()
    if not msg:
        return type(exc).__name__
    lines = [ln for ln in msg.splitlines() if ln.strip() and ln.strip() != "^"]
    return "\n".join(lines[-6:]) if lines else type(exc).__name__


def detail_of(exc) -> str:
    """The front end's excerpt with its caret, then every error it was raised from."""
    parts, seen, cur = [str(exc)], {id(exc)}, exc.__cause__ or exc.__context__
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        parts.append(f"{type(cur).__name__}: {cur}")
        cur = cur.__cause__ or cur.__context__
    return "\n\nraised from ".join(parts)


def write_project(job_dir: Path, files: dict) -> None:
    """The other files of the user's project (relative path -> text: its package, the files
    beside it, the workspace's other files), written into the job folder, which is on
    sys.path for the job: sibling and package-relative imports work, in the sandbox too (the
    job sees these copies, nothing else of the project)."""
    if len(files) > MAX_PROJECT_FILES:
        raise JobError(CompileError("usage", f"the project has {len(files)} files; at most {MAX_PROJECT_FILES}"))
    total = 0
    for rel, text in files.items():
        if not isinstance(rel, str) or not isinstance(text, str) or not PROJECT_FILE_RE.match(rel) or \
                any(part in (".", "..") for part in rel.split("/")):
            raise JobError(CompileError("usage", f"bad project file name {str(rel)[:100]!r}"))
        total += len(text)
        if total > MAX_PROJECT_BYTES:
            raise JobError(CompileError("usage", f"the project's files are over {MAX_PROJECT_BYTES >> 20} MB"))
        target = job_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def home_of(fn, filename: str, job_dir: Path | None = None) -> tuple[str, str] | None:
    """Where the @triton.jit function `fn` is written, when not in the user's file (named
    `filename`: it is compiled under that bare name): (its path as the compiler's line info
    spells it, its text), e.g. ("/.../liger_kernel/ops/rms_norm.py", "..."). None for the
    user's own file, or a file that cannot be read."""
    code = getattr(getattr(fn, "fn", None), "__code__", None)
    path = getattr(code, "co_filename", "") or ""
    if not path or path == filename or path.startswith("<"):
        return None
    if job_dir is not None and path.startswith(f"{job_dir}/"):
        shown = path[len(str(job_dir)) + 1:]     # a file of the project: its path in the project
    else:
        shown = path
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_HOME_BYTES + 1)
    except OSError:
        return None
    text = data[:MAX_HOME_BYTES].decode("utf-8", "replace")
    return shown, text


def forget_project(new: set, job_dir: Path, modname: str) -> None:
    """Drop the modules a job imported from its own folder (the user's file, the project's
    files): the next job's files may differ. An installed library it imported stays, as torch
    does: importing some again fails (a torch library registered twice), and the next job
    that calls it finds it warm."""
    inside = f"{job_dir}/"
    for name in new:
        module = sys.modules.get(name)
        file = _own(module, "__file__")
        paths = _own(module, "__path__")
        try:
            paths = [str(p) for p in paths] if isinstance(paths, (list, tuple)) else []
        except Exception:  # noqa: BLE001 - a path entry of the user's own making
            paths = []
        if name == modname or (isinstance(file, str) and file.startswith(inside)) or \
                any(p.startswith(inside) for p in paths):
            sys.modules.pop(name, None)


def _own(module, name: str):
    """`module.name` as the module itself holds it, without calling the module's `__getattr__`:
    a lazy module (transformers' `_LazyModule`) imports a submodule on an attribute it lacks, and
    that import may fail (torchvision missing) or run anything. None for anything else in
    sys.modules (an object a library put there)."""
    try:
        return object.__getattribute__(module, "__dict__").get(name)
    except Exception:  # noqa: BLE001 - not a module, or a __dict__ of its own making
        return None


class CallsOf:
    """The functions `fn` itself calls while the block runs (names, first 12, in order), to say
    what an example() that launched nothing did: "it called rms_norm, torch.ones". A profile
    hook on this thread; calls deeper down are not looked at."""

    def __init__(self, fn, limit: int = 12):
        self.code = getattr(fn, "__code__", None)
        self.limit = limit
        self.names: list[str] = []

    def _note(self, name: str) -> None:
        if name.rsplit(".", 1)[-1].startswith("__"):
            return               # torch's __torch_function__ modes, operators' dunders: not what the file called
        if name not in self.names and len(self.names) < self.limit:
            self.names.append(name)

    def _hook(self, frame, event, arg):
        if event == "call" and frame.f_back is not None and frame.f_back.f_code is self.code:
            self._note(frame.f_code.co_qualname if hasattr(frame.f_code, "co_qualname") else frame.f_code.co_name)
        elif event == "c_call" and frame.f_code is self.code:
            module = getattr(arg, "__module__", None) or ""
            self._note(f"{module.split('.')[0]}.{arg.__name__}" if module else arg.__name__)

    def __enter__(self):
        self._saved = sys.getprofile()
        if self.code is not None and self._saved is None:
            sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._saved)
        return False
