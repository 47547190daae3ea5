"""Lesson 7: the classic from-scratch mistakes, shown breaking; a mystery bug to diagnose."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from attention.bugs import BUGS, COMMAND
from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, layout, matrices, presenter
from dashboard.views import bug_hunt

presenter.present(bug_hunt.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Students who write attention from scratch make the same handful of mistakes, and the worst "
    "of them raise nothing: the numbers are just wrong, and the model even trains, only worse. "
    "Each bug below is the layer of the other lessons with exactly one of its steps written "
    "wrong, run on the same weights and input (the sidebar's)."
)
lesson_frame.objectives(__file__)
bug_hunt.check_link_params()
lesson = lessons.computed(controls.current_settings())
trace = blocks.require_lesson(lesson)
mode = bug_hunt.mode_picker()
lesson_frame.reset_button(__file__)

if mode == "explore":
    name = bug_hunt.bug_picker()
    bug = BUGS[name]
    st.header(bug.title)
    bug_hunt.show_description(bug)
    run = bug_hunt.bug_run(lesson, name)
    if run.error:
        bug_hunt.show_error(run)
    elif not run.stages:
        bug_hunt.show_unchanged(lesson)
    else:
        st.subheader("With the bug and without")
        head = blocks.head_picker(trace, key="bug_head")
        stage = bug_hunt.stage_picker(run)
        if stage is not None:
            bug_hunt.show_side_by_side(lesson, run, stage, head)
        bug_hunt.show_side_by_side(lesson, run, "output", head)
    st.subheader("Live checks")
    bug_hunt.show_checks(lesson, name)
    st.header("Bugs that still train")
    st.markdown(
        "A tiny attention-only transformer (`attention.tiny`) trained from the same seed, once "
        "with the correct layer and once through the bug. The loss falls either way; what "
        f"differs is how far and how fast. Precomputed with `{COMMAND}`."
    )
    bug_hunt.show_training(name)
else:
    st.markdown(
        "The page has picked a bug. You see only what it computes and which checks fail: which "
        "step was written wrong? The mystery number and the sidebar settings are in the link, so "
        "a class can share one mystery."
    )
    seed = bug_hunt.mystery_seed()
    candidates = bug_hunt.mystery_candidates(lesson)
    truth = bug_hunt.mystery_bug(lesson, seed)
    if truth is None:
        bug_hunt.show_unchanged(lesson)
        st.stop()
    run = bug_hunt.bug_run(lesson, truth)
    head = blocks.head_picker(trace, key="bug_head")
    row = layout.wrapping_row()
    with row.container(width="content"):
        st.markdown(f"**Attention weights with the bug** (head {head})")
        blocks.show_heatmap(matrices.stage_view(run.lesson, "weights", head))
    with row.container(width="content"):
        st.markdown("**Output with the bug**")
        blocks.show_heatmap(matrices.stage_view(run.lesson, "output", head))
    st.subheader("The checks")
    bug_hunt.show_failing_checks(lesson, truth)
    bug_hunt.show_guess(lesson, seed, truth, candidates)
    st.button("Next mystery", on_click=bug_hunt.next_mystery, icon=":material/casino:")
    right_answers, answered = bug_hunt.mystery_score()
    st.metric("Score this session", f"{right_answers} / {answered}")

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "Write the layer yourself, one step a cell, in a notebook with the correct layer's "
            "numbers at the sidebar's settings: each of the mistakes above is one of those cells "
            "written wrong, and the check under it says so."
        )
        exports.show_exercises(partial(exports.exercise_notebook, lesson))
lesson_frame.finish(__file__, lambda: bug_hunt.lesson_questions(lesson))
