"""A class server of N Streamlit processes behind nginx (`make serve-class REPLICAS=N`).

Starts N `streamlit run app/main.py` processes on 127.0.0.1 (ports `--first-port`, +1, ...),
each with its share of the machine's compile workers (TLENS_WORKERS, or the default for this
machine, split across them: 16 and 4 replicas = 4 each), all on the same workspace folder,
result cache and Triton cache (the environment's TLENS_* folders, shared on this disk). Then
nginx with deploy/nginx.conf.template (sticky sessions by a cookie, websockets forwarded) on
`--address:--port`, and opens one page on each process so that its workers start importing
torch and Triton before the students arrive (and compiles one kernel that the class does not
ask for, so that each process has imported what drawing a result needs). Runs until interrupted; stops every process it
started. Logs and nginx's files: `--state-dir` (replica-N.log, error.log, nginx.conf).

    .venv/bin/python deploy/serve_class.py --replicas 4 [--port 8501] [--address 127.0.0.1]
        [--first-port 8601 | 0: any free ports] [--state-dir DIR] [--nginx /usr/sbin/nginx]

nginx: `apt-get install nginx-light` (Debian, Ubuntu), or TLENS_NGINX=/path/to/nginx (not NGINX:
nginx itself reads that variable as a list of sockets it inherited).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from inspectors.base import settings as settings_mod  # noqa: E402

TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
WARM_TOKEN = "tlens-warm-up-page-of-the-class-server-0000"      # 43 characters: one folder for every start
# The warm-up page compiles and shows a kernel: the process imports what drawing results needs
# (a fifth of a class's first minute otherwise), and the shared result cache makes it one
# compile for all the processes.
WARM_QUERY = "kernel=vector_add&target=cuda%3A90&num_warps=1&run=1"


def split_workers(total: int, replicas: int) -> list[int]:
    """The machine's compile workers over the processes, at least one each: 16 over 3 = 6, 5, 5."""
    return [max(1, total // replicas + (1 if i < total % replicas else 0)) for i in range(replicas)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_config(prefix: Path, listen: str, ports: list[int]) -> str:
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=0;" for p in ports)
    return (TEMPLATE.read_text().replace("@PREFIX@", str(prefix)).replace("@LISTEN@", listen)
            .replace("@SERVERS@", servers))


def find_nginx(given: str | None) -> str:
    for candidate in (given, settings_mod.load().nginx, shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and Path(candidate).is_file():
            return candidate
    raise SystemExit("nginx not found: install it (apt-get install nginx-light) or name it with --nginx / TLENS_NGINX=")


def wait_healthy(url: str, what: str, procs: list[subprocess.Popen], seconds: float = 180) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise SystemExit(f"{what}: a process it needs exited with {p.returncode} (see its log)")
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"{what} did not answer {url}/_stcore/health in {seconds:.0f} s")


def open_page(port: int, timeout: float = 180) -> None:
    """One script run of the page on this process: its compile workers start (app/main.py)
    and it draws a compiled kernel once."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect
    msg = BackMsg()
    msg.rerun_script.query_string = WARM_QUERY
    with connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"], open_timeout=timeout,
                 additional_headers={"Cookie": f"tlens_token={WARM_TOKEN}"}, max_size=None) as ws:
        ws.send(msg.SerializeToString())
        deadline = time.time() + timeout
        while time.time() < deadline:
            if ForwardMsg.FromString(ws.recv(timeout=deadline - time.time())).WhichOneof("type") == "script_finished":
                return


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--port", type=int, default=8501, help="nginx's port")
    ap.add_argument("--address", default="127.0.0.1", help="nginx's address (the processes: 127.0.0.1 only)")
    ap.add_argument("--first-port", type=int, default=None, help="the first process's port (default: port + 100; "
                                                                 "0: any free ports)")
    ap.add_argument("--state-dir", type=Path, default=None)
    ap.add_argument("--nginx", default=None)
    args = ap.parse_args(argv)
    if args.replicas < 1:
        raise SystemExit("--replicas must be 1 or more")
    nginx = find_nginx(args.nginx)
    state = (args.state_dir or Path.home() / ".cache" / "triton-lens" / f"serve-class-{args.port}").resolve()
    (state / "tmp").mkdir(parents=True, exist_ok=True)
    first = args.port + 100 if args.first_port is None else args.first_port
    ports = [free_port() if first == 0 else first + i for i in range(args.replicas)]
    total = settings_mod.load().workers
    shares = split_workers(total, args.replicas)
    # the students' own sandboxes: each replica keeps those of the students the proxy sends it, up
    # to the machine's cap (the hash does not share a class evenly) and while the machine has
    # memory to spare (inspectors/compile/student_sandboxes.py, memory_room)
    own = [settings_mod.load().own_sandboxes] * args.replicas
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if not settings_mod.load().user_header:
        env.setdefault("TLENS_CLASS", "1")

    procs: list[subprocess.Popen] = []

    def stop(*_):
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    try:
        for i, (port, workers, owns) in enumerate(zip(ports, shares, own)):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.port", str(port),
                 "--server.address", "127.0.0.1", "--server.headless", "true"],
                cwd=ROOT, env={**env, "TLENS_WORKERS": str(workers), "TLENS_OWN_SANDBOXES": str(max(1, owns))},
                stdout=open(state / f"replica-{i}.log", "wb"), stderr=subprocess.STDOUT))
        for i, port in enumerate(ports):
            wait_healthy(f"http://127.0.0.1:{port}", f"replica {i} (log: {state}/replica-{i}.log)", procs)
        conf = state / "nginx.conf"
        conf.write_text(nginx_config(state, f"{args.address}:{args.port}", ports))
        procs.append(subprocess.Popen([nginx, "-p", str(state), "-c", str(conf), "-e", str(state / "error.log"),
                                       "-g", "daemon off;"], cwd=state,
                                      env={k: v for k, v in os.environ.items() if k != "NGINX"}))
        wait_healthy(f"http://127.0.0.1:{args.port}", f"nginx (log: {state}/error.log)", procs)
        warmers = [threading.Thread(target=open_page, args=(port,)) for port in ports]
        for t in warmers:
            t.start()
        for t in warmers:
            t.join()
        print(f"Triton Lens class server: http://{args.address}:{args.port} -> {args.replicas} processes on "
              f"127.0.0.1:{','.join(map(str, ports))}, compile workers {'+'.join(map(str, shares))}; "
              f"logs in {state}", flush=True)
        while all(p.poll() is None for p in procs):
            time.sleep(1)
        dead = next(p for p in procs if p.poll() is not None)
        print(f"{dead.args[0]} exited with {dead.returncode}: stopping the class server", file=sys.stderr)
        stop()
    except BaseException:
        for p in procs:
            if p.poll() is None:
                p.kill()
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
