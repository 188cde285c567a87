"""The server's SASS work in a process of its own: disassembly, the SASS line map and summary,
and the live registers, bounded in time and memory, sandboxed when the server sandboxes.

A cubin comes out of a user's job: nvdisasm on it may print tens of megabytes, and parsing
them takes seconds. The Streamlit process does none of it: `run` starts

    python -m inspectors.compile.sass_job        (no torch, no triton: nvdisasm is found on disk)

in bubblewrap when the server sandboxes users' code (sandbox.enabled()), else as a plain
subprocess, with RLIMIT_AS and RLIMIT_CPU (and a cgroup where the server may make one) and a
wall-clock limit, and reads its one-line reply at most MAX_REPLY_BYTES. The request (stdin):

    {"want": "sass", "cubin": <base64>}                      -> the disassembly
    {"want": "sass", "sass": <text>, "ptx": ..., "filename": ...}
                                                             -> its line map and summary
    {"want": "pressure", "cubin": ..., "sass": ..., "ptx": ..., "filename": ...}
                                                             -> live registers (liveregs.Pressure)

The reply (stdout, one line): {"reply": <Reply without `sass`, as codec.to_plain makes it>,
"sass": <text>}; the server decodes `reply` with codec.from_plain against Reply's
annotations, and takes `sass` only as a string no longer than MAX_SASS_BYTES. A cubin over
MAX_CUBIN_BYTES is refused before anything starts.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from inspectors.base import codec
from inspectors.process import sandbox
from inspectors.base.result import CUBIN_TOO_LARGE, MAX_CUBIN_BYTES, cubin_too_large
from inspectors.explain.insight import StageSummary, summarize_stage
from inspectors.read import liveregs, sass, sourcemap
from inspectors.read.liveregs import Pressure
from inspectors.read.sourcemap import StageLines

JOB_TIMEOUT_S = 90.0          # the job's wall-clock limit (nvdisasm's own, inside it: sass.SASS_TIMEOUT_S)
JOB_LIMITS = sandbox.Limits(memory_mb=4096, cpu_s=120, processes=64, file_mb=64, open_files=256)
# the reply: the SASS text (MAX_SASS_BYTES) JSON-escaped, and its line map
MAX_REPLY_BYTES = 2 * sass.MAX_SASS_BYTES + (16 << 20)
MAX_REQUEST_BYTES = 2 * MAX_CUBIN_BYTES + 4 * sass.MAX_SASS_BYTES


@dataclass(frozen=True)
class Request:
    want: str                 # "sass" | "pressure"
    cubin: str = ""           # base64
    sass: str = ""            # the line-info disassembly, when known
    ptx: str = ""
    filename: str = ""        # the file the kernel's line info maps to (KernelResult.home)


@dataclass(frozen=True)
class Reply:
    sass: str = ""                        # the disassembly, when the request had none
    lines: StageLines | None = None       # the SASS line map, when a filename was given
    summary: StageSummary | None = None   # its line and instruction counts and opcode mix
    pressure: Pressure | None = None
    error: str = ""                       # SassError's message
    command: str = ""                     # and its command
    transient: bool = False               # the failure may not recur (a time limit): not to be remembered

    def check(self) -> "Reply":
        """This reply, or its failure as SassError."""
        if self.error:
            raise sass.SassError(self.error, self.command, self.transient)
        return self


# -- in the job's process --------------------------------------------------------------------------

def compute(req: Request) -> Reply:
    """What the job does with one request (in whatever process calls it)."""
    try:
        if req.cubin and cubin_too_large(req.cubin):
            raise sass.SassError(cubin_too_large(req.cubin).removeprefix("// SASS: "), "")
        if req.want == "pressure":
            return Reply(pressure=liveregs.of_kernel(req.cubin, req.sass, req.ptx, req.filename))
        if req.want != "sass":
            raise sass.SassError(f"unknown request {req.want[:40]!r}", "")
        text = req.sass or sass.disassemble_b64(req.cubin)
        if not req.filename:
            return Reply(sass=text)
        return Reply(sass="" if req.sass else text, lines=sourcemap.sass_stage_lines(text, req.ptx or None, req.filename),
                     summary=summarize_stage("sass", text))
    except sass.SassError as e:
        return Reply(error=e.message, command=e.command, transient=e.transient)


def main() -> int:
    raw = sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1)
    if len(raw) > MAX_REQUEST_BYTES:
        reply = Reply(error="the SASS request is too large to read here")
    else:
        data = json.loads(raw)
        req = Request(**{f.name: data[f.name] for f in dataclasses.fields(Request)
                         if isinstance(data.get(f.name), str)})
        reply = compute(req)
    plain = codec.to_plain(reply)
    text = plain.pop("sass")
    sys.stdout.write(json.dumps({"reply": plain, "sass": text}, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    return 0


# -- in the server ---------------------------------------------------------------------------------

def run(req: Request, timeout: float = JOB_TIMEOUT_S) -> Reply:
    """`req` done in a job process (the module docstring); its failures are in the Reply."""
    if req.cubin and cubin_too_large(req.cubin):
        return compute(Request(req.want, cubin=req.cubin))       # refused here: nothing is started
    command = f"python -m inspectors.compile.sass_job  # {req.want}"
    scratch = Path(tempfile.mkdtemp(prefix="tlens-sassjob-"))     # nvdisasm's cubin (kept where it fails)
    env = {"TMPDIR": str(scratch), "TLENS_SANDBOX": "0"}     # inside, nvdisasm runs as it is
    argv = [sys.executable, "-m", "inspectors.compile.sass_job"]
    data = json.dumps({f.name: getattr(req, f.name) for f in dataclasses.fields(req)}).encode()
    cgroup, keep = None, False
    try:
        try:
            if sandbox.enabled():
                tool = sass.nvidia_tool("nvdisasm")
                jail = sandbox.Jail(writable=(scratch,), readable=(tool.resolve().parent,) if tool else (), env=env,
                                    cwd=scratch, limits=JOB_LIMITS)
                argv, env = sandbox.wrap(argv, jail), dict(sandbox.BWRAP_ENV)
                cgroup = sandbox.Cgroup.create(f"sassjob-{scratch.name}", JOB_LIMITS)
            else:
                env = {**os.environ, **env}
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, cwd=sandbox.REPO_ROOT, preexec_fn=JOB_LIMITS.preexec(cgroup),
                                    start_new_session=True)
        except (OSError, subprocess.SubprocessError, sandbox.SandboxError) as e:
            return Reply(error=f"The SASS job could not start here: {e}", command=command, transient=True)
        try:
            out, err = sass.read_bounded(proc, MAX_REPLY_BYTES, timeout, data)
        except sass.Overrun as e:
            if e.what == "time":
                return Reply(error=f"The SASS job took longer than {timeout:g} s here", command=command, transient=True)
            return Reply(error=f"SASS too large to disassemble here (over {sass.megabytes(MAX_REPLY_BYTES)} MB)",
                         command=command)
        reply = _decode(out)
        if reply is None:
            tail = err.decode("utf-8", "replace").strip()[-2000:]
            return Reply(error=f"The SASS job failed ({sandbox.describe_exit(proc.returncode)}): {tail}",
                         command=command)
        named = Path(reply.command.rsplit(" ", 1)[-1])       # a failing cubin, kept for its command
        keep = named.is_relative_to(scratch) and named.is_file()
        return reply
    finally:
        if cgroup is not None:
            cgroup.kill()
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _decode(out: bytes) -> Reply | None:
    """The job's reply line, checked against Reply's annotations; None when it is not one."""
    try:
        data = json.loads(out)
        text = data["sass"]
        if not isinstance(text, str) or len(text) > sass.MAX_SASS_BYTES:
            return None
        return dataclasses.replace(codec.from_plain(Reply, data["reply"]), sass=text)
    except (ValueError, KeyError, TypeError, codec.DecodeError):
        return None


def _remembered(reply: Reply) -> Reply:
    """`reply`, to be cached; a failure that may not recur raises SassError instead (uncached)."""
    return reply.check() if reply.transient else reply


def disassemble(cubin_b64: str) -> Reply:
    """The SASS of a cubin (Reply.sass), done in a job; a transient failure raises SassError."""
    return _remembered(run(Request("sass", cubin=cubin_b64)))


def sass_lines(sass_text: str, ptx: str, filename: str) -> Reply:
    """The line map and summary of a SASS text (Reply.lines, Reply.summary), done in a job."""
    return _remembered(run(Request("sass", sass=sass_text, ptx=ptx, filename=filename)))


def pressure(cubin_b64: str, sass_text: str, ptx: str, filename: str) -> Reply:
    """Live registers per Python line (Reply.pressure; inspectors.read.liveregs), done in a job."""
    return _remembered(run(Request("pressure", cubin=cubin_b64, sass=sass_text, ptx=ptx, filename=filename)))


def no_cubin(stages: dict) -> str:
    """Why a kernel without a cubin has no live registers."""
    note = stages.get("sass", "")
    return note.removeprefix("// SASS: ") if note.startswith(CUBIN_TOO_LARGE) else \
        "live registers come from the cubin: CUDA targets only"


if __name__ == "__main__":
    sys.exit(main())
