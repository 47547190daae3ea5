"""Lesson 6: tiny transformers trained on synthetic tasks: what their heads learn."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import exports, lesson_frame, shakespeare, trained
from dashboard.render import presenter
from dashboard.settings import Settings
from dashboard.views import what_heads_learn

presenter.present(what_heads_learn.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Every other lesson runs on random weights, so its patterns are noise. Here each task has "
    "its own tiny transformer, **trained on this project's own attention layer** until it "
    "solves the task. Look at what its heads learned, replay how they formed, type your own "
    "input, and switch heads off to see what each one does."
)
lesson_frame.objectives(__file__)
name = what_heads_learn.task_picker()
run = what_heads_learn.current_run(name)
lesson_frame.reset_button(__file__)
what_heads_learn.show_task(run)

st.header("The task and the model's answer")
st.markdown(
    "The fixed example below, what the task wants at each position, and what the model "
    "predicts (✔ right, ✘ wrong)."
)
what_heads_learn.show_prediction(run, what_heads_learn.example_prediction(run))

st.header("Head gallery")
st.markdown(
    "Every head of every layer on the example: row i is query position i, column j key "
    "position j, darker = more weight; a grey cross marks a key the query may not see. Under "
    "each: what kind of head it is, with our score and TransformerLens's (TL) for that kind."
)
what_heads_learn.show_gallery(run)

st.subheader("The same roles in a real model")
st.markdown(
    "Lesson 12's small GPT learned from Shakespeare, not from a task, and its heads took on "
    "roles of their own. Here they are reading a line of Romeo, each named from its scores on "
    "that line (lesson 12 lets you type your own)."
)
shakespeare.show_all_heads(shakespeare.reading(shakespeare.TEXT_DEFAULT), 150)

st.header("Watch it learn")
st.markdown(
    "Slide through training: step 0 is the random start. Watch the heads go from noise to "
    "structure as the loss falls. On the induction task the loss sits still, then drops "
    "suddenly: that is the moment the induction head forms (the *phase change* of Olsson et "
    "al., 2022), visible in the snapshots just before and after the drop."
)
what_heads_learn.show_training_replay(run)
what_heads_learn.show_retrain(run)

st.header("Probe it")
st.markdown("Type your own sequence from the task's tokens and watch the prediction and patterns.")
what_heads_learn.show_probe(run)

st.header("Knock out heads")
st.markdown(
    "Switch heads off (their output Z is set to 0 before W_o) and see what the model can still "
    "do. A head whose pattern looks important may not be: the knock-out tells."
)
what_heads_learn.show_knockout(run)

st.header("Random vs trained")
st.markdown("The same input through the same architecture, before and after training.")
what_heads_learn.show_random_vs_trained(run)

st.header("Follow a trained head through the other lessons")
st.markdown(
    "Open the step-by-step and multi-head lessons on this model's layers: every number there "
    "(Q, K, V, scores, weights, one cell by hand) is then this trained layer's."
)
what_heads_learn.show_other_lessons(run)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "Write layer 0 of this task's shipped model yourself, one step a cell, on the example "
            "above (the model the step-by-step links open, "
            + ("this one" if run is trained.shipped(name) else "not the one you trained")
            + "): a notebook with its trained weights and the layer's input, where a check under "
            "each step compares yours with the numbers the step-by-step lesson shows for it."
        )
        exports.show_exercises(
            partial(
                exports.layer_exercises, Settings(source="trained", task=run.task.name, layer=0)
            )
        )
lesson_frame.finish(__file__, lambda: what_heads_learn.lesson_questions(run))
