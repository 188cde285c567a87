"""Layer read: compiler text -> frozen dataclasses, one module per format. Imports base only.

mlir (TTIR/TTGIR ops and locations), memops (PTX/SASS/AMDGCN memory operations), sass
(nvdisasm/cuobjdump from the Triton wheel -> instructions), sourcemap (every stage's line
information -> python line table), resources (registers, spills, shared memory, occupancy),
layouts (TTGIR layout attributes), lexers (pygments lexers for each stage), passes (the
MLIR/LLVM pass dump). Pure functions of their input; no Triton, no torch, no streamlit."""
