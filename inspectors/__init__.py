"""Everything of Triton Lens that is not UI. Never imports streamlit.

The folder tells the layer. The layers are in order, lowest first; a module imports only from
its own layer and the layers above it in this list (tests/unit/test_layering.py fails otherwise),
and each folder's `__init__` lists its modules, one line each:

    base/     the vocabulary: request/result types, errors, the stage table, targets, settings,
              the Triton versions supported and installed. Starts nothing.
    process/  starting and confining processes: the sandbox (bubblewrap), cgroups, scratch
              folders, a worker's own limits, process trees.
    read/     compiler text (and NVIDIA's tools' output) -> frozen dataclasses, one module per
              format: MLIR, PTX memory ops, SASS, source maps, resources, layouts, lexers, pass
              dumps, Inductor's wrapper code. Starts only NVIDIA's tools, in process/'s sandbox.
    explain/  analyses built from what read/ returns: insight, thread maps, vectorization,
              coalescing, coarsening, layout views, diffs. Starts nothing.
    store/    files on disk: the workspace, the compile history, Triton cache folders, export.
    target/   the target GPU as the user's code, torch, Dynamo, Inductor and Triton see it on a
              machine without one: the tensor view, CUDA probes, autocast, attention, Inductor's
              device interface and choices, the C++ device guard, the GPUs' figures. Imports
              base/ only.
    compile/  processes that run the user's code and Triton: the server's side of the workers
              (engine, queue, sandboxes), the worker's inside, triton_shim (the only modules
              that touch Triton internals: triton._C, triton.compiler, triton.runtime,
              triton.backends), torch.compile for the target and on a GPU.
    bench/    the benchmark model (pure), and the GPU runner with its worker process.
    session/  the one door: every caller (the app's pages, lessons and widgets, the CLI's
              commands, the benchmarks) reaches compiles, insights, SASS, diffs, the history,
              torch.compile and benchmark jobs through it (the Lens and its modules); no caller
              above imports compile/, bench/, store/, target/ or process/ (tests/unit/test_layering.py).

`python -m inspectors` (__main__.py, the CLI, with its commands in commands/) sits on top and
may import any layer, and so does cli.py (`tlens`, the installed command: the same commands, and
`tlens app` to start the UI in a process of its own); so does app/ (the Streamlit UI), which also
imports kernels/.
"""
