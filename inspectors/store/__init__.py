"""Layer store: files on disk. Imports base, process, read and explain.

    workspace  the user's kernel files, path-safe.
    project    a kernel file's project: the files its imports may need.
    history    saved compiles.
    results    the compile-result cache shared by a server's sessions.
    launches   big results' launches, one file each, the store bounded in bytes.
    cache      Triton cache and dump folders -> KernelResult.
    export     the zip with every stage and report.md.
    lessons    lesson files on disk (bundled and a teacher's folder).
    profiles   saved Nsight Compute profiles.
"""
