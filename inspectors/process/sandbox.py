"""The sandbox every process that runs a user's file is started in: bubblewrap (`bwrap`), as
Compiler Explorer runs its compilers in nsjail. Unprivileged: it needs user namespaces, which
stock Debian 12 and Ubuntu 22.04 allow (Ubuntu 24.04 needs an AppArmor profile for bwrap, its
package ships one) and so does this container.

    jail = Jail(writable=(scratch,), env={"TRITON_CACHE_DIR": f"{scratch}/triton"})
    argv = wrap([sys.executable, "-m", "inspectors.compile.worker_main"], jail)
    subprocess.Popen(argv, preexec_fn=jail.limits.preexec(cgroup), ...)

Inside (`wrap`):
* **Files:** the system's `/usr` (and the `/bin`, `/lib*` links), the Python installation and
  its packages, and this repository's `inspectors/` and `kernels/`, all read-only; a read-write
  bind of the job's own scratch folder(s); private, size-limited tmpfs on `/tmp` and `/dev/shm`;
  a fresh `/dev` (null, zero, random, tty) and a `/proc` of its own PID space; `/etc` holds only
  the loader's cache and a two-line passwd. The root, `/etc` and `/dev` are read-only: every
  place a job may write has a size. No home, no workspace, no server configuration, no
  shared cache is visible (the trusted Triton cache is given read-only where a caller asks).
* **Environment:** cleared; only what the caller passes (and PATH, HOME, LANG, USER) is set.
* **Namespaces:** user (uid 65534, no capabilities, no further user namespaces), PID, network
  (loopback only: no TCP/UDP to anything, abstract UNIX sockets are per network namespace),
  IPC, UTS, cgroup. `--die-with-parent`: when the worker's bwrap is killed, its PID space ends
  and every process the job started with it, `setsid` or double fork included.
* **Limits** (`Limits.preexec`, set before bwrap starts, inherited and not raisable without
  CAP_SYS_RESOURCE): open files, one file's size, no core files, CPU seconds, address space on
  machines without a GPU; processes and memory through a cgroup of its own where the server may
  make one (root with a writable cgroup file system), else RLIMIT_NPROC (which Linux does not
  apply to root).
* **GPU** (`gpu=True`): `/dev/nvidia*` passed in, the driver's libraries and `/sys` read-only.

What the host must trust is written in the README ("Serving a class: what a student's code can
and cannot do"). `python -m inspectors.process.sandbox` says whether the sandbox works here.
"""
from __future__ import annotations

import dataclasses
import functools
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from inspectors.process.cgroups import Cgroup, cgroup_root, read_text
from inspectors.base import settings as settings_mod

REPO_ROOT = Path(__file__).resolve().parents[2]
SANDBOX_UID = 65534
# What of the repository a worker needs: the code (read-only). Never the repo root: the default
# workspace, results and a teacher's files may live beside it.
REPO_PARTS = ("inspectors", "kernels")
# The variables a worker may inherit from the server: what CUDA and Triton need to find a GPU and
# the wheel's tools. Everything else (secrets, tokens, the proxy's settings) stays outside.
INHERITED_ENV = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "TRITON_PTXAS_PATH",
                 "DISABLE_PTXAS_OPT", "TZ")


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-sandbox resource limits (see the module docstring)."""
    open_files: int = 1024
    file_mb: int = 512              # one file, anywhere it may write
    cpu_s: int = 600                # CPU seconds of each process (a job also has its wall-clock limit)
    memory_mb: int = 8192           # address space (no GPU) or cgroup memory
    processes: int = 512            # tasks (threads count: torch starts one per core)
    scratch_mb: int = 1024          # the job's scratch folder (a tmpfs of this size where the server may mount one)
    tmp_mb: int = 256               # the private /tmp (a tmpfs)
    shm_mb: int = 64                # the private /dev/shm (a tmpfs)

    def preexec(self, cgroup: Cgroup | None = None, gpu: bool = False):
        """A function for Popen's preexec_fn: runs in the child before bwrap is executed."""
        def apply():
            if cgroup is not None:
                cgroup.attach(os.getpid())
            _setrlimit(resource.RLIMIT_NOFILE, self.open_files)
            _setrlimit(resource.RLIMIT_FSIZE, self.file_mb << 20)
            _setrlimit(resource.RLIMIT_CORE, 0)
            _setrlimit(resource.RLIMIT_CPU, self.cpu_s)
            if not gpu:   # CUDA maps huge virtual ranges; there the cgroup bounds memory
                _setrlimit(resource.RLIMIT_AS, self.memory_mb << 20)
            if os.geteuid() != 0:   # counted per user: the server's own processes too
                running = sum(1 for p in os.listdir("/proc") if p.isdigit())
                _setrlimit(resource.RLIMIT_NPROC, running + self.processes)
        return apply


