"""Presenter mode (?present=1): a lesson's sections one per screen, sized for a projector.

A lesson declares its sections (`Section`: a title, a function that draws it, a note for the
teacher); `present` shows only the current one and stops the page, so the page's title block
is never drawn. Previous / Next answer Page Up / Page Down (a presentation clicker), and the
section's number is in the URL (?present=1&section=3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import streamlit as st

PRESENT_KEY = "present"  # ?present=1: presenter mode, for a projector
PRESENT_STATE = "presenter_mode"  # where the session keeps it
SECTION_KEY = "section"  # ?section=3: the section shown, counted from 1
SECTION_STATE = "presenter_section"  # the link's or the buttons' section, until drawn
SECTION_SHOWN = "presenter_section_key"  # the key of the section drawn on this run
NOTES_KEY = "present_notes"  # the teacher's notes toggle
STUDENT_KEY = "present_student"  # session key: a joined student (the class bar sets it): no notes

# Compact: the page's top padding only clears Streamlit's header. Sections are drawn for the
# smallest screen (1024 × 768 at 150 % leaves 683 × 512 CSS px; 1280 × 720 at 150 %, 853 × 480);
# FIT then scales the section to the window it is shown in (CSS zoom), so a projector at 100 %
# shows it as large as it fits. The data grids keep their own size (the zoom undone on them): a
# grid sizes its canvas from the zoomed box and is then zoomed again, which cut its columns.
# Streamlit's header (the sidebar's and the menu's buttons) is hidden: Leave presenter mode
# brings it back.
DESIGN_WIDTH = 683  # CSS px: the width a section is laid out at before it is zoomed
STYLE = """<style>
[data-testid="stHeader"] { display: none; }
[data-testid="stMainBlockContainer"] { padding-top: 10px; padding-bottom: 0; }
@media (min-width: 900px) {  /* a projector's window: the section, not the margins */
  [data-testid="stMainBlockContainer"] { padding-left: 32px; padding-right: 32px; }
}
.st-key-present_screen h3 { font-size: 1.5rem; padding: 0; }
.st-key-present_body [data-testid="stDataFrame"] { zoom: calc(1 / var(--present-zoom, 1)); }
</style>"""

# The section's zoom (its title, notes and content; the navigation row keeps its size): as large
# as its drawn content (text, charts, tables, buttons, measured laid out DESIGN_WIDTH wide at
# zoom 1) fits the main column's width and the window's height below the navigation row; the
# section is then exactly as wide as the column. In a window too small to zoom, the section as
# the page draws it, shrunk to the column's width where it is wider (a phone). Refitted when
# the section changes (a chart drawn, the Notes opened, another section) or the window is
# resized. Installed once per browser tab.
FIT = """<script>
if (!window.attentionFit) {
  window.attentionFit = true;
  const DRAWN = "canvas, svg, table, pre, button, [data-testid=stDataFrame]";
  const drawnRight = (body) => {  // the right edge of what the section draws
    let right = 0;
    const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      right = Math.max(right, range.getBoundingClientRect().right);
    }
    for (const el of body.querySelectorAll(DRAWN)) {
      right = Math.max(right, el.getBoundingClientRect().right);
    }
    return right;
  };
  let watched = null;  // the section whose size changes (a font, a late chart) refit it
  const resized = new ResizeObserver(() => later());
  const fit = () => {
    const body = document.querySelector(".st-key-present_body");
    if (!body) return;
    if (body !== watched) {
      resized.disconnect();
      resized.observe(body);
      watched = body;
    }
    body.style.zoom = 1;
    body.style.width = "DESIGN_WIDTHpx";
    const box = body.getBoundingClientRect();
    const room = body.parentElement.getBoundingClientRect().width;
    const below = window.innerHeight - box.top - 8;
    let zoom = Math.min(room / Math.max(drawnRight(body) - box.left, 1),
                        below / body.scrollHeight);
    // laid out anew, exactly the column's width once zoomed; narrower, a row of charts may
    // wrap and grow taller: then a smaller zoom (a few tries)
    for (let tries = 0; zoom > 1 && tries < 8; tries++) {
      body.style.width = `${room / zoom}px`;
      if (body.scrollHeight * zoom <= below) break;
      zoom = Math.min(zoom * 0.95, below / body.scrollHeight);
    }
    if (zoom <= 1) {  // a small window: the section as the page draws it, no wider than the
      body.style.width = "";  // screen (a phone: a chart drawn for the projector was cut at
      const wide = room / Math.max(drawnRight(body) - box.left, 1);  // its 5th column)
      const shrink = Math.min(wide, 1);
      body.style.setProperty("--present-zoom", shrink);
      body.style.zoom = shrink;
      return;
    }
    body.style.setProperty("--present-zoom", zoom);
    body.style.zoom = zoom;
  };
  let queued = false;
  const later = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; fit(); });
  };
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true});
  window.addEventListener("resize", later);
}
</script>""".replace("DESIGN_WIDTH", str(DESIGN_WIDTH))


# A clicker sends Page Down / Page Up. Streamlit's button shortcuts ignore a key pressed while a
# control has the focus (the Notes toggle just clicked), and a focused slider takes Page Down as
# its own (lesson 11's tile step): the clicker then did nothing. Caught first, on the window, the
# key always turns the page: the focus leaves the control, the button is clicked, nobody else
# sees the key. Installed once per browser tab.
CLICKER = """<script>
if (!window.attentionClicker) {
  window.attentionClicker = true;
  window.addEventListener("keydown", (event) => {
    const name = {PageDown: "present_next", PageUp: "present_prev"}[event.key];
    const button = name && document.querySelector(`.st-key-${name} button`);
    if (!button) return;  // not in presenter mode
    event.preventDefault();
    event.stopImmediatePropagation();
    if (document.activeElement && document.activeElement !== document.body) {
      document.activeElement.blur();
    }
    if (!button.disabled) button.click();
  }, true);
}
</script>"""


@dataclass(frozen=True)
class Section:
    """One screen of a lesson in presenter mode: its title, what it draws (a chart, a table, a
    sentence), the teacher's note (what to point at, a question to ask), and its key: a name
    that stays when the title follows the settings ("Decode step 7" at T = 8 is key "last_step"),
    by which the course plan's links open it (`?section=last_step`)."""

    title: str
    draw: Callable[[], None]
    note: str
    key: str = field(kw_only=True)


