"""Measured cost per line in the explorer (issue 22): a saved profile of the open file's launch
(assets/profiles/, written by benchmarks/gpu_profile.py or `python -m inspectors profile
--out`) as heat bars in every panel and a "hottest lines" table, labelled with the GPU, driver,
versions and date it was measured on. No GPU needed: the figures are the saved ones.

The heat of a stage line is the share of samples of its (innermost) Python line: a saved
profile may come from another Triton than the app's (the H100 machine runs 3.6), whose SASS
differs, while the Python lines are the file's own. A file edited since it was measured gets
no heat (its lines may have moved)."""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import streamlit as st

from app.widgets import tables
from inspectors.explain.profile import Profile
from inspectors.session import files
from inspectors.read import ncu_source as ncu
from inspectors.base import settings as settings_mod

ROOT = Path(__file__).resolve().parents[2]


def profiles_dir() -> Path:
    return settings_mod.load().profiles_dir or ROOT / "assets" / "profiles"


@functools.lru_cache(maxsize=32)
def _load(path: str, mtime: float) -> Profile | None:
    """The profile (frozen dataclasses, shared: `st.cache_data` unpickled a copy on every run
    of the page, a cost every Compile paid: docs/09-benchmark-results.md#figures-behind-design-choices)."""
    try:
        return files.profile(Path(path))[0]
    except ValueError:
        return None


def saved_profile(filename: str, launch: int) -> Profile | None:
    """The saved profile of launch `launch` (0-based, KernelResult.launch) of `filename`."""
    stem = filename[:-3] if filename.endswith(".py") else filename
    path = profiles_dir() / f"{stem}-launch{launch + 1}.json"
    return _load(str(path), path.stat().st_mtime) if path.is_file() else None


def same_source(profile: Profile, source: str) -> bool:
    want = profile.meta.get("source_sha256")
    return not want or want == hashlib.sha256(source.encode()).hexdigest()


def heat_by_stage(profile: Profile, smap, mapped: list[int]) -> dict[str, dict[int, float]]:
    """Per stage (and "source"), line -> share of its Python line's samples."""
    per = {c.python_line: c.share for c in profile.lines}
    out = {"source": {n: per[n] for n in mapped if n in per}}
    for name, sl in smap.stages.items():
        out[name] = {n: per[py] for n, py in sl.to_python.items() if py in per}
    return out


def label(profile: Profile) -> str:
    m = profile.meta
    return (f"measured on {m.get('gpu')} (driver {m.get('driver')}, CUDA {m.get('cuda')}), torch {m.get('torch')}, "
            f"Triton {m.get('triton')}, {m.get('tool')} {m.get('ncu', '')}, {str(m.get('date', ''))[:10]}")


def measured_vs_predicted(profile: Profile, kernel, smap) -> list[dict]:
    """Per Python line and access kind: the static coalescing estimate of this compile's PTX
    (with the integer arguments the profiled launch ran with) next to the measured sectors per
    request; [] without PTX."""
    if "ptx" not in kernel.stages or "ptx" not in smap.stages:
        return []
    from inspectors.explain import coalescing
    from inspectors.explain.profile import measured_vs_static
    params = [a.name for a in kernel.args if a.type != "constexpr"]
    try:
        est = coalescing.estimate(kernel.stages["ptx"], params, profile.meta.get("launch_ints") or {})
    except Exception:  # noqa: BLE001 - the estimate models a subset of PTX; the table is optional
        return []
    rows = []
    for r in measured_vs_static(profile, est, smap.stages["ptx"]):
        if r["static"] is None and r["measured"] is None:
            continue
        rows.append({"Python line": r["python_line"], "access": r["kind"],
                     "predicted sectors / request": None if r["static"] is None else round(r["static"], 2),
                     "measured": None if r["measured"] is None else round(r["measured"], 2),
                     "difference": f"{100 * (r['ratio'] - 1):+.0f} %" if r["ratio"] else ""})
    return rows


@st.cache_data(show_spinner=False, max_entries=16)
def _raw_page(path: str, mtime: float):
    try:
        raw = files.profile(Path(path))[1]
        return ncu.parse(raw)[0] if raw else None
    except (ValueError, IndexError):
        return None


