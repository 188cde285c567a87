"""Everything of Triton Lens that is not UI. Never imports streamlit.

The folder tells the layer. The layers are in order, lowest first; a module imports only from
its own layer and the layers above it in this list (tests/unit/test_layering.py fails otherwise):

    base/     the vocabulary: request/result types, errors, the stage table, targets, settings.
    read/     compiler text (and NVIDIA's tools' output) -> frozen dataclasses, one module per
              format: MLIR, PTX memory ops, SASS, source maps, resources, layouts, lexers, pass
              dumps, Inductor's wrapper code.
    explain/  analyses built from what read/ returns: insight, thread maps, vectorization,
              coalescing, coarsening, layout views, diffs.
    store/    files on disk: the workspace, the compile history, Triton cache folders, export.
    compile/  processes that run the user's code and call Triton: the server-side engine, the
              worker process, the torch.compile runner, and triton_shim (the one module that
              touches Triton internals: triton._C, triton.compiler, triton.runtime, triton.backends).
    bench/    the benchmark model (pure), and the GPU runner with its worker process.
    session/  the one door: every caller (the app's pages, lessons and widgets, the CLI's
              commands, the benchmarks) reaches compiles, insights, SASS, diffs, the history,
              torch.compile and benchmark jobs through it (the Lens and its modules); no caller
              above imports compile/, bench/ or store/ (tests/unit/test_layering.py).

`python -m inspectors` (__main__.py, the CLI, with its commands in commands/) sits on top and
may import any layer, and so does cli.py (`tlens`, the installed command: the same commands, and `tlens app` to start the UI in
a process of its own); so does app/ (the Streamlit UI), which also imports kernels/.
"""
