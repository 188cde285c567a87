"""Layer compile: the processes that run user code and Triton. Imports base, read, explain and store.

engine (server side: a warm worker process, time and memory limits, JSON over a pipe),
worker (the process: runs the kernel file's example(), records the JIT's specializations and
compiles them), triton_shim (the ONLY module that touches Triton internals: triton._C,
triton.compiler, triton.runtime, triton.backends; every version workaround is here),
inductor (torch.compile runner, run as its own process), journal (the stages a worker that died
mid-compile had made), layout_probe (Triton's own layout answers, from a separate process)."""