def _setrlimit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


@dataclasses.dataclass(frozen=True)
class Jail:
    """What one sandboxed process may see. Paths are bound at the same path inside."""
    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    gpu: bool = False
    cwd: Path | None = None
    limits: Limits = Limits()
    python: str = sys.executable


def bwrap_path() -> str | None:
    return settings_mod.load().bwrap or shutil.which("bwrap")


@functools.lru_cache(maxsize=8)
def python_paths(python: str) -> tuple[Path, ...]:
    """The folders an interpreter needs, read-only: its installation, its virtualenv and every
    sys.path entry (site-packages), less this repository (whose code is bound part by part)."""
    if python == sys.executable:
        entries = [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]
    else:
        out = subprocess.run([python, "-c", "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, "
                              "sys.exec_prefix, *sys.path]))"], capture_output=True, text=True, timeout=60,
                             cwd="/", env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        import json
        entries = json.loads(out.stdout)
    exe = Path(python)
    entries += [str(exe.parent), str(exe.resolve().parent.parent)]
    paths = set()
    repo = REPO_ROOT.resolve()
    for e in entries:
        if not e or not Path(e).is_dir():
            continue
        for p in {Path(e).resolve(), Path(os.path.abspath(e))}:
            if repo.is_relative_to(p) or p == Path.home().resolve():
                continue            # an ancestor of the repo (or the home) would show the workspace
            if p.is_relative_to(repo) and not _is_venv(p, repo):
                continue            # the repo's code is bound part by part (REPO_PARTS)
            paths.add(p)
    return tuple(_outermost(paths))


def _is_venv(p: Path, repo: Path) -> bool:
    """A virtualenv inside the repository (.venv, .venv-oldest): its files may be bound."""
    rel = p.relative_to(repo).parts
    return bool(rel) and (repo / rel[0] / "pyvenv.cfg").exists()


def _outermost(paths: set[Path]) -> list[Path]:
    out: list[Path] = []
    for p in sorted(paths, key=lambda q: len(q.parts)):
        if not any(p.is_relative_to(o) for o in out):
            out.append(p)
    return out


def _system_binds() -> list[str]:
    """/usr read-only; /bin, /lib, /lib64, /sbin as the links (merged /usr) or binds they are."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"):
        if os.path.exists(etc):
            args += ["--ro-bind", etc, etc]
    return args


def gpu_devices() -> list[str]:
    """The NVIDIA device files of this machine (/dev/nvidia0, /dev/nvidiactl, /dev/nvidia-uvm...)."""
    return [d for d in sorted(glob.glob("/dev/nvidia*")) if os.path.exists(d) and not os.path.isdir(d)]


def _gpu_binds() -> list[str]:
    args = []
    for dev in gpu_devices() + sorted(glob.glob("/dev/dri/*")):
        if os.path.exists(dev) and not os.path.isdir(dev):
            args += ["--dev-bind", dev, dev]
    if os.path.isdir("/dev/nvidia-caps"):
        args += ["--dev-bind", "/dev/nvidia-caps", "/dev/nvidia-caps"]
    # /usr (and so /usr/local/cuda, /usr/local/nvidia with the driver's libraries) is bound
    # already; CUDA reads the PCI topology under /sys.
    args += ["--ro-bind", "/sys", "/sys"]
    return args


def wrap(argv: Sequence[str], jail: Jail, passwd_dir: Path | None = None) -> list[str]:
    """The bwrap command line that runs `argv` in `jail`."""
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) is not installed")
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--cap-drop", "ALL",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox",
            "--proc", "/proc", "--dev", "/dev", "--size", str(jail.limits.shm_mb << 20), "--tmpfs", "/dev/shm",
            "--size", str(jail.limits.tmp_mb << 20), "--tmpfs", "/tmp", *_system_binds()]
    if passwd_dir is not None:
        args += ["--ro-bind", str(passwd_dir / "passwd"), "/etc/passwd", "--ro-bind", str(passwd_dir / "group"),
                 "/etc/group"]
    for p in python_paths(jail.python):
        args += ["--ro-bind", str(p), str(p)]
    for part in REPO_PARTS:
        args += ["--ro-bind", str(REPO_ROOT / part), str(REPO_ROOT / part)]
    for p in jail.readable:
        args += ["--ro-bind", str(p), str(p)]
    for p in jail.writable:
        args += ["--bind", str(p), str(p)]
    if jail.gpu:
        args += _gpu_binds()
    home = str(jail.writable[0] / "home") if jail.writable else "/tmp"
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "USER": "sandbox",
           "LOGNAME": "sandbox", "TMPDIR": "/tmp", "PYTHONPATH": str(REPO_ROOT), "PYTHONDONTWRITEBYTECODE": "1",
           **{k: os.environ[k] for k in INHERITED_ENV if k in os.environ}, **jail.env}
    args += ["--clearenv"]
    for k, v in env.items():
        args += ["--setenv", k, str(v)]
    if jail.writable:
        args += ["--dir", home]
    # Nothing else writable: bwrap's root, /etc and /dev are tmpfs without a size; read-only,
    # they hold nothing a job could fill (its writable places: the sized tmpfs above, its scratch).
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--chdir", str(jail.cwd or (jail.writable[0] if jail.writable else "/tmp")), "--"]
    return args + list(argv)


# The environment bwrap itself is started with. Not the server's: with a PID namespace, bwrap's
# own process is PID 1 inside the sandbox, and /proc/1/environ would show the server's variables
# to the job (--clearenv cleans only the environment of the command it runs).
BWRAP_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def popen_env(base: Mapping[str, str] | None = None) -> dict | None:
    """The `env=` for Popen of a command that `tool_argv` may have wrapped: BWRAP_ENV when
    sandboxed, else `base` (None: the caller's own)."""
    return dict(BWRAP_ENV) if enabled() else (dict(base) if base is not None else None)


def enabled() -> bool:
    """Whether this server runs users' code (and the tools that read what it made) sandboxed."""
    from inspectors.base import settings
    return settings.load().sandbox


def server_problem(settings) -> str | None:
    """Why this server must not start, or None: a class server (one workspace per student)
    runs students' code only sandboxed, unless TLENS_UNSANDBOXED_CLASS=1 says the room is trusted."""
    if settings.sandbox:
        problem = check()
        return None if problem is None else (
            f"Users' code is to run in a sandbox (TLENS_SANDBOX=1{', the default of a class server' if settings.class_mode else ''}), "
            f"and the sandbox does not work on this machine: {problem}. Run `python -m inspectors.process.sandbox` to check.")
    if settings.class_mode and not settings.unsandboxed_class:
        return ("This is a class server (TLENS_CLASS=1 or TLENS_USER_HEADER): students' code must run sandboxed, but "
                "TLENS_SANDBOX=0. Remove TLENS_SANDBOX=0, or, for a room where every student is trusted with the "
                "server's own rights, set TLENS_UNSANDBOXED_CLASS=1.")
    return None


def tool_argv(argv: Sequence[str], folder: Path) -> list[str]:
    """`argv` (ptxas, nvdisasm, cuobjdump on a file in `folder`) as it runs here: in a sandbox
    of its own when the server sandboxes users' code, since the cubin or PTX it reads came
    out of one; `folder` is the only place it may write. Unchanged otherwise."""
    if not enabled():
        return list(argv)
    limits = Limits(memory_mb=8192, cpu_s=300)
    jail = Jail(writable=(folder,), readable=(Path(argv[0]).resolve().parent,), cwd=folder, limits=limits)
    prlimit = shutil.which("prlimit")     # util-linux: the limits a Popen's preexec_fn would set
    if prlimit and prlimit.startswith("/usr/"):
        argv = [prlimit, f"--as={limits.memory_mb << 20}", f"--cpu={limits.cpu_s}", f"--fsize={limits.file_mb << 20}",
                "--core=0", f"--nofile={limits.open_files}", "--", *argv]
    return wrap(argv, jail)


def write_passwd(folder: Path) -> Path:
    """/etc/passwd and /etc/group naming only the sandbox user (getpass, pwd and torch ask)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "passwd").write_text(f"sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:/tmp:/usr/sbin/nologin\n")
    (folder / "group").write_text(f"sandbox:x:{SANDBOX_UID}:\n")
    return folder


def describe_exit(code: int | None) -> str:
    """A worker's end in words. bwrap passes on its child's death by a signal as 128 + the
    signal's number (139: SIGSEGV), as a shell does."""
    import signal
    if code is None:
        return "no answer"
    sig = -code if code < 0 else code - 128 if 128 < code < 128 + 65 else 0
    if sig:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name}" if code < 0 else f"exit status {code}: killed by {name}"
    return f"exit status {code}"


class SandboxError(RuntimeError):
    pass


# -- does it work here? ------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def check() -> str | None:
    """None when a sandboxed Python starts and cannot reach the network; else why not, in words
    a server's operator can act on."""
    bwrap = bwrap_path()
    if bwrap is None:
        return ("bubblewrap (bwrap) is not installed: `apt-get install bubblewrap` (Debian/Ubuntu), or set "
                "TLENS_BWRAP to its path")
    with tempfile.TemporaryDirectory(prefix="tlens-sbx-check-") as d:
        scratch = Path(d)
        probe = ("import socket, os\n"
                 "s = socket.socket()\n"
                 "s.settimeout(1)\n"
                 "try:\n    s.connect(('127.0.0.1', 9)); print('net')\n"
                 "except OSError: print('nonet')\n"
                 "print(os.getuid(), len([p for p in os.listdir('/proc') if p.isdigit()]))\n")
        try:
            argv = wrap([sys.executable, "-c", probe], Jail(writable=(scratch,)), write_passwd(scratch / "etc"))
            out = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=BWRAP_ENV)
        except (OSError, subprocess.SubprocessError, SandboxError) as e:
            return f"bubblewrap could not be run: {e}"
        if out.returncode != 0:
            return (f"bubblewrap failed ({out.stderr.strip()[-300:]}). It needs unprivileged user namespaces: "
                    "`sysctl kernel.unprivileged_userns_clone=1` (Debian), or on Ubuntu 24.04 the AppArmor profile "
                    "for bwrap (`apt-get install bubblewrap` ships it) / `sysctl "
                    "kernel.apparmor_restrict_unprivileged_userns=0`; in a container, a seccomp profile that "
                    "allows unshare/clone with namespaces")
        lines = out.stdout.split()
        if not lines or lines[0] != "nonet":
            return "the sandbox can reach the network (the network namespace did not take effect)"
    return None


