"""Lesson 12's blocks: a small GPT trained here on tiny Shakespeare (attention/lm) reads the
student's text; every head at once, one head large, the next character, a head knocked out, and
the text written twice. Every sentence about a head is computed from the numbers shown."""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st
from torch import Tensor

from attention.drills import Drill
from attention.lm.corpus import CORPUS_BYTES, GLYPHS, TRAIN_CHARS, decode
from attention.lm.generate import next_characters, write_after
from attention.lm.heads import KINDS, ROLE_SHARE, HeadScore
from attention.lm.model import parameter_groups
from attention.lm.reading import (
    CopyCost,
    TextTwice,
    attended_most,
    attends_most,
    glyph,
    induction_question,
    mean_loss,
    read_twice,
    top_k_probability,
    twice,
)
from attention.lm.training import RECIPE, SIZE
from attention.masks import as_blocked, causal_mask
from dashboard import controls, state, trained
from dashboard.controls import Settings
from dashboard.glossary import glossary_link
from dashboard.render import blocks, charts, layout
from dashboard.render.blocks import show_heatmap
from dashboard.render.elements import show_chart, show_once
from dashboard.render.matrices import matrix_view, weights_view
from dashboard.render.presenter import Section, presenter_theme
from dashboard.shakespeare import (
    TEXT_DEFAULT,
    Reading,
    head_title,
    position_labels,
    reading,
    role_words,
    show_generation_timing,
)
from dashboard.spec import LessonSpec
from dashboard.text import plain

TEMPERATURES = (0.2, 0.5, 0.8, 1.0, 1.5, 2.0)
TOP_KS = (1, 3, 5, 10, 20, 65)
TOP_PS = (0.5, 0.8, 0.9, 0.95, 1.0)  # 1.0: off
TOP_P_DEFAULT = 1.0
TEMPERATURE_DEFAULT, TOP_K_DEFAULT = 0.8, 10  # reads like its corpus (tests/attention/test_lm.py)
SHOWN_CHARS = 10  # bars in the next-character chart
SAMPLE_SEED = 0


def model_figures() -> dict[str, float]:
    """The model's figures, measured by the build and stored beside its weights (held-out loss,
    the bigram baseline, copy accuracy, parameters); tests/attention/test_lm.py recomputes
    them. Computing them here cost a server's first visitor 0.7 s and 330 MiB."""
    return trained.language_model_figures()


def text_box() -> str:
    """The student's text (bound to the URL as ?rm_text=)."""
    return st.text_area(
        "Your text (one token per character; the model reads at most 64)",
        layout.remember_default("rm_text", TEXT_DEFAULT),
        key="rm_text",
        bind="query-params",
        max_chars=controls.MAX_TEXT,
        height=90,
    )


def current_reading(text: str | None = None) -> Reading | None:
    """The reading of the text (the box's, or the link's in presenter mode); None with the
    reason shown when the model has nothing to read."""
    text = controls.lesson_value("rm_text", None, TEXT_DEFAULT) if text is None else text
    try:
        read = reading(text)
    except ValueError as error:
        st.warning(plain(f"{error}."), icon=":material/edit_off:")
        return None
    if read.notice:
        st.info(plain(read.notice), icon=":material/info:")
    return read


