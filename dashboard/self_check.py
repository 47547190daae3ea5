"""The concept check for a learner alone (issue 45, item 4): form A before lesson 1, form B after
lesson 12, on the home page; the answers are kept as progress is (dashboard/progress.py: a
cookie and the store, no account), and the home page shows the learner's own before and after
per concept. The items and figures are attention/concepts.py's."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attention import concepts
from dashboard import progress
from dashboard.text import plain

WHEN_LABEL = {"before": "Before lesson 1 (form A)", "after": "After the last lesson (form B)"}


def kept_answers(when: str) -> dict[int, str]:
    """The learner's kept answers to a check: item number -> choice."""
    head = f"concept:{when}:"
    return {
        int(item[len(head) :]): value
        for item, value in progress.progress().items()
        if item.startswith(head) and item[len(head) :].isdigit()
    }


def show() -> None:
    """The check in an expander: pick when, answer the ten items, send; then the learner's own
    figures once both were taken. Drawn while closed, unlike the course plan's lectures: its
    ticked answers live in the browser's form until sent, and a section drawn only while open
    would drop them when closed (14 of the home page's 61 messages)."""
    with st.expander("Check what you know: ten questions before lesson 1, and after the last"):
        st.caption(
            "About 8 minutes. Take form A before you start and form B when you have finished: "
            "the same ideas on other numbers. Your answers are kept in this browser, as your "
            "progress is; nothing is shown to anyone else."
        )
        when = st.segmented_control(
            "Which check", list(WHEN_LABEL), format_func=WHEN_LABEL.get, default="before",
            key="self_check_when",
        ) or "before"  # fmt: skip
        form = concepts.WHEN_FORM[when]
        kept = kept_answers(when)
        with st.form(f"self_check_{when}", border=False):
            chosen = {}
            for item in concepts.FORMS[form]:
                previous = kept.get(item.number)
                chosen[item.number] = st.radio(
                    plain(f"{item.number}. {item.prompt}"), item.choices,
                    index=item.choices.index(previous) if previous in item.choices else None,
                    key=f"self_check_{when}_{item.number}",
                )  # fmt: skip
            sent = st.form_submit_button("Keep my answers", icon=":material/save:")
        if sent:
            for number, choice in chosen.items():
                if choice is not None:
                    progress.keep(f"concept:{when}:{number}", choice)
            kept = kept_answers(when)
        if kept:
            right = concepts.score(form, kept)
            items = len(concepts.FORMS[form])
            st.success(f"{WHEN_LABEL[when]}: {len(kept)} of {items} answered; "
                       f"{round(right * items / 100)} of the {items} right ({right:.0f} %).",
                       icon=":material/check:")  # fmt: skip
        show_own_figures()


def show_own_figures() -> None:
    """Per concept, right before and after; the learner's normalized change."""
    before, after = kept_answers("before"), kept_answers("after")
    if not (before and after):
        return
    rows = []
    for index, concept in enumerate(concepts.CONCEPTS):
        a, b = concepts.FORMS["A"][index], concepts.FORMS["B"][index]
        rows.append({
            "concept": concept,
            "before": "right" if before.get(a.number) == a.right else "not yet",
            "after": "right" if after.get(b.number) == b.right else "not yet",
        })  # fmt: skip
    pre, post = concepts.score("A", before), concepts.score("B", after)
    change = concepts.normalized_change(pre, post)
    said = "" if change is None else f"; your normalized change c = {change:.2f}"
    st.markdown(f"**Your before and after**: {pre:.0f} % then {post:.0f} %{said}.")
    st.dataframe(pd.DataFrame(rows), hide_index=True)
