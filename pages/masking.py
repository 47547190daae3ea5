"""Lesson 3: causal and padding masks, -inf vs -1e9, and the three mask conventions."""

from dashboard.frame import require_frame

require_frame()

import streamlit as st

from dashboard import controls, exports, lesson_frame, lessons
from dashboard.render import blocks, layout, presenter
from dashboard.text import plain
from dashboard.views import masking

presenter.present(masking.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "A mask decides which keys each query may look at. The **causal** mask hides the future "
    "(token i sees tokens 0 … i); a **padding** mask hides filler tokens added to make "
    "sequences the same length. Masked scores are set to −∞ before the softmax, so their "
    "weights come out exactly 0."
)
lesson_frame.objectives(__file__)
settings = controls.current_settings()
base = lessons.computed(settings)
blocks.require_lesson(base)
T = len(base.labels)

left, right = st.columns(2)
n_padding = layout.bounded_slider(
    left,
    "Padding tokens at the end",
    T - 1,
    key="pad",
    help="These keys are filler: no query may attend to them.",
    single="a single token cannot be padding",
)
causal = base.settings.causal  # a trained model's own: the reverse task reads both ways
fixed = settings.source in ("trained", "shakespeare")
right.markdown(
    f"**Causal mask: {'on' if causal else 'off'}** "
    f"({'fixed by the trained model' if fixed else 'switch it in the sidebar'}).  \n"
    f"Combined mask = causal AND not-padding."
)
lesson_frame.reset_button(__file__, right)
lesson = lessons.computed(settings, lessons.Variant(n_padding=n_padding))

st.header("One mask, three conventions")
st.markdown(
    "The same mask is written three ways in common code. Mixing them up silently **inverts** "
    "the mask, so always check which one a function expects."
)
masking.show_mask_conventions(lesson)

st.header("The mask at work")
head = blocks.head_picker(lesson.trace, key="mask_head")
blocks.show_stage(lesson, "masked", head)
blocks.show_stage(lesson, "weights", head)
blocks.show_checks(lesson)

st.header("−∞ or −1e9? A fully masked row")
st.markdown(
    "Many tutorials fill masked scores with −1e9 instead of −∞. While each row keeps at least "
    "one allowed key the two give the same weights (exp(−1e9) is exactly 0 in float32). They "
    f"part ways when a query may attend to **nothing**; below, every key of the last query "
    f"({plain(base.labels[-1])}) is blocked as well:"
)
empty = lessons.Variant(n_padding=n_padding, empty_last_row=True, mask_value=float("-inf"))
with_inf = lessons.computed(settings, empty)
with_big = lessons.computed(
    settings, lessons.Variant(n_padding=n_padding, empty_last_row=True, mask_value=-1e9)
)
masking.show_fill_comparison(with_inf, with_big)
st.markdown(
    "- With **−∞**, a naive softmax computes 0 / 0 = **NaN**, and the NaN spreads to the output.\n"
    "- With **−1e9**, every score in the row is equal, so the softmax spreads the weight "
    "**uniformly over the blocked keys**: attention leaks to padding and the future.\n"
    "- PyTorch's `scaled_dot_product_attention` (and this package) return **all zeros** for such "
    "a row: the query receives nothing, and nothing is NaN."
)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        exports.show_downloads(lesson)
lesson_frame.finish(__file__, lambda: masking.lesson_questions(settings, n_padding))
