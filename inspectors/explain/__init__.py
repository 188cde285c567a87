"""Layer explain: what the compile means, built from read/. Imports base, process and read;
computes from text and starts nothing of its own.

    insight          the composed per-kernel report (memory ops, source map, resources, thread map).
    step             a result's launches as one table: graph, kernel, warps, stages, lines, ATen ops;
    estimate         ... and each launch's time on a target GPU, estimated from its workload.
    threadmap        %ctaid/%tid -> elements.
    vectorization    why an access is narrower than its layout allows.
    coalescing       how well each global access coalesces (the lesson's model).
    coarsening       the thread-coarsening sweep's figures.
    bankconflicts    shared-memory bank conflicts from the PTX.
    copies           how the main loop brings tiles from global to shared memory.
    layout_view      element -> warp/lane/register from a layout.
    align            the bounded line and word aligner of the diff view.
    diff             the noise-aware stage diff and its delta table;
    delta            ... the figures that matter in one compile;
    version_notes    ... what only a Triton version change explains.
    passdiff         the pass pipeline's per-pass diff.
    remarks          the compiler's reasons and the tool's findings, on their Python lines.
    profile          Nsight Compute's figures on the SASS and Python lines.
    stallcause       stalls charged to the instruction that caused them.
    exercise         the figures a lesson quotes and an exercise checks.
    fusion           the bytes a computation moves unfused and fused.
    tiling           the matmul tile, launch-order and wave models.
"""
