"""Layer read: compiler text (and NVIDIA's tools' output) -> frozen dataclasses, one module per
format. Imports base and process.

Pure functions of their input (no Triton, no torch, no streamlit), except the two readers of
NVIDIA's tools, which run the tool from the Triton wheel on a cubin or PTX in process/'s sandbox
(sass: nvdisasm and cuobjdump; resources: ptxas and cuobjdump -res-usage).

    mlir            TTIR/TTGIR ops, arguments and their specialization attributes.
    ttir_work       one program's dot FLOPs (loops' trip counts evaluated) and the arguments it loads and stores.
    sass_work       the instructions one warp issues (each SASS loop's body once a trip).
    brackets        bracket depth: splits at top-level commas, the bracket closing an opening one.
    memops          PTX/SASS/AMDGCN memory operations.
    ptxops          PTX instruction families and the main loop's order of events.
    sass            SASS from a cubin (nvdisasm), bounded.
    sasscontrol     each SASS instruction's control bits (stalls, barriers).
    liveregs        live registers per instruction and per line (nvdisasm's life ranges).
    sourcemap       every stage's line information -> the user's Python lines (the table);
    lines_asm       ... PTX, SASS and AMDGCN line info,
    lines_llvm      ... LLVM IR line info,
    lines_mlir      ... TTIR/TTGIR locations;
    line_twin       ... and a kernel compiled without line info, through a twin compiled with it.
    callsites       words for where a line came from (the inlined call chain).
    userfile        which paths in line info are the user's file, a helper's, a library's.
    resources       registers, spills, shared/local memory (ptxas, cuobjdump, the cubin).
    occupancy       blocks per SM and what limits them.
    layouts         TTGIR layout attributes.
    tma             TMA copies in TTGIR: which tile each bulk tensor copy moves.
    warpspec        warp-specialized partitions in TTGIR.
    lexers          pygments lexers for each stage.
    passes          the MLIR/LLVM pass dump.
    diagnostics     libtriton's remarks and warnings.
    toolfail        ptxas's failure text, as a value.
    inductor        Inductor's wrapper code: each kernel's file, FX nodes and ATen ops.
    fxgraph         the FX graph Inductor prints above each kernel.
    ncu_source      Nsight Compute's Source page (CSV).
    lessonfile      a lesson file -> Lesson;
    lessonsettings  ... the settings of one lesson step.
"""