def bank_rows(profile: Profile, filename: str, kernel, smap) -> list[dict]:
    """Per Python line with shared-memory traffic: the predicted wavefronts / ideal of this
    compile's PTX (inspectors.explain.bankconflicts) beside ncu's measured ones (the raw CSV
    saved beside the profile)."""
    stem = filename[:-3] if filename.endswith(".py") else filename
    path = profiles_dir() / f"{stem}-launch{int(profile.meta.get('launch', 1))}.json"
    page = _raw_page(str(path), path.stat().st_mtime) if path.is_file() else None
    if page is None or "ptx" not in kernel.stages or "ptx" not in smap.stages:
        return []
    from inspectors.explain import bankconflicts
    measured, ops = bankconflicts.measured_by_line(page, {i.offset: i.python_line for i in profile.instructions})
    predicted = bankconflicts.by_line(bankconflicts.predict(kernel.stages["ptx"]), smap.stages["ptx"].to_python)
    rows = []
    for line in sorted(set(measured) | set(predicted)):
        mw, mi = measured.get(line, (0.0, 0.0))
        pw, pi = predicted.get(line, (0, 0))
        rows.append({"Python line": line, "predicted ways": round(pw / pi, 2) if pi else None,
                     "measured ways (ncu)": round(mw / mi, 2) if mi else None,
                     "measured wavefronts": int(mw), "SASS": ", ".join(sorted(ops.get(line, ())))})
    return rows


FEW_SAMPLES = 400      # below this, say how uncertain a line's share is


def _spread(n: int) -> int:
    """Two standard errors, in percentage points, of a 25 % share measured on n samples."""
    return round(200 * (0.25 * 0.75 / max(n, 1)) ** 0.5)


def render_hottest(profile: Profile, source: str, kernel=None, smap=None) -> None:
    """The hottest lines with the reasons in words; with the compile, measured against
    predicted sectors per request."""
    rows = [{"share": f"{100 * r['share']:.1f} %", "where": r["where"],
             "source": source.splitlines()[r["python_line"] - 1].strip()[:70]
             if r["python_line"] <= len(source.splitlines()) else "",
             "why (ncu)": r["why"], "waiting for (its producer)": r["waits_for"],
             "sectors / request": f"{r['sectors_per_request']:.1f} (ideal {r['ideal_sectors_per_request']:.1f})"
             if r["sectors_per_request"] and r["ideal_sectors_per_request"] else ""}
            for r in profile.hottest(source, n=8)]
    top = rows[0] if rows else None
    n = int(profile.total_samples)
    title = (f"Hottest lines — {top['where']}: {top['share']} of {n:,} samples" if top else "Hottest lines")
    with st.expander(title):             # folded: the panels stay on the first screen
        st.caption(f"Where the time goes, {label(profile)}: share of warp-stall samples per line."
                   + (f" Only {n} samples: a share of p % is known to about ±{_spread(n)} points "
                      "(two standard errors at 25 %); close lines may trade places in another run."
                      if n < FEW_SAMPLES else ""))
        st.dataframe(tables.arrow(rows), hide_index=True, width="stretch")
        compared = measured_vs_predicted(profile, kernel, smap) if kernel is not None else []
        if compared:
            st.caption("Global accesses: the static coalescing estimate of this compile's PTX (with the sizes "
                       "the profiled launch ran with) against the measured 32-byte sectors per warp request.")
            st.dataframe(tables.arrow(compared), hide_index=True, width="stretch")
        banks = bank_rows(profile, str(profile.meta.get("file", "")), kernel, smap) if kernel is not None else []
        if banks:
            st.caption("Shared memory: bank-conflict ways (wavefronts ÷ the ideal) predicted from this compile's PTX "
                       "for warp 0, against Nsight Compute's per-instruction counts. wgmma and TMA (HGMMA, UTMALDG) "
                       "reach shared memory through descriptors: no prediction.")
            st.dataframe(tables.arrow(banks), hide_index=True, width="stretch")
