"""Triton's own layout answers, from a separate process.

`to_linear_layout` and `LinearLayout.apply` run in Triton's C++, where an unsupported case
aborts the process (Triton 3.6 on a shared layout; 3.7-3.9 answer: "Expected input dimension 0 to be
'register'. Got "offset"", then an assertion). So the tests that pin the pure-Python layout
view (inspectors.explain.layout_view) against Triton ask through this module, and a crash
fails those tests instead of taking the test run down.

    answers = ask([{"op": "layout", "layout": {"kind": "blocked", ...}, "shape": [1024]}])
    answers[0]["bases"]   # {"register": [[1], [2], [512]], "lane": ..., "warp": ..., "block": []}
    answers[0]["map"]     # [[warp, lane, register, [index]], ...] through LinearLayout.apply

Protocol: a JSON list of queries on stdin, a JSON list of answers on stdout.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]


class ProbeCrash(RuntimeError):
    """The probe process died (Triton's C++ aborted): `returncode`, `stderr`."""

    def __init__(self, returncode: int, stderr: str):
        self.returncode, self.stderr = returncode, stderr
        try:
            how = f"killed by {signal.Signals(-returncode).name}" if returncode < 0 else f"exit status {returncode}"
        except ValueError:
            how = f"signal {-returncode}"
        lines = [l for l in stderr.splitlines() if l.strip() and not l.startswith(("  File", "Current thread",
                                                                                   "Fatal Python"))]
        super().__init__(f"Triton's layout code {how}: " + " | ".join(lines[:4])[:600])


def ask(queries: list[dict], timeout: float = 300) -> list:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, "-m", "inspectors.compile.layout_probe"], input=json.dumps(queries),
                          capture_output=True, text=True, cwd=str(_REPO_ROOT), env=env, timeout=timeout)
    if proc.returncode != 0:
        raise ProbeCrash(proc.returncode, proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    from inspectors.compile import triton_shim_layouts as shim_layouts
    queries = json.loads(sys.stdin.read())
    answers = []
    for q in queries:
        if q["op"] == "layout":
            bases = shim_layouts.linear_layout(q["layout"], q["shape"])
            mapped = shim_layouts.linear_layout_map(bases, q["shape"]) if "register" in bases else None
            answers.append({"bases": bases, "map": mapped})
        elif q["op"] == "version":
            import triton
            answers.append(triton.__version__)
        else:
            raise ValueError(f"unknown op {q['op']!r}")
    sys.stdout.write(json.dumps(answers) + "\n")
    sys.stdout.flush()
    os._exit(0)     # skip interpreter teardown: nanobind's leak report is noise on stderr


if __name__ == "__main__":
    main()
