"""Rows (a list of dicts, the first row's keys as the columns) as an Arrow table for
`st.dataframe` and `st.table`. Given a list, Streamlit builds a pandas DataFrame and converts
it to Arrow; built column by column here it costs a fraction of that (every Compile draws four
or five, and a class's server draws them for every student; benchmarks/run_cost.py, the
figures: docs/09-benchmark-results.md#the-servers-cpu-per-page). A column of mixed types
(a number or "the rest") is shown as text; None stays empty."""
from __future__ import annotations

import pyarrow as pa


def arrow(rows: list[dict]) -> pa.Table:
    columns = {}
    for name in (rows[0] if rows else {}):
        values = [row.get(name) for row in rows]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            columns[name] = pa.array([None if v is None else str(v) for v in values], pa.string())
    return pa.table(columns)