def show_model_card() -> None:
    """What the model is, how it was trained, and how well it does (the build's figures)."""
    f = model_figures()
    st.markdown(
        f"A GPT of **{SIZE.n_layers} layers × {SIZE.n_heads} heads**, d_model = "
        f"{SIZE.d_model}, context {SIZE.context} characters, {f['parameters']:,.0f} parameters; "
        "every attention layer is this project's `MultiHeadSelfAttention`, in "
        f"[transformer blocks]({glossary_link('block')}) with "
        f"[pre-LayerNorm]({glossary_link('pre-LayerNorm')}), an [MLP]({glossary_link('MLP')}) "
        f"and a [residual stream]({glossary_link('residual stream')}) as in GPT-2. It trained "
        "on the "
        f"first 90 % of tiny Shakespeare ({TRAIN_CHARS:,} of its {CORPUS_BYTES:,} characters, "
        f"public domain) for {RECIPE.steps:,} steps of {RECIPE.batch} windows. In "
        f"{RECIPE.repeat_share:.0%} of the windows a string of random letters was written "
        "twice, so that copying a string it has never seen pays."
    )
    row = st.columns(3)
    row[0].metric("Held-out loss (nats/char)", f"{f['held_out']:.3f}")
    row[1].metric("Bigram model's loss", f"{f['bigram']:.3f}")
    row[2].metric("Copies random strings", f"{f['copy']:.0%}")
    st.caption(
        "Measured when the model was built (`python -m attention.lm.build`; the tests measure "
        "them again). Loss: the average cross-entropy of the next character, in "
        f"[nats]({glossary_link('nats')}) (natural log; lower is better). Held-out: the last "
        "10 % of the text, never trained on. The "
        f"[bigram model]({glossary_link('bigram model')}) predicts each character from the one "
        "before, counted on the first 90 %. Copies: 200 strings of 32 distinct random letters "
        "written twice; the share of the second copy's characters after its first (nothing "
        "announces a copy) whose likeliest prediction is the right one."
    )


def show_parameters() -> None:
    """The parameter count, part by part, counted from the model's own tensors."""
    parts = parameter_groups(trained.language_model())
    st.markdown(
        f"Embeddings of the 65 characters and {SIZE.context} positions: {parts['embeddings']:,}. "
        f"W_q, W_k, W_v and W_o of {SIZE.n_layers} layers, without biases: "
        f"{parts['attention']:,}. The MLPs, {SIZE.d_model} → {4 * SIZE.d_model} → "
        f"{SIZE.d_model} with biases: {parts['mlp']:,}. "
        f"[LayerNorms]({glossary_link('LayerNorm')}): {parts['layer norms']:,}. An output layer "
        f"(the [unembedding]({glossary_link('unembedding')})) of its own, not tied to the "
        "embedding, without a bias: "
        f"{parts['output']:,}. In all {sum(parts.values()):,}."
    )


def show_roles(read: Reading) -> None:
    """Every head's role on the text, one line each (presenter mode: the maps do not fit)."""
    frame = pd.DataFrame({
        "head": [head_title(s) for s in read.scores],
        "on this text": [role_words(s) for s in read.scores],
    })  # fmt: skip
    st.table(frame, hide_index=True)  # HTML: scaled with the section (presenter.FIT)


SHORT_KINDS = {
    "previous_token": "previous",
    "two_back": "two back",
    "induction": "induction",
    "first_token": "sink",
    "same_character": "same",
    "separator": "punct.",
    "current_token": "self",
}  # fmt: skip  (column names narrow enough for a 1024 px screen at 150 %)


def scores_frame(read: Reading) -> pd.DataFrame:
    """Every head's detector score for every kind on this text, and, last, the best score
    possible on it (the same for every head: it depends on the text alone)."""
    rows = [
        {"head": s.name} | {SHORT_KINDS[k]: f"{s.scores[k]:.2f}" for k in KINDS}
        for s in read.scores
    ]
    ceilings = read.scores[0].ceilings
    rows.append({"head": "best"} | {SHORT_KINDS[k]: f"{ceilings[k]:.2f}" for k in KINDS})
    return pd.DataFrame(rows)


def show_scores(read: Reading) -> None:
    st.dataframe(scores_frame(read), hide_index=True)
    st.caption(
        "Each cell: TransformerLens's "
        f'[head-detector score]({glossary_link("head-detector score")}) ("mul") on your text, '
        "read as one window with no beginning-of-sequence token; LnHm is layer n, head m. "
        "Columns: the previous character, two back, induction, the first character (an "
        f"[attention sink]({glossary_link('attention sink')})), the same character earlier, "
        "spaces and punctuation, itself. The last row, "
        "best, is what a perfect head would score on this text (the share of query rows that "
        "have something to find). A "
        f"head is named by the kind with the best share of its best, from {ROLE_SHARE:.0%}."
    )


