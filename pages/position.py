"""Lesson 9: where word order comes from."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import controls, exports, lessons
from dashboard.render import blocks
from dashboard.views import position

st.title("9 · Position")
st.markdown(
    "Self-attention compares every token with every other by content alone. Nothing in "
    "softmax(QKᵀ/√d)V knows which token came first: shuffle the tokens and the outputs are the "
    "same vectors, shuffled the same way. Order has to come from somewhere else."
)
settings = controls.current_settings()
lesson = lessons.lesson(settings)
blocks.require_lesson(lesson)

st.header("Shuffle the tokens")
position.show_permutation(lesson, settings.seed)

st.header("Sinusoidal positions, added to X")
st.markdown(
    "The original Transformer adds a fixed pattern to each token's vector: "
    "PE[pos, 2i] = sin(pos / 10000^(2i/C)), PE[pos, 2i+1] = cos(…). The sidebar's *sentence* "
    "input adds it when *Add sinusoidal positions* is on."
)
position.show_sinusoidal(lesson)

st.header("RoPE: rotate q and k by their positions")
st.markdown(
    "Rotary embeddings (RoFormer; used by Llama, Mistral) leave X alone and rotate each pair of "
    "features of q and k by an angle proportional to the position. A score then depends on "
    "how far apart two tokens are, not on where they are."
)
position.show_rope(lesson)

st.header("Take it home")
st.markdown(
    "The notebook rebuilds this layer in plain PyTorch, then shuffles the tokens, builds the "
    "sinusoidal table and rotates q and k, checking each against this page."
)
exports.show_downloads(lesson, section=partial(position.notebook_section, lesson, settings.seed))
