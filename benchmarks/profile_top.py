"""The top of a py-spy profile (not a test: it prints a table).

Reads py-spy's raw output (`py-spy record --format raw`: one collapsed stack per line, root
first, then the sample count) and prints where the samples were: by function (own time: the
frame on top of the stack) and by function including what it called (cumulative), each as a
share of all samples, and the same cumulative table for the app's own code only.

    .venv/bin/python benchmarks/profile_top.py profile.raw [--top 25]
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1]) + "/"
FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:()]+)(?::(?P<line>\d+))?\)$")


def short(frame: str) -> str:
    """`render (…/site-packages/streamlit/elements/foo.py:12)` -> `render (streamlit/elements/foo.py)`."""
    m = FRAME.match(frame)
    if not m:
        return frame
    path = m["file"]
    if path.startswith(ROOT):
        return f"{m['func']} ({path[len(ROOT):]})"
    for marker in ("site-packages/", "lib/python3."):
        if marker in path:
            path = path.split(marker, 1)[1]
            if marker == "lib/python3.":
                path = "stdlib/" + path.split("/", 1)[-1]
            break
    return f"{m['func']} ({path})"


def read(path: Path) -> list[tuple[list[str], int]]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            out.append(([short(f) for f in stack.split(";")], int(n)))
    return out


def tables(stacks: list[tuple[list[str], int]], top: int) -> str:
    total = sum(n for _, n in stacks) or 1
    own, cum, app = Counter(), Counter(), Counter()
    for frames, n in stacks:
        own[frames[-1]] += n
        for f in set(frames):
            cum[f] += n
            if "(app/" in f or "(inspectors/" in f:
                app[f] += n
    lines = [f"{total} samples"]
    for title, counter in (("own time (the frame on top)", own), ("cumulative (with what it called)", cum),
                           ("cumulative, the app's own code", app)):
        lines += ["", f"-- {title}"]
        lines += [f"{100 * n / total:5.1f}%  {f}" for f, n in counter.most_common(top)]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw", type=Path)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    print(tables(read(args.raw), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