def head_picker(read: Reading) -> tuple[int, int]:
    layers = list(range(len(read.weights)))
    heads = list(range(read.weights[0].shape[0]))
    layer = st.segmented_control("Layer", layers, default=layout.remember_default("rm_layer", 0),
                                 key="rm_layer",
                                 bind="query-params") or 0  # fmt: skip
    head = st.segmented_control("Head", heads, default=layout.remember_default("rm_head", 0),
                                key="rm_head",
                                bind="query-params") or 0  # fmt: skip
    return layer, head


def show_one_head(
    read: Reading, layer: int, head: int, screen: tuple[int, int] | None = None
) -> None:
    """One head's map, large, with its characters on the axes, and what it does in words;
    fitted to `screen` (width, height px) in presenter mode."""
    T = len(read.labels)
    blocked = as_blocked(causal_mask(T))  # (T, T): True where a query may not look
    score = next(s for s in read.scores if (s.layer, s.head) == (layer, head))
    weights = read.weights[layer][head]
    view = matrix_view(tuple(read.labels), tuple(read.labels), _matrix=weights, _blocked=blocked,
                       kind="weight", row_title="query", col_title="key",
                       title=head_title(score) if screen is None else "",
                       present=presenter_theme())  # fmt: skip
    if screen is None:
        show_heatmap(view, f"Attention weights, {head_title(score)}")
    else:
        blocks.show_fitted(view, f"Attention weights, {head_title(score)}", *screen)
    st.markdown(one_head_words(read, weights, score))


def one_head_words(read: Reading, weights: Tensor, score: HeadScore) -> str:
    """Where the last query looks, and the head's role, from its numbers."""
    most = attended_most(weights, len(read.labels) - 1)
    return (
        f"The last query, {read.labels[most.query]} (position {most.query}), gives key "
        f"{most.key} ({read.labels[most.key]}) its largest weight, **{most.weight:.2f}**. The "
        f"head's role on this text: **{role_words(score)}**."
    )


POSITION_TEXT = "rm_pos_text"  # the text the position slider was last drawn for


def next_pickers(read: Reading) -> tuple[int, float, int, float]:
    T = len(read.labels)
    last = len(trained.read_text(TEXT_DEFAULT).tokens) - 1  # Reset's: the default text's last
    if st.session_state.get(POSITION_TEXT, read.text) != read.text:
        st.session_state["rm_pos"] = T - 1  # a new text starts at its last position (item 12)
    st.session_state[POSITION_TEXT] = read.text
    position = st.select_slider("After position", list(range(T)),
                                value=layout.remember_default("rm_pos", T - 1, reset_to=last),
                                key="rm_pos", bind="query-params")  # fmt: skip
    temperature = st.select_slider("Temperature", TEMPERATURES,
                                   value=layout.remember_default("rm_temp", TEMPERATURE_DEFAULT),
                                   key="rm_temp", bind="query-params")  # fmt: skip
    top_k = st.select_slider("Top-k", TOP_KS,
                             value=layout.remember_default("rm_topk", TOP_K_DEFAULT),
                             key="rm_topk",
                             bind="query-params")  # fmt: skip
    top_p = st.select_slider("Top-p", TOP_PS,
                             value=layout.remember_default("rm_topp", TOP_P_DEFAULT),
                             key="rm_topp", bind="query-params",
                             help="1.0 keeps every character that top-k kept")  # fmt: skip
    return position, temperature, top_k, top_p


