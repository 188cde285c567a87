"""Layer compile: the processes that run a user's code, Triton and NVIDIA's tools for the server.
Imports base, process, read, explain, store and target.

The server's side of the worker processes:
    engine             the pool of warm workers and the queue in front of them (Engine).
    fairqueue          the queue: who gets the next free worker.
    worker_handle      one warm worker process as the server holds it: start, send, bounded reply.
    student_sandboxes  each student's own warm sandbox on a class server.
    version_engines    one Engine per configured Triton version.
    journal            what a job left on disk, read back when its worker died mid-compile.
    trusted            the sandboxed engine's shared cache of the library's own kernels.
    sass_job           the server's SASS work (disassembly, line map, live registers) in a
                       bounded process of its own.
    layout_probe       Triton's own layout answers, from a process of their own.

The worker's inside (`python -m inspectors.compile.worker_main`):
    worker_main        the worker process: runs the file's example(), records its launches.
    default_device     the default device user code runs under (the GPU where there is one).
    launch_compile     each launch compiled into its answer file; what the worker keeps of it.
    zygote             a student's sandbox worker that forks a fresh child per job.
    torch_state        torch's settings a file changed, put back before the next job.
    loading            the user's file and project loaded as modules, errors on their lines.
    parallel           a job's launches compiled at the same time in forked children.
    analysis           each kernel's insight, computed beside its stages.
    diagnostics        the compiler's remarks and warnings of one compile, heard.

Triton's internals (the only modules that import triton._C, .compiler, .runtime, .backends):
    triton_shim        the launch recorder and compile_launch; every version workaround.
    triton_shim_driver the compile-only `driver.active`, naming the target (never a GPU).
    triton_shim_record the JIT entry points patched while it records (autotune, each launch's call).
    triton_shim_env    the environment a launch was launched under (its ptxas, its line info), for its compile.
    launch_call        what a launch was called with: grid, tensors' bytes, integers (for estimates).
    outside_calls      what a compiled graph runs outside Triton (cuBLAS, attention kernels).
    triton_shim_layouts  Triton's own LinearLayout, for the layout view's tests.

torch.compile:
    torch_compile_target  in a job, without a GPU: every kernel Inductor writes for the target
                          (the target/ layer's rules installed), recorded as launches.
    kernel_origins        where each of its kernels came from: its graph, the ATen ops it fuses, the user's lines.
    eager_calls           the ATen ops a step's modules and backward run eagerly outside Triton (each a CUDA kernel).
    aoti_target           AOTInductor's compile and load there: its Triton kernels, the package a note.
    torch_compile_gpu     the Caches page's torch.compile mode, run on a real GPU in a process.
    torch_compile_timing  a compiled function timed against eager on that GPU.
"""
