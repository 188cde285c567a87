"""Layer session: the one door to compiled and analysed kernels. Imports every layer below it.

Every caller — the app's pages, lessons and widgets, the CLI's commands, the benchmarks —
reaches the engine and what it made through here, never through compile/, bench/, store/, target/ or process/
(tests/unit/test_layering.py). Nothing here imports streamlit: app/backend/services.py is the
Streamlit glue (st.cache_resource on the one Lens, who is asking, the queue line).

    lens       Lens: the engines of every Triton version, the shared result cache (results kept
               as objects; JSON only on disk) and `compile(request, who)`.
    insights   the one insight policy (the worker's analysis, else analysed here within a time
               budget), stage texts (SASS disassembled in a job, on demand), SASS line maps,
               register pressure: bounded object caches shared by every caller of the process.
    compare    two compiles launch by launch (two Triton versions, or two history records).
    records    the compile history: records made, saved and read, with their figures.
    caches     Triton cache folders and torch.compile jobs (Inductor's kernels) read back.
    bench      benchmark jobs on a GPU, and the benchmark model the pages draw.
    files      lesson files, committed profiles, the export zip.

A Compile: view -> services.compile_kernel (who, the queue line) -> Lens.compile -> Engine ->
worker, and back as one CompileResult object; the panels then ask insights.insight(kernel, ...).
"""