def presenter_theme() -> str | None:
    """None, or in presenter mode the theme ("light" or "dark") its axis text is drawn for.
    (Streamlit may report "light" on a session's very first run; the next run corrects it.)"""
    if not st.session_state.get(PRESENT_STATE, False):
        return None
    return "dark" if getattr(st.context.theme, "type", None) == "dark" else "light"


def present(sections: Callable[[], Sequence[Section]]) -> None:
    """In presenter mode, show the current one of the lesson's sections and stop the page;
    otherwise do nothing (the page goes on, every section in it)."""
    if not presenter_theme():
        return
    shown = sections()
    at = section_number(st.session_state.get(SECTION_STATE), shown)
    go_to(at)  # the URL names the section drawn, whatever the link asked for
    section = shown[at - 1]
    st.session_state[SECTION_SHOWN] = section.key
    student = st.session_state.get(STUDENT_KEY, False)
    notes = st.session_state.get(NOTES_KEY, False) and not student
    st.html(STYLE)
    st.sidebar.html(CLICKER + FIT, unsafe_allow_javascript=True, width="content")  # closed
    with st.container(key="present_screen", gap="small"):
        with st.container(key="present_nav", horizontal=True, vertical_alignment="center",
                          gap="small"):  # fmt: skip
            st.button("Previous", key="present_prev", icon=":material/arrow_back:",
                      shortcut="PageUp", disabled=at == 1, on_click=go_to,
                      args=(at - 1,))  # fmt: skip
            st.markdown(f"**{at} / {len(shown)}**", width="content")
            st.button("Next", key="present_next", icon=":material/arrow_forward:",
                      shortcut="PageDown", disabled=at == len(shown), on_click=go_to,
                      args=(at + 1,))  # fmt: skip
            st.space("stretch")
            if not student:
                st.toggle("Notes", value=False, key=NOTES_KEY, help="The teacher's notes")
            st.button("Leave", key="present_leave", type="tertiary", icon=":material/close:",
                      help="Leave presenter mode", on_click=leave_presenter_mode)  # fmt: skip
        with st.container(key="present_body", gap="small"):  # zoomed to the window (FIT)
            if notes:
                st.info(section.note, icon=":material/record_voice_over:")
            st.markdown(f"### {section.title}")
            section.draw()
    st.stop()


def section_number(raw: object, sections: Sequence[Section]) -> int:
    """The section to show, 1..len(sections): the link's (or a button's) number, clamped, or
    the number of the section the link names by its key (the course plan's links do) or by its
    title; 1 when it is missing or none of these."""
    text = str(raw).strip()
    try:
        number = int(text)
    except ValueError:
        named = [
            n
            for n, section in enumerate(sections, start=1)
            if text in (section.key, section.key.replace("_", " "))
            or section.title.casefold() == text.casefold()
        ]
        return named[0] if named else 1
    return min(max(number, 1), len(sections))


def go_to(number: int) -> None:
    """Show section `number` on this run (or the next, from a button) and name it in the URL.
    No widget is bound to ?section= (a bound widget's value set from code reaches the browser
    with a stale copy of the URL, controls.heads_slider): the URL is written here."""
    st.session_state[SECTION_STATE] = number
    st.query_params[SECTION_KEY] = str(number)


def leave_presenter_mode() -> None:
    st.session_state[PRESENT_STATE] = False
    st.session_state.pop(SECTION_STATE, None)
    st.query_params.pop(PRESENT_KEY, None)
    st.query_params.pop(SECTION_KEY, None)


def presenter_mode() -> bool:
    """Read ?present=1 (or true/on/yes; 0/false/off turn it off) and ?section= into the
    session, and take both out of the query string for this run: the sidebar's link check lists
    every key it does not own as unknown. keep_presenter_link and `present` put them back."""
    raw = st.query_params.get(PRESENT_KEY)
    if raw is not None:
        value = raw.strip().lower()
        st.session_state[PRESENT_STATE] = value in PRESENT_ON
        st.session_state[PRESENT_REFUSED] = value not in PRESENT_ON + PRESENT_OFF
        del st.query_params[PRESENT_KEY]
    section = st.query_params.get(SECTION_KEY)
    if section is not None:
        st.session_state[SECTION_STATE] = section
        del st.query_params[SECTION_KEY]
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