def show_next(
    read: Reading,
    position: int,
    temperature: float,
    top_k: int,
    top_p: float = TOP_P_DEFAULT,
    screen: tuple[int, int] | None = None,
) -> None:
    """The sampler's distribution over the next character at a position, its top bars; on a
    projector's `screen`, at that width: a chart as wide as its column, in presenter mode's
    zoomed section, measured the zoomed width and ran off the screen (issue 42, item 6)."""
    shown = next_characters(read.logits[position], temperature, top_k, top_p, SHOWN_CHARS)
    kept = shown.kept
    frame = pd.DataFrame({
        "next character": [GLYPHS.get(c, c) for c, _ in shown.top],
        "probability": [probability for _, probability in shown.top],
    })  # fmt: skip
    title = f"After “{glyph(int(read.ids[position]))}” (position {position})"

    def chart():  # built, and marshalled, once for every session at these settings
        bars = charts.bars(frame, x="next character", y="probability", title=title,
                           y_domain=[0, 1])  # fmt: skip
        return bars if screen is None else bars.properties(width=screen[0] - 90)

    key = ("next_bars", read.text, position, temperature, top_k, top_p, screen)
    show_chart(key, chart, width="stretch" if screen is None else "content")
    best = frame.iloc[0]
    following = (
        f"; the text has {read.labels[position + 1]} there" if position + 1 < len(read.labels)
        else ""
    )  # fmt: skip
    nucleus = (
        f" Top-p {top_p:g} then keeps the likeliest until their probabilities reach {top_p:g}."
        if top_p < 1
        else " Top-p 1 keeps them all."
    )
    st.markdown(
        f"The sampler's likeliest next character: **{best['next character']}**, at "
        f"{best['probability']:.1%}"
        f"{following}. Temperature {temperature:g} divides the logits before the softmax; "
        f"top-k {top_k} keeps the {top_k} likeliest and gives the rest 0.{nucleus} "
        f"{kept} character{'s' if kept != 1 else ''} can be drawn."
    )


@state.cached
def continuation(text: str, temperature: float, top_k: int, top_p: float = TOP_P_DEFAULT) -> str:
    """The 120 characters the model writes after the text it read (attention/lm/generate.py)."""
    state.one_torch_thread()
    ids = trained.read_text(text).ids
    return write_after(trained.language_model(), ids, 120, temperature=temperature, top_k=top_k,
                       top_p=top_p, seed=SAMPLE_SEED).new  # fmt: skip


def show_continuation(
    read: Reading, temperature: float, top_k: int, top_p: float = TOP_P_DEFAULT
) -> None:
    """120 characters the model writes after the text with these sampler settings, written when
    the learner presses Write (as Transformer Explainer's Generate): each new setting costs a
    sampling run of about 0.1 s, which a class moving the sampler's sliders paid on every move
    (one core saturated, issue 40). Kept for the session while the settings stay."""
    show_generation_timing()
    settings = (read.text, temperature, top_k, top_p)
    if st.button("Write 120 characters", key="rm_write", icon=":material/edit:",
                 help="Sampled with the temperature, top-k and top-p above, seed 0."):  # fmt: skip
        st.session_state["rm_written"] = settings
    if st.session_state.get("rm_written") != settings:
        st.caption("Press Write to sample 120 characters with these settings.")
        return
    new = continuation(*settings)
    st.markdown(f"**120 characters it writes next** (seed {SAMPLE_SEED}):")
    st.code(new, language=None, wrap_lines=True)
    st.caption(
        "At a higher temperature and top-k it may start a run of random letters: "
        f"{RECIPE.repeat_share:.0%} of the windows it trained on had one, written twice."
    )


def knockout_picker(read: Reading) -> list[tuple[int, int]]:
    names = [head_title(s) for s in read.scores]
    chosen = st.multiselect("Knock out", names, layout.remember_default("rm_off", []), key="rm_off",
                            bind="query-params",
                            placeholder="Choose heads")  # fmt: skip
    return [(s.layer, s.head) for s in read.scores if head_title(s) in chosen]


@state.cached
def knocked_loss(text: str, off: tuple[tuple[int, int], ...]) -> float:
    """The mean loss on the text (nats per character) with the heads `off` knocked out."""
    state.one_torch_thread()
    return mean_loss(trained.language_model(), trained.read_text(text).ids, off)