def describe() -> dict:
    """What the sandbox enforces on this host (for the status panel and the README's figures)."""
    return {"bwrap": bwrap_path(), "works": check() is None, "problem": check(),
            "cgroups": [f"{kind}:{p}" for p, kind in cgroup_root()],
            "cpu_share": "cgroup cpu share per sandbox" if any(
                k == "cpu" or (k == "v2" and "cpu" in read_text(p / "cgroup.subtree_control").split())
                for p, k in cgroup_root()) else "none (no writable cpu cgroup): nice 19 for long jobs only",
            "process_limit": "cgroup pids.max" if any(k in ("pids", "v2") for _, k in cgroup_root())
            else ("RLIMIT_NPROC" if os.geteuid() != 0 else "none (root without a writable pids cgroup)")}


def main() -> int:
    """Exit status 0 when this server may start (the sandbox works, or is not asked for)."""
    from inspectors.base import settings
    s = settings.load()
    problem = server_problem(s) if "--server" in sys.argv else check()
    if problem:
        print(f"sandbox: NOT available: {problem}", file=sys.stderr)
        return 1
    if s.class_mode and not s.sandbox:
        print("sandbox: OFF for a class server (TLENS_UNSANDBOXED_CLASS=1): every student's code runs with this "
              "server's rights", file=sys.stderr)
        return 0
    info = describe()
    print(f"sandbox: works (bubblewrap at {info['bwrap']}; processes limited by {info['process_limit']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
