"""Saved profiles: `<stem>.json` (inspectors.explain.profile's format: the per-instruction and
per-line figures, and where they were measured: GPU, driver, CUDA, torch, Triton, Nsight
Compute, date, command) with the raw Nsight Compute CSV beside it as `<stem>.ncu.csv`, so a
profile can be re-read with a newer parser and two profiles diff as text.

    path = save(folder, "vector_add-launch1", profile, raw_csv)
    profile, raw = load(path)
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from inspectors.explain.profile import Profile

REQUIRED_META = ("gpu", "driver", "torch", "triton", "date", "tool", "file", "kernel", "launch")


def _stem(stem: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).strip(".")
    if not safe:
        raise ValueError(f"no usable file name in {stem!r}")
    return safe


def save(folder: Path, stem: str, profile: Profile, raw_csv: str) -> Path:
    """Writes `<stem>.json` and `<stem>.ncu.csv` into `folder`; returns the JSON's path.
    The JSON names the CSV (`meta.raw`)."""
    missing = [k for k in REQUIRED_META if k not in profile.meta]
    if missing:
        raise ValueError(f"a saved profile names where it was measured; missing: {', '.join(missing)}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = _stem(stem)
    (folder / f"{stem}.ncu.csv").write_text(raw_csv, encoding="utf-8")
    data = profile.to_json()
    data["meta"] = {**data["meta"], "raw": f"{stem}.ncu.csv"}
    path = folder / f"{stem}.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load(path: Path) -> tuple[Profile, str | None]:
    """The profile and its raw CSV (None when the CSV is not beside it). A file that is not
    a saved profile raises ValueError naming the file and the problem."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read it: {e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON (line {e.lineno}: {e.msg})") from None
    try:
        profile = Profile.from_json(data)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: a saved profile without {e}") from None
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    raw = path.parent / str(profile.meta.get("raw", ""))
    return profile, raw.read_text(encoding="utf-8") if profile.meta.get("raw") and raw.is_file() else None


def folder_profiles(folder: Path) -> list[Path]:
    """The saved profiles of a folder (their JSON files), by name."""
    return sorted(p for p in Path(folder).glob("*.json") if p.with_suffix("").suffix != ".ncu")