def show_knockout(read: Reading, off: list[tuple[int, int]]) -> None:
    if len(read.labels) < 2:
        st.info("Type at least two characters: the loss scores each next character.")
        return
    # to 3 decimals, as shown: the delta is the difference a reader computes from the two
    full, now = round(knocked_loss(read.text, ()), 3), round(knocked_loss(read.text, tuple(off)), 3)
    st.metric("Loss on your text (nats per character)", f"{now:.3f}",
              delta=f"{now - full:+.3f}" if off else None, delta_color="inverse")  # fmt: skip
    if off:
        st.markdown(
            f"Without {', '.join(f'L{layer}H{head}' for layer, head in off)} the model "
            f"{'is worse' if now > full else 'is no worse'} at your text: {full:.3f} → "
            f"{now:.3f} nats per character."
        )


@state.cached
def doubled(text: str) -> TextTwice:
    """The model on the text written twice (attention/lm/reading.py)."""
    state.one_torch_thread()
    return read_twice(trained.language_model(), trained.read_text(text).ids)


QUERY_ASKED = 5  # question 1's query: early, so its row of weights fits the screen
MADE_UP = "Zorblax of Quintavia"  # a name the model has never read
# Texts every reader sees written twice beside their own: two the model cannot predict from
# English, two lines of Shakespeare it can (tests/dashboard/test_real_model.py checks the rows).
UNPREDICTABLE = {"a made-up name": MADE_UP, "random letters": "qXzPwLmKjRtYvBnC"}
ORDINARY = {
    "Hamlet's line": "HAMLET:\nTo be, or not to be, that is the question:",
    "Juliet's line": "JULIET:\nO Romeo, Romeo! wherefore art thou Romeo?",
}
COPIED_NATS = 1.0  # a second copy this much cheaper a character, or more, is called copied
ORDINARY_NATS = 0.5  # within this of the first copy's cost: hardly copied


def level_words(nats: float, figures: dict[str, float]) -> str:
    """Where a cost in nats per character stands against the held-out average and the bigram."""
    held, bigram = f"{figures['held_out']:.2f}", f"{figures['bigram']:.2f}"
    if nats > figures["bigram"]:
        return f"above the bigram model's {bigram}"
    if nats > figures["held_out"]:
        return f"between the model's held-out average {held} and the bigram model's {bigram}"
    return f"below the model's held-out average {held}"


def copy_verdict(cost: CopyCost, figures: dict[str, float]) -> str:
    """What the two copies cost, each against the held-out average and the bigram model, and
    whether the second is cheaper: numbers, no guess at why. Said to the cost's decimals (2),
    the difference taken between the numbers as shown (a reader subtracts them)."""
    first, second, saved = cost.first, cost.second, cost.saved
    if abs(saved) < 0.005:
        change = "the second costs the same"
    elif saved > 0:
        change = f"the second is **{saved:.2f} nats cheaper** a character"
    else:
        change = f"the second costs {-saved:.2f} nats more a character"
    return (
        f"the first copy costs {first:.2f} nats a character ({level_words(first, figures)}), "
        f"the second {second:.2f} ({level_words(second, figures)}): {change}"
    )


def twice_row(name: str, doubled_text: TextTwice) -> dict[str, str] | None:
    """One row of the table: the text twice, each copy's cost, the best induction head (None
    when a copy has nothing to predict after its first character)."""
    if not doubled_text.costed:
        return None
    cost, best = doubled_text.cost(), doubled_text.induction_head
    return {  # as shown, 2 decimals: the difference is that of the numbers a reader sees
        "twice": name,
        "1st copy": f"{cost.first:.2f}",
        "2nd copy": f"{cost.second:.2f}",
        "2nd cheaper by": f"{cost.saved:.2f}",
        "induction head": f"{best.name} {best.share('induction'):.2f}",
    }  # fmt: skip  (narrow: it fits a 1024 px screen at 150 %; the texts are in the caption)


