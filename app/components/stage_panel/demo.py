"""The stage panel on its own page, with a big text (benchmarks/browser_render.py drives it):

    .venv/bin/python -m streamlit run app/components/stage_panel/demo.py -- ?lines=20000

Python, PTX and SASS of the matmul fixture (tests/fixtures/insight/matmul_sm80.kernel.json)
with their source map; **Open the big panel** adds a SASS panel of `?lines=` lines (the
fixture's SASS repeated), **Rerun** reruns without changing anything.
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

import streamlit as st  # noqa: E402

from app.components.stage_panel import page_state, payload, stage_panel  # noqa: E402
from inspectors.read import sourcemap  # noqa: E402

st.set_page_config(page_title="Stage panel demo", layout="wide")
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "insight" / "matmul_sm80.kernel.json").read_text())
try:
    BIG = max(1, min(int(st.query_params.get("lines", "20000")), 200_000))
except ValueError:
    BIG = 20_000


@st.cache_data(show_spinner=False)
def _payload(stage: str, text: str, py: str) -> bytes:
    py_lines = {int(k): v for k, v in json.loads(py).items()}
    return payload.encode(payload.build(stage, text, f"matmul_kernel.{stage}", py_lines))


@st.cache_data(show_spinner=False)
def _source_map():
    smap = sourcemap.build(dict(FIXTURE["stages"]), "matmul.py")
    return {name: dict(s.to_python) for name, s in smap.stages.items()}, sorted(smap.python_to_stage())


maps, mapped = _source_map()
st.session_state.setdefault("present", False)
c1, c2, c3, c4 = st.columns([1, 1, 1, 3])
c1.button("Open the big panel", key="open-big", on_click=lambda: st.session_state.update(big=True))
c2.button("Rerun", key="rerun")
c3.toggle("Present", key="present")
c4.selectbox("Follow a Python line", [None] + mapped, key="follow")
page_state(st.session_state["follow"], st.session_state["present"])

names = ["source", "ptx", "sass"]
for column, name in zip(st.columns(len(names)), names):
    with column:
        py = {n: n for n in mapped} if name == "source" else maps.get(name, {})
        stage_panel(_payload(name, FIXTURE["stages"][name], json.dumps(py)), key=f"demo-{name}",
                    on_follow=lambda line: st.session_state.update(follow=line))
if st.session_state.get("big"):
    lines = FIXTURE["stages"]["sass"].splitlines()
    text = "\n".join((lines * (BIG // len(lines) + 1))[:BIG]) + "\n"
    stage_panel(_payload("sass", text, "{}"), key="demo-big")
