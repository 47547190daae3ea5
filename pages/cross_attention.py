"""Lesson 13: cross-attention, on an encoder-decoder trained to reverse a word."""

from dashboard.frame import require_frame

require_frame()

from functools import partial

import streamlit as st

from dashboard import exports, lesson_frame
from dashboard.glossary import glossary_link as term
from dashboard.render import layout, presenter
from dashboard.text import plain
from dashboard.views import cross_attention as view

presenter.present(view.sections)  # ?present=1: one section a screen
lesson_frame.title(__file__)
st.markdown(
    "Every lesson so far was **self-attention**: a sequence reading itself. The original "
    "Transformer has a second kind. A translation model has two halves: its "
    f"**[encoder]({term('encoder')})** reads the source sentence, every position reading every "
    f"other; its **[decoder]({term('decoder')})** writes the target one token at a time, each "
    "step reading what it has written so far, and at each step it also reads the source "
    "through **cross-attention**: the queries come from what it is writing, the keys and "
    "values from what the encoder made of the source."
)
view.show_formula()
lesson_frame.objectives(__file__)

st.header("A model that reverses a word")
view.describe_model()
source = view.source_box()
if source.error:
    st.error(plain(source.error), icon=":material/error:")  # the word as typed, never markup
    source = view.read_source(view.WORD_DEFAULT)
    st.caption(f"Showing the default word, '{view.WORD_DEFAULT}', instead.")
done = view.written(source.word)
layer, head = view.layer_and_head()
t = view.step_picker(done)
lesson_frame.reset_button(__file__)

st.header("One step at a time")
st.markdown(
    f"The decoder writes by **[greedy decoding]({term('greedy decoding')})**: at each step it "
    "writes the token it finds likeliest, and reads it at the next step. Step t reads the token "
    "written before it (step 0 reads the start token "
    f"[<s>]({term('start token <s>')}), which begins every target) and writes the next; "
    f"writing stops when a step writes the end token [</s>]({term('end token </s>')}), or "
    "after one letter more than the source has. Each step's query is one row, scored against "
    "every source position's key. A map's rows are named by the token each step reads."
)
view.show_writing(done, layer, head, t)

st.header("The whole map: T × S, not square")
st.markdown(
    "Stack every step's row and you get the cross-attention map: one row per decoder step (T), "
    "one column per source position (S). There is **no causal mask across**: the source was "
    "written before decoding began, so every step may read all of it. The decoder's own "
    "self-attention, below it in the same layer and head, keeps its causal mask: a step must "
    "not read letters it has not written yet."
)
view.show_cross_map(done, layer, head)
view.show_own_map(done, layer, head)

st.header("The same stages as lesson 1")
st.markdown(
    "Cross-attention is lesson 1's computation with one change: Q is made from the target, K "
    "and V from the source (here from the encoder's output after its last LayerNorm; Y, the "
    "decoder's state, is LayerNormed before W_q)."
)
with layout.going_further("every stage of this head") as further:
    if further.open:
        view.show_stages(done, layer, head)

st.header("Which head aligns?")
st.markdown(
    "A head's **alignment score** is the mean weight a step puts on the source letter it "
    "must write (over the steps that write a letter, not the one that writes </s>): 1.0 would "
    "be a head that reads exactly the right letter at every step. It is measured with "
    f"**[teacher forcing]({term('teacher forcing')})**: the decoder is fed the right letters "
    "so far instead of its own, every step in one pass. Knocking a head out zeroes its output "
    "before W_o; a word counts as reversed when every step, fed the right letters so far, "
    "writes the right next token, which is what greedy decoding then writes."
)
view.show_alignment()

st.header("Padding, and words longer than any trained on")
st.markdown(
    "Sources in a batch have different lengths, so the shorter ones are padded. The padding "
    "mask blocks the pads' columns for every query (the only mask across), so a pad gets "
    "weight 0 and nothing the model writes changes."
)
pads = view.padding_picker(source.word)
if pads:
    view.show_padding(source.word, pads, layer, head)
else:
    st.caption("No pads: nothing is masked across, every step may read every source letter.")
view.show_longer(source.word)

with lesson_frame.take_home() as home:  # drawn once opened
    if home.open:
        st.markdown(
            "Write cross-attention yourself on this page's numbers: the notebook gives Y, X and "
            "the weights of the layer and head picked above, and checks each step you write "
            "against them."
        )
        exports.show_exercises(
            partial(view.exercises, source.word, layer, head), view.EXERCISE_WORDS
        )
lesson_frame.finish(__file__, lambda: view.lesson_questions(source.word))
