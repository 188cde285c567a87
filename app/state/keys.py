"""Every session key of the app, named once. A key is a widget's (AppTest drives widgets by key;
the browser sees `.st-key-NAME`) or a value the app keeps in `st.session_state`; either way its
name is here, and tests/unit/test_layering.py fails on a literal session key in app/ that is not.

A key made per item (`ws-name-{file}`, `opt-{side}-target`) is a function or a prefix here.
Renaming a widget key breaks shared test scripts and browser tests: don't.
"""
from __future__ import annotations

# ---- across pages ------------------------------------------------------------------------------
KEPT = "_kept"                    # keep.py: the values of widgets not drawn on the page shown
PRESENT = "present"               # the presentation-mode toggle (widget); its value is kept (keep.py)
PRESENT_EXIT = "present-exit"     # "Exit presentation" on the present bar
USER = "tlens_user"               # whose workspace (workspace.py)
NEW_TOKEN = "tlens_new_token"     # the cookie token this session made; its element is drawn on every run (workspace.py)
RECORDS = "records"               # compile records of this session by id (records.py)
HISTORY = "history"               # their ids, oldest first
VIEWPORT = "_tlens_viewport_width"   # the browser's width (app/components/stage_panel)


def cookie(name: str) -> str:     # the element that sets a cookie
    return f"tlens-cookie-{name}"


# ---- the explorer: what to compile (widgets; kept across pages) --------------------------------
PICKER = "picker"                 # the kernel picker: a library slug, "ws:NAME.py" or "disk:/PATH.py"
DISK_SEEN = "_disk_seen"          # the opened disk file's project as last read: mtimes (kernel_files.changed_on_disk)
DISK_COMPILE = "_disk_compile"    # the disk file changed: compile it on this run
SOURCE = "source"                 # the kernel editor (its text)
TARGET = "target"
TRITON = "triton"                 # which Triton version (when several are set up)
NUM_WARPS = "num_warps"
NUM_STAGES = "num_stages"
RUNS = "tlens_runs"               # how many runs of the explorer this session has had (keep.resend_early)
CONSTEXPRS = "constexprs"
SIGNATURE = "signature"
TIMEOUT = "timeout"
LAUNCH = "launch"                 # which launch of example() is shown
PREVIEW_LAUNCH = "preview_launch" # the launch picked while the others compile (app/widgets/streaming.py)
STEP_GPU = "step-gpu"             # the GPU the step table estimates times on (inspectors/base/gpu_specs.py)
STEP_LINE = "step-line"           # the model's line last clicked in Your model: the step table lights its rows
STEP_PICTURE = "step-picture"     # the step table's picture toggle
STEP_MEASURE = "step-measure"     # the step table's "Measure on this machine's GPU" button
STEP_MEASURED = "step-measured"   # ((result key, source), {kernel: {"median_us", "calls"}}): the times measured
STEP_TABLE = "step-table"         # the step's table of launches (app/widgets/step_table.py): its row selection
STEP_OPENED = "step-opened"       # the table row whose launch the picker was last set to
FOLLOW = "follow"                 # the followed Python line
HEAT = "heat"                     # "Measured heat" toggle
REGS = "live-regs"                # "Live registers" toggle (bars in the Python panel)
INSIGHT = "insight"               # the section shown below the panels (Why, Memory operations, ...)
WHY_LINK = "why-"                 # + n: the Why list's n-th entry (a link that follows its line)
COMPILE = "compile"               # the Compile button
COMPILE_PRESENT = "compile-present"   # Compile on the present bar
COMPARE_PREVIOUS = "compare-previous"
EXPORT = "export"
EDITOR_BOX = "tlens-editor"       # the editor's expander (open/folded); presentation CSS hides it
SIDEBAR_KEPT = (PICKER, SOURCE, TARGET, TRITON, NUM_WARPS, NUM_STAGES, CONSTEXPRS, SIGNATURE, TIMEOUT)
EXPLORER_KEPT = (*SIDEBAR_KEPT, LAUNCH, FOLLOW, INSIGHT)

