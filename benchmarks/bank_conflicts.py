"""Shared-memory bank conflicts: the prediction from the PTX (inspectors/explain/bankconflicts.py)
against Nsight Compute's per-instruction counts in the committed H100 profiles (assets/profiles/:
`L1 Wavefronts Shared` and `... Ideal` of every SASS instruction, summed per Python line).

    .venv-oldest/bin/python benchmarks/bank_conflicts.py [--out benchmarks/results/bank_conflicts.txt]

Run it with the Triton the profiles were measured with (3.6.0 on the H100: `make setup-oldest`'s
.venv-oldest): each profiled file is compiled here for cuda:90 (the JIT's own PTX) and the launch
that was profiled is predicted. Per Python line with shared accesses: predicted wavefronts / ideal
("ways") beside measured wavefronts / ideal, and whether they agree within 10 %. No GPU needed.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from inspectors.base import settings as settings_mod
from inspectors.base.result import CompileRequest
from inspectors.session.lens import Lens
from inspectors.explain import bankconflicts
from inspectors.read import ncu_source as ncu
from inspectors.read import sourcemap
from inspectors.session import files as session_files

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT / "assets" / "profiles"
SEARCH = (ROOT / "kernels", ROOT / "tests" / "snippets", ROOT / "tests" / "snippets" / "why")


def source_of(meta: dict) -> Path | None:
    for folder in SEARCH:
        path = folder / meta.get("file", "")
        if path.is_file() and (not meta.get("source_sha256") or
                               hashlib.sha256(path.read_bytes()).hexdigest() == meta["source_sha256"]):
            return path
    return None


# SASS that reads or writes shared memory through descriptors, not lane addresses: not predicted
DESCRIPTOR_OPS = ("HGMMA", "UTMALDG", "UTMASTG", "UTCHMMA", "UTCQMMA", "UTCMMA")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    import triton
    engine = Lens(settings_mod.load(), cache=False, workers=1)
    lines = [f"# predicted (PTX, Triton {triton.__version__} here) vs measured (ncu on the profiles' GPU), "
             "wavefronts / ideal per Python line", f"{'profile':<28} {'line':>5}  {'predicted':>14}  {'measured':>18}  agree"]
    agree = total = 0
    try:
        for path in sorted(PROFILES.glob("*.json")):
            csv = path.with_suffix("").with_suffix(".ncu.csv")
            profile, _ = session_files.profile(path)
            if not csv.is_file():
                continue
            page = ncu.parse(csv.read_text())[0]
            measured, opcodes = bankconflicts.measured_by_line(page, {i.offset: i.python_line for i in profile.instructions})
            if not measured:
                continue
            src = source_of(profile.meta)
            if src is None:
                lines.append(f"{path.stem:<28} source not found (or changed since it was profiled)")
                continue
            files, package = session_files.project_of(src)
            r = engine.compile(CompileRequest(source=src.read_text(), filename=src.name, target="cuda:90", sass=False,
                                              files=files, package=package)).result
            launch = int(profile.meta.get("launch", 1)) - 1
            kernel = next((k for k in r.kernels if k.launch == launch), None) if r.ok else None
            if kernel is None:
                lines.append(f"{path.stem:<28} compile failed: {r.error.headline() if r.error else 'no such launch'}")
                continue
            ptx_map = sourcemap.build(kernel.stages, src.name).stages["ptx"].to_python
            predicted = bankconflicts.by_line(bankconflicts.predict(kernel.stages["ptx"]), ptx_map)
            for line in sorted(set(measured) | set(predicted)):
                mw, mi = measured.get(line, (0.0, 0.0))
                pw, pi = predicted.get(line, (0, 0))
                m_ways = mw / mi if mi else None
                p_ways = pw / pi if pi else None
                if p_ways is None and opcodes.get(line) and all(o.startswith(DESCRIPTOR_OPS) for o in opcodes[line]):
                    lines.append(f"{path.stem:<28} {line:>5}  {'not predicted':>14}  "
                                 f"{f'{mw:,.0f}/{mi:,.0f} = {m_ways:.2f}':>18}  ({', '.join(sorted(opcodes[line]))} reads "
                                 "shared memory through descriptors, not lane addresses)")
                    continue
                ok = m_ways is not None and p_ways is not None and abs(p_ways - m_ways) <= 0.1 * m_ways
                total += 1
                agree += ok
                lines.append(f"{path.stem:<28} {line:>5}  {f'{pw}/{pi} = {p_ways:.2f}' if p_ways else 'none':>14}  "
                             f"{f'{mw:,.0f}/{mi:,.0f} = {m_ways:.2f}' if m_ways else 'none':>18}  {'yes' if ok else 'NO'}")
    finally:
        engine.close()
    lines.append(f"# {agree} of {total} predicted lines agree within 10 % (lines read through descriptors excluded, "
                 "as listed)")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
