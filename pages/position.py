"""Lesson 9: where word order comes from."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, layout, presenter
from dashboard.views import position

presenter.present(position.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Self-attention compares every token with every other by content alone. Nothing in "
    "softmax(QKᵀ/√d)V knows which token came first: shuffle the tokens and the outputs are the "
    "same vectors, shuffled the same way. Order has to come from somewhere else."
)
lesson_frame.objectives(__file__)
settings = controls.current_settings()
lesson = lessons.computed(settings)
blocks.require_lesson(lesson)

st.header("Shuffle the tokens")
st.markdown(
    "First **without any mask**, whatever the sidebar's causal switch says (the next part "
    "applies it). P below moves each token to a new position:"
)
position.show_permutation(lesson, settings.seed)

st.subheader("Under the sidebar's mask")
st.markdown(
    "The sidebar's *causal* switch picks the mask for this shuffle: each bar is how far one "
    "output row of Attn(P X) is from the same token's row of Attn(X)."
)
position.show_mask_shuffle(lesson, settings.seed)

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
    "how far apart two tokens are, not on where they are. This page pairs **interleaved** "
    "features, (x₀, x₁), (x₂, x₃), …, as RoFormer and Meta's original Llama code do."
)
position.show_rope_formula()
position.show_rope(lesson)

with layout.going_further("which features make a pair? Meta's and Hugging Face's RoPE") as further:
    if further.open:
        st.markdown(
            "Meta's Llama code (`apply_rotary_emb`) reads each interleaved pair (x₂ᵢ, x₂ᵢ₊₁) as "
            "one complex number and turns it, as this page does. Hugging Face's Llama code "
            "(`rotate_half`) pairs the **first half with the second**: feature i turns with "
            "feature i + d/2. The claim: one rotation, with the features in another order, P = [0, "
            "2, 4, …, 1, 3, 5, …] (what Hugging Face's conversion of Meta's weights does to each "
            "head's rows of W_q and W_k). Both, on this page's q and k of head 0:"
        )
        position.show_rope_pairings(lesson)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "The notebook rebuilds this layer in plain PyTorch, then shuffles the tokens, builds "
            "the sinusoidal table and rotates q and k, checking each against this page."
        )
        exports.show_downloads(
            lesson, section=partial(position.notebook_section, lesson, settings.seed)
        )
lesson_frame.finish(__file__, lambda: position.lesson_questions(settings))
