"""Lesson 12: a small GPT trained here on tiny Shakespeare reads the student's text."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import exports, lesson_frame, shakespeare
from dashboard.glossary import glossary_link
from dashboard.render import layout, presenter
from dashboard.settings import Settings
from dashboard.views import real_model

presenter.present(real_model.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Here is a whole language model, **built from this project's own attention layer** and "
    "small enough to train on two CPU cores, reading the text you type one character at a "
    "time. What do its heads look at?"
)
lesson_frame.objectives(__file__)
real_model.show_model_card()
with layout.going_further("what its parameters are") as further:
    if further.open:
        real_model.show_parameters()

st.header("Your text")
text = real_model.text_box()
lesson_frame.reset_button(__file__)
read = real_model.current_reading(text)
if read is None:
    st.stop()

st.header("Every head at once")
st.markdown(
    "Each map is one head reading your text: row i is the character at position i as a query, "
    "column j a key, darker = more weight; the grey crosses are the future, which a causal "
    "model never sees. Under each map: the head's role on **your** text, from the scores below."
)
shakespeare.show_all_heads(read)
with layout.going_further("every head's scores, and how a head is named") as further:
    if further.open:
        real_model.show_scores(read)

st.header("One head, large")
layer, head = real_model.head_picker(read)
real_model.show_one_head(read, layer, head)

st.header("What comes next")
st.markdown(
    "The model's last step turns each position's vector into 65 "
    f"[logits]({glossary_link('logits')}), one per character. A sampler divides them by a "
    f"[**temperature**]({glossary_link('temperature')}), keeps the "
    f"[**top-k**]({glossary_link('top-k')}) likeliest, of those the smallest set whose "
    f"probabilities reach the [**top-p**]({glossary_link('top-p')}), and draws from what is "
    "left, normalised."
)
position, temperature, top_k, top_p = real_model.next_pickers(read)
real_model.show_next(read, position, temperature, top_k, top_p)
with layout.going_further("what it writes next, and the KV cache's speed-up") as further:
    if further.open:
        real_model.show_continuation(read, temperature, top_k, top_p)

st.header("Knock out heads")
st.markdown(
    "Zero a head's output before W_o mixes the heads, and measure the model's loss on your "
    "text again: a head that matters for your text makes it rise."
)
real_model.show_knockout(read, real_model.knockout_picker(read))

st.header("Type it twice")
st.markdown(
    "An **induction head** finds where the current character appeared before and looks at "
    "the character that came next, so a model that has one can predict a second copy of a "
    "string from the first. Does this one? Your text, a made-up name, random letters and two "
    "lines of Shakespeare, each written twice:"
)
real_model.show_twice(read)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            f"Write layer {layer} of this model yourself, one step a cell, on your text: a "
            "notebook with its trained weights and the vectors entering that layer, where a check "
            "under each step compares yours with the model's own numbers."
        )
        exports.show_exercises(
            partial(exports.layer_exercises, Settings(source="shakespeare", text=text, layer=layer))
        )
lesson_frame.finish(__file__, lambda: real_model.lesson_questions(read, temperature, top_k))
