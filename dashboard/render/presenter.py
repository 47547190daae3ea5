"""Presenter mode (?present=1): one section at a time, large charts, for a projector."""

from __future__ import annotations

import streamlit as st

PRESENT_KEY = "present"  # ?present=1: presenter mode, for a projector
PRESENT_STATE = "presenter_mode"  # where the session keeps it


def presenter_theme() -> str | None:
    """None, or in presenter mode the theme ("light" or "dark") its axis text is drawn for.
    (Streamlit may report "light" on a session's very first run; the next run corrects it.)"""
    if not st.session_state.get(PRESENT_STATE, False):
        return None
    return "dark" if getattr(st.context.theme, "type", None) == "dark" else "light"


def presented_stages(names: list[str], key: str) -> list[str]:
    """The stages a page shows: all of them, or in presenter mode one at a time, with
    Previous / Next buttons (the stage's position is kept per page under `key`)."""
    if not presenter_theme():
        return names
    at = min(max(int(st.session_state.get(key, 0)), 0), len(names) - 1)
    st.session_state[key] = at
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        st.button("Previous stage", key=f"{key}_prev", icon=":material/arrow_back:",
                  disabled=at == 0, on_click=step_stage, args=(key, -1))  # fmt: skip
        st.markdown(f"**Stage {at + 1} of {len(names)}**")
        st.button("Next stage", key=f"{key}_next", icon=":material/arrow_forward:",
                  disabled=at == len(names) - 1, on_click=step_stage, args=(key, 1))  # fmt: skip
        st.button("Leave presenter mode", key=f"{key}_leave", type="tertiary",
                  on_click=leave_presenter_mode)  # fmt: skip
    return [names[at]]


def step_stage(key: str, by: int) -> None:
    st.session_state[key] = int(st.session_state.get(key, 0)) + by


def leave_presenter_mode() -> None:
    st.session_state[PRESENT_STATE] = False
    st.query_params.pop(PRESENT_KEY, None)


def presenter_mode() -> bool:
    """Read ?present=1 (or true/on/yes; 0/false/off turn it off) into the session, and take it
    out of the query string for this run: the sidebar's link check lists every key it does not
    own as unknown. keep_presenter_link puts it back."""
    raw = st.query_params.get(PRESENT_KEY)
    if raw is not None:
        value = raw.strip().lower()
        st.session_state[PRESENT_STATE] = value in PRESENT_ON
        st.session_state[PRESENT_REFUSED] = value not in PRESENT_ON + PRESENT_OFF
        del st.query_params[PRESENT_KEY]
    return bool(st.session_state.get(PRESENT_STATE, False))


PRESENT_ON, PRESENT_OFF = ("1", "true", "on", "yes"), ("0", "false", "off", "no")
PRESENT_REFUSED = "presenter_refused"  # the link's value was neither: say so once


def keep_presenter_link(present: bool) -> None:
    """Keep ?present=1 in the address bar, so the teacher's link reopens presenter mode; say
    so when the link's value meant nothing (the value itself is not echoed)."""
    if present:
        st.query_params[PRESENT_KEY] = "1"
    if st.session_state.pop(PRESENT_REFUSED, False):
        st.sidebar.warning(
            "The link's present= value must be 1 (presenter mode on) or 0 (off): it is off.",
            icon=":material/link_off:",
        )
