"""Layer bench: timing kernels on a GPU. Imports every layer but the CLI.

model (requests, results, GB/s and TFLOP/s maths, the per-GPU lock, ceilings cache: pure),
runner (what runs inside the benchmark process: torch, triton.testing.do_bench), worker (the
process launcher on the server side, and the process entry point)."""
