"""Layer explain: what the compile means, built from read/. Imports base and read.

insight (the composed per-kernel report), threadmap (%ctaid/%tid -> elements), vectorization
(why an access is narrower than its layout allows), coalescing and coarsening (the lessons'
models), layout_view (element -> warp/lane/register from a layout), diff (noise-aware stage
diff and delta table), passdiff (the pass pipeline's per-pass diff)."""
