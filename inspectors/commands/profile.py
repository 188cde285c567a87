"""`python -m inspectors profile ...` (the options: inspectors/__main__.py): one launch measured
under Nsight Compute per Python line (a GPU), or a saved profile shown, or two compared."""
from __future__ import annotations

import json
from pathlib import Path

from inspectors.base.errors import CompileError
from inspectors.commands import fail as fail_with


def cmd_profile(args) -> int:
    """Measure (a file and a GPU) or show (--saved) a per-line profile."""
    from inspectors.explain.profile import ProfileMismatch
    from inspectors.session import files

    def fail(message: str, command: str = "") -> int:
        return fail_with(CompileError("usage" if not command else "runtime", message, command=command or None), args.json)

    source = ""
    if args.saved is not None:
        try:
            profile, _raw = files.profile(args.saved)
        except ValueError as e:
            return fail(str(e))
        saved = str(args.saved)
        candidate = args.file or args.saved.parent / str(profile.meta.get("file", ""))
        if candidate and Path(candidate).is_file():
            source = Path(candidate).read_text(encoding="utf-8")
    else:
        if args.file is None:
            return fail("profile needs a kernel FILE (or --saved PROFILE.json)")
        from inspectors.session.bench import ProfileError, profile_launch
        try:
            source = args.file.read_text(encoding="utf-8")
            profile, _raw, path = profile_launch(args.file, args.launch, args.out, args.ncu_set, args.timeout)
        except OSError as e:
            return fail(f"cannot read {args.file}: {e}")
        except ProfileError as e:
            return fail(str(e), e.command)
        except ProfileMismatch as e:
            return fail(str(e))
        saved = str(path) if path else None
    if args.against is not None:
        if args.saved is None:
            return fail("--against compares two saved profiles: give --saved A.json --against B.json")
        from inspectors.explain.profile import compare
        try:
            other, _ = files.profile(args.against)
        except ValueError as e:
            return fail(str(e))
        rows = compare(profile, other)
        if args.json:
            print(json.dumps({"a": profile.meta, "b": other.meta, "lines": rows}))
            return 0
        print(f"A: {args.saved.name} ({profile.meta.get('date')})   B: {args.against.name} ({other.meta.get('date')})")
        print(" line   share A   share B   change")
        for r in rows:
            print(f"{r['python_line']:5d}  {100 * r['share_a']:6.1f} %  {100 * r['share_b']:6.1f} %  "
                  f"{100 * r['change']:+6.1f} pts")
        return 0
    hottest = profile.hottest(source, n=10)
    if args.json:
        print(json.dumps({"meta": profile.meta, "saved": saved, "total_samples": profile.total_samples,
                          "hottest": hottest, "notes": list(profile.notes),
                          "unexplained": [{"sass_line": i.sass_line, "text": i.text, "samples": i.samples}
                                          for i in profile.unexplained],
                          "lines": profile.to_json()["lines"]}))
        return 0
    m = profile.meta
    print(f"{m.get('file')} launch {m.get('launch')} ({m.get('kernel')}) on {m.get('gpu')}, driver {m.get('driver')}, "
          f"torch {m.get('torch')}, Triton {m.get('triton')}, {m.get('tool')} {m.get('ncu', '')}, {m.get('date')}")
    print(f"{profile.total_samples:,.0f} warp-stall samples")
    for row in hottest:
        spr = f", {row['sectors_per_request']:.1f} sectors/request" if row["sectors_per_request"] else ""
        print(f"{100 * row['share']:5.1f} %  {row['where']}{spr}" + (f" — {row['why']}" if row["why"] else "")
              + (f"; {row['waits_for']}" if row.get("waits_for") else ""))
    for note in profile.notes:
        print(f"note: {note}")
    if saved:
        print(f"saved: {saved}")
    return 0
