"""Layer base: the vocabulary every other layer speaks. Imports nothing from inspectors; starts
nothing.

    errors           CompileError and its kinds, crossing the worker boundary as values.
    launches         a big result's launches read one at a time from files (StoredLaunches).
    result           CompileRequest, CompileResult, KernelResult, ArgSpec, PassStep: frozen
                     dataclasses that round-trip through JSON, and the bounds on a result.
    codec            frozen dataclasses to JSON and back, checked against their annotations.
    stages           the stage table that drives tabs, lexers, file names and CLI keys.
    targets          compile targets (cuda:90, hip:gfx942, ...), parsed.
    gpu_specs        each target GPU's bandwidth, peak FLOP/s and SMs, from vendor data (time estimates).
    settings         the documented TLENS_* environment variables, read once.
    files            writing a file whole or not at all.
    triton_support   the Triton versions Triton Lens supports and what differs between them.
    triton_installs  the Triton versions this server can compile with (its own and extra ones).
"""