def copying_summary(costs: dict[str, CopyCost], figures: dict[str, float]) -> str | None:
    """What the fixed texts' costs (by the table's names) show about copying; None when they
    do not show what the sentence states: each unpredictable text's first copy costs more than
    the bigram model's average and its second at least COPIED_NATS less, each line of
    Shakespeare's second copy is within ORDINARY_NATS of its first."""
    odd = [costs[n] for n in UNPREDICTABLE if n in costs]
    lines = [costs[n] for n in ORDINARY if n in costs]
    if len(odd) != len(UNPREDICTABLE) or len(lines) != len(ORDINARY):
        return None
    unpredictable = all(c.first > figures["bigram"] for c in odd)
    copied = all(c.saved >= COPIED_NATS for c in odd)
    hardly = all(abs(c.saved) < ORDINARY_NATS for c in lines)
    if not (unpredictable and copied and hardly):
        return None
    saved = [c.saved for c in odd]
    change = [-c.saved for c in lines]
    more = "more" if min(change) >= 0 else "more or less"
    return (
        f"The made-up name and the random letters cost {odd[0].first:.2f} and "
        f"{odd[1].first:.2f} nats a character the first time, above the bigram "
        f"model's {figures['bigram']:.2f}, and {min(saved):.2f} to {max(saved):.2f} less the "
        f"second time. The two lines of Shakespeare cost {abs(min(change)):.2f} to "
        f"{abs(max(change)):.2f} {more} the second time. On these texts the model copies the "
        "strings of letters, the kind it was trained to copy, and not the lines of Shakespeare."
    )


def induction_caption(name: str, labels: list[str], score: HeadScore) -> str:
    """The map's caption, computed: the head's weight on the induction target, per row that
    has one (its induction score over the best a head could score on this text)."""
    share = score.share("induction")
    return (
        f"**{head_title(score)} on {name} written twice** ({len(labels)} characters). From "
        "each character that occurred earlier in the text (every one of the second copy, and "
        "any repeated within the first), the induction target is the character that followed "
        f"that earlier occurrence; this head puts **{share:.2f}** of its weight there, on "
        f"average over those characters (its induction score, "
        f"{score.scores['induction']:.2f}, divided by the most a head could score on this "
        f"text, {score.ceilings['induction']:.2f})."
    )


def show_induction_map(name: str, text: str) -> None:
    text_twice = doubled(text)
    if not text_twice.costed:
        return
    best = text_twice.induction_head
    labels = position_labels(text_twice.glyphs)
    blocked = as_blocked(causal_mask(len(labels)))  # (T, T): True where a query may not look
    weights = text_twice.weights[best.layer][best.head]  # (2 L, 2 L)
    view = weights_view(weights, labels, head_title(best), blocked)
    st.markdown(induction_caption(name, labels, best))
    show_heatmap(view, f"Attention weights on {name} twice, {head_title(best)}")


def show_twice(read: Reading, with_map: bool = True) -> None:
    """The student's text, a made-up name, random letters and two lines of Shakespeare, each
    written twice: the two copies' costs, the best induction head, and, on the page (with_map),
    the table's caption, the verdict on the student's text and the induction map on the
    made-up name, where it fires, and on the student's text. Presenter mode (with_map False)
    shows the table and the copying sentence: one screen."""
    texts = {"your text": read.text, **UNPREDICTABLE, **ORDINARY}
    read_texts = {name: doubled(text) for name, text in texts.items()}
    rows = [row for name, t in read_texts.items() if (row := twice_row(name, t)) is not None]
    costs = {name: t.cost() for name, t in read_texts.items() if t.costed}
    figures = model_figures()
    if not with_map:
        st.table(pd.DataFrame(rows), hide_index=True)  # HTML: scaled with the section
        if summary := copying_summary(costs, figures):
            st.markdown(summary)
        return
    show_once(("twice_rows", read.text),
              lambda dg: dg.dataframe(pd.DataFrame(rows), hide_index=True))  # fmt: skip
    fixed = "; ".join(
        f"{name}, “{decode(trained.read_text(text).ids[:32])}”"
        for name, text in {**UNPREDICTABLE, **ORDINARY}.items()
    )
    st.caption(
        f"The texts: {fixed}. Each is cut to its first 32 characters (half the model's "
        "context) and written twice. Each copy's cost is the loss in nats a character, its "
        "first character not counted (nothing announces a copy). Induction head: the head with "
        "the best induction score on the text twice, and its weight on the induction target "
        "per character that has one."
    )
    if "your text" not in costs:
        st.info("Type at least two characters to see the model read your text twice.")
    else:
        st.markdown(f"For your text, {copy_verdict(costs['your text'], figures)}.")
    if summary := copying_summary(costs, figures):
        st.markdown(summary)
    show_induction_map(f"the made-up name “{MADE_UP}”", MADE_UP)
    show_induction_map("your text", read.text)


