"""Layer process: starting and confining the processes that run what a user sent (their kernel
file, or NVIDIA's tools on the cubin it made). Imports base only.

    sandbox     bubblewrap: the sandbox every process that runs a user's file is started in,
                `python -m inspectors.process.sandbox` says whether it works here.
    cgroups     a cgroup of its own for each sandbox, where the server may make one.
    scratch     a sandbox's scratch folder with a size the kernel enforces (a tmpfs).
    proclimits  the limits a worker process puts on itself at its start.
    proctree    a process and its descendants, and the memory they hold, read from /proc.
    leftovers   what an engine made on the host (scratch folders, tmpfs mounts, cgroups), removed
                at its close, and a dead server's at the next start.

Below read/: the readers of NVIDIA's tools' output run the tool itself (read/sass.py: nvdisasm
and cuobjdump; read/resources.py: ptxas) on a cubin or PTX a user's job made, and so start it in
this layer's sandbox. Nothing here imports torch or triton.
"""
