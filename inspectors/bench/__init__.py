"""Layer bench: timing kernels on a GPU. Imports every layer below session.

    model             requests, results, GB/s and TFLOP/s maths, bytes/flops per kernel (pure).
    lock              one benchmark at a time per GPU, and each GPU's measured ceilings.
    runner            what runs inside the benchmark process (torch, triton.testing.do_bench).
    worker            the benchmark process: its launcher on the server side, and its entry point.
    compare_versions  the same benchmark under two Triton versions.
    profiler          one launch profiled under Nsight Compute, its figures on its lines;
    profile_run       ... what ncu runs: the kernel file's example(), for real.
    step_times        a step's kernels timed by torch.profiler (example() for real), by name.
"""
