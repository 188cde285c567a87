"""The sidebar's compile options (app/views/explorer.py): target GPU, Triton version,
num_warps/num_stages, constexpr overrides, signature and time limit, each a widget keyed in
app/state/keys.py; `chosen` turns a num_warps/num_stages value into the compile's."""
from __future__ import annotations

import streamlit as st

from app.backend import services
from app.state import keys
from inspectors.base import targets

# "default" (the launcher's own), not None: a keyed selectbox set to None is drawn "Choose an option"
DEFAULT = "default"
WARPS = [DEFAULT, 1, 2, 4, 8, 16, 32]
STAGE_COUNTS = [DEFAULT, 1, 2, 3, 4, 5]


def chosen(value):
    """A num_warps/num_stages selectbox's value as the compile takes it: None for the launcher's own."""
    return None if value in (DEFAULT, None) else value


ss = st.session_state


def draw(settings, engine) -> None:
    """Target, Triton version, num_warps/num_stages, constexprs, signature and time limit."""
    target_keys = list(targets.KNOWN)
    if keys.TARGET not in ss:
        ss[keys.TARGET] = settings.default_target if settings.default_target in target_keys else target_keys[0]
    versions = services.lens().versions()
    if len(versions) > 1:      # extra versions set up (README, "Several Triton versions"): side by side,
        t_col, v_col = st.columns([3, 2], gap="small")    # so that the sidebar stays on the first screen
        t_col.selectbox("Target GPU", target_keys, key=keys.TARGET, format_func=lambda k: targets.parse(k).label)
        if ss.get(keys.TRITON) not in versions:
            ss[keys.TRITON] = engine.triton_version or versions[-1]
        v_col.selectbox("Triton", versions, key=keys.TRITON,
                        help=f"Which Triton version compiles the kernel, each in its own compile worker; "
                             f"{engine.triton_version} is this server's own.")
    else:
        st.selectbox("Target GPU", target_keys, key=keys.TARGET, format_func=lambda k: targets.parse(k).label)
    # side by side and the rare options folded: the sidebar stays on the first screen at 1280×720
    w_col, s_col = st.columns(2, gap="small")
    w_col.selectbox("num_warps", WARPS, key=keys.NUM_WARPS, help="default: as the launcher says", format_func=str)
    s_col.selectbox("num_stages", STAGE_COUNTS, key=keys.NUM_STAGES, help="default: as the launcher says",
                    format_func=str)
    st.text_input("constexpr overrides", key=keys.CONSTEXPRS, placeholder="BLOCK_SIZE=512, ACTIVATION=relu",
                  help="Replace constexpr values of every launch, e.g. BLOCK_SIZE=512.")
    with st.expander("Signature, time limit", expanded=bool(ss.get(keys.SIGNATURE))):
        st.text_input("signature (files without example())", key=keys.SIGNATURE,
                      placeholder="*fp32:16, *fp32:16, *fp32:16, i32:16, 1024",
                      help="Positional types as in Triton's AOT compiler: ':16' marks divisible by 16 / "
                           "16-byte aligned, a number is a constexpr value. Leave empty to run example().")
        if settings.class_mode:   # the server's limit (the engine holds every job to it)
            ss[keys.TIMEOUT] = int(settings.compile_timeout_s)
        st.number_input("time limit (s)", min_value=5, max_value=600, key=keys.TIMEOUT, disabled=settings.class_mode,
                        help="Set by the class server (TLENS_COMPILE_TIMEOUT)" if settings.class_mode else None)
