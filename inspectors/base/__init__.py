"""Layer base: the vocabulary every other layer speaks. Imports nothing from inspectors.

errors (CompileError, the kinds), result (CompileRequest, CompileResult, KernelResult, ArgSpec,
PassStep: frozen dataclasses that round-trip through JSON), stages (the stage table that drives
tabs, lexers, file names and CLI keys), targets (cuda:90, hip:gfx942, ...), settings (the
documented TLENS_* environment variables)."""
