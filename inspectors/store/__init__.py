"""Layer store: files on disk. Imports base, read and explain.

workspace (the user's kernel files, path-safe), history (saved compiles), cache (Triton cache
and dump folders -> KernelResult), export (the zip with every stage and report.md)."""
