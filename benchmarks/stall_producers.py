"""Stalls charged to their cause, checked against the scoreboards: for the committed H100 profiles,
every producer that inspectors/explain/stallcause.py names (by following registers back) is compared
with the SASS scheduling controls of the same cubin (inspectors/read/sasscontrol.py): does the
producer set a scoreboard, and does the stalled instruction wait on it?

    .venv-oldest/bin/python benchmarks/stall_producers.py [--out benchmarks/results/stall_producers.txt]

Run it with the Triton the profiles were measured with (3.6.0: .venv-oldest); a profile whose
compile here is not the profiled SASS (an opcode differs at some offset) is skipped and says so.
No GPU needed: the samples are the committed ones, the cubin is compiled here.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.session.lens import Lens
from inspectors.explain import stallcause
from inspectors.read import sass, sasscontrol
from inspectors.session import files as session_files

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT / "assets" / "profiles"
SEARCH = (ROOT / "kernels", ROOT / "tests" / "snippets", ROOT / "tests" / "snippets" / "why")
DEFAULT = ("transpose-launch1", "strided-launch1", "vector_add-launch1", "softmax-launch1", "coalescing-launch2",
           "matmul-launch1")


def check(engine, name: str) -> tuple[str, list[tuple[stallcause.Cause, bool | None]]]:
    """('', [(cause, confirmed)]) or (why it was skipped, [])."""
    profile, _ = session_files.profile(PROFILES / f"{name}.json")
    src = next((f / profile.meta["file"] for f in SEARCH if (f / profile.meta["file"]).is_file()), None)
    if src is None:
        return "source not found", []
    files, package = session_files.project_of(src)
    r = engine.compile(CompileRequest(source=src.read_text(), filename=src.name, target="cuda:90", sass=True,
                                      files=files, package=package)).result
    k = next((k for k in r.kernels if k.launch == int(profile.meta.get("launch", 1)) - 1), None)
    if k is None or not k.cubin:
        return "compile failed here", []
    here = {off: " ".join(text.split()) for _, off, text in _instructions(k.stages["sass"])}
    differ = [i for i in profile.instructions if here.get(i.offset) != " ".join(i.text.split())]
    if differ:
        return f"the SASS compiled here is not the profiled one ({len(differ)} instructions differ)", []
    controls = sasscontrol.controls(sass.encodings_b64(k.cubin))
    return "", [(c, stallcause.confirmed(c, controls)) for c in stallcause.causes(profile.instructions)]


def _instructions(sass_text: str):
    from inspectors.explain.profile import sass_instructions
    return sass_instructions(sass_text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("names", nargs="*", default=list(DEFAULT))
    args = ap.parse_args(argv)
    import triton
    engine = Lens(settings_mod.load(), cache=False, workers=1)
    lines = [f"# producers named by register dependencies vs the SASS scoreboards (Triton {triton.__version__} here)",
             f"{'profile':<22} {'stalls':>6} {'samples':>8} {'confirmed':>10} {'samples':>8}  top"]
    bad = 0
    try:
        for name in args.names:
            why, found = check(engine, name)
            if why:
                lines.append(f"{name:<22} skipped: {why}")
                continue
            ok = [c for c, good in found if good]
            bad += sum(1 for _, good in found if good is False)
            top = max(found, key=lambda t: t[0].samples, default=None)
            top_text = (f"line {top[0].line} {top[0].words()} ({top[0].samples:.0f} samples, "
                        f"{'confirmed' if top[1] else 'NOT confirmed'})") if top else ""
            lines.append(f"{name:<22} {len(found):>6} {sum(c.samples for c, _ in found):>8.0f} {len(ok):>10} "
                         f"{sum(c.samples for c in ok):>8.0f}  {top_text}")
    finally:
        engine.close()
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