def lesson_questions(read: Reading, temperature: float, top_k: int) -> tuple[Drill, ...]:
    """Which key the best previous-token head's last query attends to; the top-k probability;
    where an induction head looks in the text written twice."""
    prev = max(read.scores, key=lambda s: s.scores["previous_token"])
    T = len(read.labels)
    asked = [
        attends_most(read.weights[prev.layer][prev.head], read.labels, prev.layer, prev.head,
                     min(T - 1, QUERY_ASKED)),
        top_k_probability(read.logits[T - 1], temperature, min(3, top_k), T - 1),
    ]  # fmt: skip
    model = trained.language_model()
    third = induction_question(twice(read.ids, model.context))
    return tuple(asked if third is None else [*asked, third])


def class_questions(settings: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions on the lesson's own line at its sampling defaults (the
    lesson ignores the sidebar; each prompt carries every number it needs)."""
    return lesson_questions(reading(TEXT_DEFAULT), TEMPERATURE_DEFAULT, TOP_K_DEFAULT)


# --- presenter mode (?present=1): one section a screen ---------------------------------


PRESENT_CHARS = 24  # presenter mode's large map: the text's first characters fit one screen


def sections() -> list[Section]:
    """Lesson 12: what each head does, one head large, the next character, the text twice."""
    read = current_reading()
    if read is None:
        return [Section("Your text", lambda: None, "Type some text on the page first.", key="text")]
    layer = controls.lesson_value("rm_layer", range(SIZE.n_layers), 0)
    head = controls.lesson_value("rm_head", range(SIZE.n_heads), 0)
    temperature = controls.lesson_value("rm_temp", TEMPERATURES, TEMPERATURE_DEFAULT)
    top_k = controls.lesson_value("rm_topk", TOP_KS, TOP_K_DEFAULT)
    top_p = controls.lesson_value("rm_topp", TOP_PS, TOP_P_DEFAULT)
    T = len(read.labels)
    start = reading(decode(read.ids[:PRESENT_CHARS]))  # the map's characters, read alone
    return [
        Section("What each head does", partial(show_roles, read),
                "Ask: which head would you knock out to stop it copying?", key="roles"),
        Section(f"Layer {layer}, head {head}",
                partial(show_one_head, start, layer, head, (blocks.SCREEN[0], 250)),
                "Ask: what would this head do on a text written twice?", key="one_head"),
        Section("What comes next",
                partial(show_next, read, T - 1, temperature, top_k, top_p, blocks.SCREEN),
                "Raise the temperature. Ask: what happens to the bars, and to the text?",
                key="next"),
        Section("Type it twice", partial(show_twice, read, False),
                "Ask: why is the made-up name so much cheaper the second time than Hamlet's line?",
                key="twice"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


LESSON = LessonSpec(
    number=12,
    path="pages/real_model.py",
    title="12 · A real model reads",
    heading="12 · A real model reads your text",
    minutes=14,
    icon=":material/menu_book:",
    summary="A small GPT trained here on Shakespeare reads your text: every head, named from "
    "its numbers; the next character; knock-outs; your text twice.",
    uses=(),
    objectives=(
        "say which key a head's query attends to most, from its row of weights",
        "compute the probability the sampler gives a character with top-k and a temperature",
        "say which key an induction head attends to when a text repeats",
    ),
    recap="a trained model's heads take on roles you can measure on any text: one looks a "
    "character back, another copies what followed before.",
    params=("rm_text", "rm_layer", "rm_head", "rm_pos", "rm_temp", "rm_topk", "rm_topp", "rm_off"),
    sections=sections,
    class_questions=class_questions,
)
