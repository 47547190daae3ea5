"""Lesson 14: the block around attention, on lesson 12's Shakespeare GPT reading your text."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import exports, lesson_frame
from dashboard.render import presenter
from dashboard.views import block as view

presenter.present(view.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Lessons 12 and 13 used words they did not teach: a **residual stream** that each head's "
    "output is added to, a **LayerNorm** that each part reads it through, an **MLP** after each "
    "attention, and an **unembedding** that turns the last vector into logits. This lesson "
    "opens one **transformer block** of lesson 12's model and follows your text through it: what "
    "each part adds, and how the model's guess for the next character forms, stage by stage."
)
lesson_frame.objectives(__file__)

st.header("One block, written out")
st.markdown(
    "A block has two halves, each the same pattern: **read a LayerNorm of the stream, compute, "
    "add the result back to the stream**. The stream itself is never normalised or replaced, "
    "only added to, so what the embedding put there is still there at the end, next to what "
    "every head and every MLP wrote. That running sum is the **residual stream**. The "
    "LayerNorm sits inside each branch, before its part (**pre-LayerNorm**, as in GPT-2); the "
    "original Transformer normalised the sum after adding (post-LN)."
)
view.show_block()

st.header("Your text")
text = view.text_box()
read = view.current_text(text)
position = view.position_picker(read)
char = view.followed(read, position, view.char_picker())
lesson_frame.reset_button(__file__)

st.header("The residual stream")
st.markdown(
    "One row a position, one column a feature: the stream is a **T × C** matrix, and every "
    "stage (the embedding, each attention, each MLP) adds a T × C matrix of its own to it. Pick "
    "a stage to see the stream after it; the table says how large each addition is at your "
    "position (its length, the square root of the sum of its squares)."
)
stage = view.stage_picker(read)
view.show_stream(read, position, stage)
view.show_sizes(read, position)

st.header("The logit lens: the guess forming")
st.markdown(
    "The model turns its last stream into a guess with the **final LayerNorm** and the "
    "**unembedding** U (one row a character), then a softmax over the characters. The **logit "
    "lens** does the same to the stream part-way, after each stage, and so shows the guess the "
    "model has so far. Each row below is one stage at your position: its three likeliest next "
    "characters, and the probability of the character you follow."
)
view.show_lens(read, position, char)
view.show_agreement()

st.header("Who pushed the logit")
st.markdown(
    "The stream at the end is a sum of parts, and so, nearly, is a logit: hold the final "
    "LayerNorm's spread at the value it had, and it becomes linear, so each part's share can be "
    "read off (**direct attribution**). The bars are each head's, each MLP's and the "
    "embeddings' push on the logit of the character you follow, largest up first."
)
view.show_attribution(read, position, char)

st.header("LayerNorm, on one row")
st.markdown(
    "A LayerNorm works on one position at a time: it subtracts the row's mean, divides by its "
    "spread √(variance + ε), then multiplies each feature by a learned γ and adds a learned β. "
    "Each attention and each MLP reads the stream through one; the final one is the lens's."
)
ln_name = view.ln_picker()
view.show_layer_norm(read, position, ln_name)

st.header("The MLP: C → 4C → C")
st.markdown(
    "After attention has moved information between positions, the MLP works on each position "
    "on its own: a linear layer to four times the width, GELU (which lets positive numbers "
    "through and squeezes negative ones towards 0), and a linear layer back. Each dot below is "
    "one hidden unit: its number before GELU across, after GELU up."
)
view.show_mlp(read, position, view.mlp_picker())

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "Add up the residual stream yourself and read it with the logit lens, on this page's "
            "numbers at your position: a notebook whose checks compare yours with the page."
        )
        exports.show_exercises(partial(view.exercises, read.text, position), view.EXERCISE_WORDS)
lesson_frame.finish(__file__, lambda: view.lesson_questions(read, position, char))