# ---- the explorer: the kernel file and the compile (values) ------------------------------------
EDITING = "editing"               # the picker entry whose text the editor holds
COPIES = "copies"                 # library slug -> workspace file with this session's edits
WS_MESSAGE = "ws_message"         # (kind, text) shown above the editor on the next run
UNDO = "undo"                     # (token, name) of the last deleted file
COMPILE_REQUEST = "compile_request"   # a compile asked for, until its result is stored
RESULT = "result"                 # the shown CompileResult
RESULT_REQUEST = "result_request"     # the request that made it
CURRENT_RECORD = "current_record"     # its record id (history)
COMPARE_PICK = "compare_pick"     # (a, b) record ids handed to the Compare page
URL_APPLIED = "_url_applied"      # the URL was read (once per session)
URL_PENDING = "_url_pending"      # its launch, panels and line, until a run gets to the end
URL_IGNORED = "_url_ignored"      # what the link gave that was not used: said on every run of the page
EDITOR_REOPEN = "_editor_reopen"
EDITOR_FOLDED_FOR = "_editor_folded_for"
LAST_COMPILE_S = "last_compile_s"
LAST_COMPILE = "last_compile"     # this click's part of the last compile: {key, hit, page_s} (services.compile_kernel)
FULL_RUN = "_full_run"            # this run is the whole page's, not the explorer's main_area fragment alone
PAGE_SHOWS = "_page_shows"        # what the explorer outside its main_area fragment was drawn with
RUN_STARTED = "run_started"       # when this run of the page started (app/main.py): a compile's "page" time
WS_BOX = "ws-box"                 # the sidebar's Workspace expander (its body drawn only when open)
WS_RENAME, WS_DUPLICATE, WS_DELETE, WS_UNDO = "ws-rename", "ws-duplicate", "ws-delete", "ws-undo"


def ws_name(file: str) -> str:    # the workspace file's name field
    return f"ws-name-{file}"


def stages_pick(backend: str, present: bool = False) -> str:     # the stages multiselect
    return f"{'present-' if present else ''}stages-{backend}"


def auto_stages(stage_key: str) -> str:       # the default last put into a stages multiselect
    return f"_auto-{stage_key}"


def panel(stage: str, launch: int) -> str:    # a stage panel element
    return f"panel-{stage}-{launch}"


# ---- the Compare page --------------------------------------------------------------------------
COMPARE = ("cmp-a", "cmp-b", "cmp-stage", "cmp-mode", "cmp-launch", "cmp-swap", "cmp-only-changed", "cmp-noise",
           "cmp-delta", "cmp-all", "opt-src", "opt-entered", "opt-build", "opt-a-triton", "opt-b-triton")
COMPARE_PREFIXES = ("opt-", "opt-pair-")      # opt-{side}-target/warps/stages/constexprs/triton, opt-pair-{mode}

# ---- the Benchmark page ------------------------------------------------------------------------
BENCH = ("bench-result", "bench-result-size", "bench-versions-result", "bench-vrounds", "bench-versions", "bench-vb",
         "bench-va", "bench-table", "bench-sweep", "bench-run", "bench-kernel", "bench-gpu", "bench-draft",
         "bench-csv", "full_sweep", "full_sweep_btn")
BENCH_PREFIXES = ("bench-size-", "bench-providers-", "ref-")

# ---- the Caches & torch.compile page -----------------------------------------------------------
CACHES = ("tc_source", "tc_run_result", "tc_loaded", "tc_run", "tc_pick", "tc_example", "clear_results", "caches_mode",
          "tc_target", "tc_target_run", "tc_target_result", "tc_launch", "tc_follow", "cache_query", "cache_pick", "cache_page", "cache_location", "cache_folder")

# ---- the Pass pipeline page --------------------------------------------------------------------
PASSES = ("passes_request", "passes_result", "passes_target", "passes_kernel", "passes_source", "passes_query",
          "passes_pick", "passes_only_changed", "passes_noise", "passes_levels", "passes_launch", "passes_download",
          "passes_compile")

# ---- the Layouts page --------------------------------------------------------------------------
LAYOUTS = ("lay_shape", "lay_layout", "lay_target", "lay_kernel", "lay_warps", "lay_warp", "lay_launch", "lay_lane",
           "lay_graph_warps", "lay_graph_lanes")

# ---- the Lessons page (and app/lessons/) -------------------------------------------------------
LESSONS = ("lesson", "lesson_step", "big", "lesson_prev", "lesson_next", "open-big", "tiling_stages_pick",
           "coal_stride", "rerun")
LESSON_PREFIXES = ("demo-",)

# ---- the stage panel's demo page (app/components/stage_panel/demo.py) --------------------------
DEMO = ("demo-big",)


def named() -> tuple[set[str], tuple[str, ...]]:
    """(every fixed key, every prefix of a made key): what tests/unit/test_layering.py checks app/ against."""
    fixed, prefixes = set(), list(COMPARE_PREFIXES + BENCH_PREFIXES + LESSON_PREFIXES)
    for name, value in globals().items():
        if name.isupper() and isinstance(value, str):
            fixed.add(value)
        elif name.isupper() and isinstance(value, tuple) and not name.endswith("PREFIXES"):
            fixed.update(value)
    prefixes += ["tlens-cookie-", "ws-name-", "stages-", "present-stages-", "_auto-", "panel-"]
    return fixed, tuple(prefixes)
