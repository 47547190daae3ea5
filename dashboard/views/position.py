"""Lesson 9's blocks: attention is blind to order, the causal mask and positions fix it."""

from __future__ import annotations

from functools import partial

import nbformat
import pandas as pd
import streamlit as st
from torch import Tensor

from attention.drills import Drill
from attention.positions import (
    RopePairings,
    Shuffled,
    changed_rows,
    compare_rope_pairings,
    position_questions,
    random_permutation,
    rope_scores,
    shuffle_tokens,
    sinusoidal_positions,
)
from dashboard import controls, lessons, state
from dashboard.controls import Settings
from dashboard.exports import notebooks
from dashboard.lessons import Computed
from dashboard.render import blocks, charts
from dashboard.render.blocks import show_heatmap, show_matrix, show_rows
from dashboard.render.elements import show_chart, show_once
from dashboard.render.matrices import matrix_view
from dashboard.render.presenter import Section
from dashboard.render.tables import feature_labels, format_number
from dashboard.spec import LessonSpec


@state.per_lesson
def shuffled(lesson: Computed, seed: int) -> dict[str, Shuffled]:
    """The layer on X and on X with its rows shuffled, without a mask ("open") and causal."""
    x, layer = lesson.embedded.x, lesson.layer
    perm = random_permutation(x.shape[0], seed)
    return {
        "open": shuffle_tokens(layer, x, perm),
        "causal": shuffle_tokens(layer, x, perm, "causal"),
    }


def first_token_rope(lesson: Computed) -> Tensor | None:
    """RoPE's scores (T, T) of the first token's query against its key in head 0, at every
    pair of positions; None when d_head is odd (RoPE rotates pairs of features)."""
    trace = lesson.trace
    q, k = trace.q[0, 0].detach(), trace.k[0, 0].detach()  # (d_head,) each
    return rope_scores(q, k, trace.q.shape[-2]) if q.shape[-1] % 2 == 0 else None


def notebook_section(lesson: Computed, seed: int) -> list[nbformat.NotebookNode]:
    """Take it home: the notebook's position section, checked against this page's numbers."""
    shuffle = shuffled(lesson, seed)["open"]
    T, C = lesson.embedded.x.shape
    pe = sinusoidal_positions(T, C)
    return notebooks.position_cells(
        shuffle.perm, shuffle.permuted_outputs, pe, first_token_rope(lesson)
    )


def show_permutation(lesson: Computed, seed: int, screen: tuple[int, int] | None = None) -> None:
    """Shuffle the tokens: without a mask the output rows shuffle the same way, exactly. On a
    projector's `screen`, the two outputs' heatmaps side by side, without the tables."""
    data = shuffled(lesson, seed)
    shuffle = data["open"]
    perm = shuffle.perm.tolist()
    labels = lesson.labels
    out, out_perm, gap = shuffle.outputs, shuffle.permuted_outputs, shuffle.gap
    permuted_labels = [labels[p] for p in perm]
    columns = tuple(feature_labels(out.shape[-1]))
    shown = (
        ("perm-out", "Attn(X), no mask", "The output rows in the original order.",
         matrix_view(tuple(labels), columns, _matrix=out, kind="projection",
                     row_title="token", col_title="feature")),
        ("perm-outp", "Attn(P X), no mask",
         "The same rows, in the shuffled order: nothing else changed.",
         matrix_view(tuple(permuted_labels), columns, _matrix=out_perm, kind="projection",
                     row_title="token", col_title="feature")),
    )  # fmt: skip
    if screen is None:
        show_once(("shuffle", lesson.key, seed), lambda dg: dg.dataframe(
            pd.DataFrame(
                {"new position": range(len(perm)), "takes the token from": perm,
                 "token": permuted_labels}
            ),
            hide_index=True,
        ))  # fmt: skip
        # one under the other: each is a table beside its heatmap, too wide for half a page
        for key, title, caption, view in shown:
            show_matrix(view, key, title, caption)
    else:
        st.markdown(f"Shuffled order: {', '.join(permuted_labels)}.")
        row = st.container(horizontal=True, gap="small")
        for key, title, caption, view in shown:
            with row.container(width="content", gap=None):
                show_matrix(view, key, title, caption, screen=(screen[0] // 2 - 16, screen[1]))
    causal_gap = data["causal"].gap
    st.markdown(
        f"max |Attn(P X) − P Attn(X)| without a mask: **{format_number(gap)}** "
        f"(equal up to float rounding). With the causal mask: **{format_number(causal_gap)}**: "
        "who may see whom depends on the positions, so the symmetry is broken."
    )


def show_mask_shuffle(lesson: Computed, seed: int, screen: tuple[int, int] | None = None) -> None:
    """The same shuffle under the mask the sidebar's causal switch selects, row by row."""
    causal = lesson.settings.causal  # a trained model's own mask when the sidebar shows one
    shuffle = shuffled(lesson, seed)["causal" if causal else "open"]
    labels = lesson.labels
    gaps = shuffle.row_gaps.tolist()
    # a short axis title: one longer than the plot is tall made Vega squash the plot to 40 px
    # and cut the title (tests/browser/test_browser_self_learner.py); the chart's title says it
    column = "row change"
    frame = pd.DataFrame({"new position": range(len(gaps)), column: gaps,
                          "token": [labels[p] for p in shuffle.perm.tolist()]})  # fmt: skip
    mask = "the causal mask" if causal else "no mask"
    height = ROW_CHART_HEIGHT if screen is None else min(ROW_CHART_HEIGHT, screen[1] - 100)
    title = f"Each output row's change, max |Attn(P X) − P Attn(X)|, under {mask}"
    show_chart(("shuffle_rows", lesson.key, seed, causal, height), lambda: charts.bars(
        frame, x="new position", y=column, title=title
    ).properties(height=height))  # fmt: skip
    moved = changed_rows(shuffle)
    if not causal:
        st.markdown(
            f"Causal mask **off** (the sidebar's switch): no mask, and {len(moved)} of {len(gaps)} "
            f"rows changed (largest difference **{format_number(shuffle.gap)}**). Switch it on "
            "to see which rows the causal mask changes."
        )
        return
    st.markdown(
        f"Causal mask **on** (the sidebar's switch): **{len(moved)} of {len(gaps)}** rows changed "
        f"(largest difference **{format_number(shuffle.gap)}**). Under the mask a token sees "
        "the tokens placed before it, so moving it changes what it sees; a row stays the same "
        "only when its token sees the same tokens in both orders."
    )


ROW_CHART_HEIGHT = 200  # px of the per-row bars: tall enough for its axis title and numbers


def show_sinusoidal(lesson: Computed, screen: tuple[int, int] | None = None) -> None:
    T, C = lesson.embedded.x.shape
    pe = sinusoidal_positions(T, C)
    show_matrix(
        matrix_view(tuple(lesson.labels), tuple(feature_labels(C)), _matrix=pe,
                    kind="embedding", row_title="token", col_title="feature"),
        "pe", "PE (T, C), added to X",
        "Column pairs oscillate at falling frequencies: each position gets its own pattern.",
        screen=screen,
    )  # fmt: skip


def rope_pairings(lesson: Computed) -> RopePairings | None:
    """Both RoPE pairings on head 0's q and k (T, d_head); None when d_head is odd."""
    trace = lesson.trace
    q, k = trace.q[0].detach(), trace.k[0].detach()  # (T, d_head) each: head 0
    return compare_rope_pairings(q, k) if q.shape[-1] % 2 == 0 else None


def show_rope_pairings(lesson: Computed) -> None:
    """Interleaved pairs against Hugging Face's half-split pairs, on this page's q: other
    numbers on the same features, the same numbers once the features are reordered."""
    check = rope_pairings(lesson)
    if check is None:
        st.info("RoPE rotates pairs of features: pick an even head size d_k = d_model / H.")
        return
    d = len(check.order)
    last = len(lesson.labels) - 1  # the last position turns the most
    order = ", ".join(str(i) for i in check.order.tolist())
    rows = {
        "R q, interleaved pairs (this page)": check.interleaved[last].tolist(),
        "rotate_half on the same q": check.half_split[last].tolist(),
        "P (R q): interleaved, features reordered by P": check.interleaved_permuted[last].tolist(),
        "rotate_half on P q": check.half_split_permuted[last].tolist(),
    }
    columns = [f"slot {i}" for i in range(d)]
    show_rows(rows, columns, row_title=f"q at position {last}, head 0")
    st.caption(
        f"P = [{order}]: slot j of the last two rows holds feature P[j]; the first two rows "
        "hold the features in their own order."
    )
    same = format_number(check.same_features_gap)
    if check.same_features_gap > 0:
        differ = (
            "On the same features the two pairings give other numbers: max |difference| "
            f"**{same}** over all positions."
        )
    elif d == 2:
        differ = f"With d_k = 2 the two pairings are the same pair (max |difference| **{same}**)."
    else:
        differ = (
            f"Only position 0 is shown, where nothing turns: both leave q as it is "
            f"(max |difference| **{same}**); with more tokens they differ."
        )
    st.markdown(
        f"{differ} Reorder the features by P first and they agree: max |rotate_half(P q) − "
        f"P (R q)| = **{format_number(check.permuted_gap)}** over all {last + 1} positions, and "
        f"the scores (R q)(R k)ᵀ of the two differ by at most "
        f"**{format_number(check.score_gap)}**: one rotation, two orders of features."
    )


def show_rope_formula() -> None:
    """How one pair turns: the rotation a question asks the learner to apply."""
    st.latex(
        r"\begin{aligned} x_{2i}' &= x_{2i} \cos\theta - x_{2i+1} \sin\theta \\ "
        r"x_{2i+1}' &= x_{2i} \sin\theta + x_{2i+1} \cos\theta \end{aligned}"
        r"\qquad \theta = m \cdot 10000^{-2i/d}"
    )
    st.markdown(
        "At position m, pair i of q (and of k) turns by the angle θ, in radians. Pair 0 turns "
        "fastest, by θ = m: its rotated first feature is q₀′ = q₀ cos θ − q₁ sin θ, and "
        "q₁′ = q₀ sin θ + q₁ cos θ."
    )


def show_rope(lesson: Computed, screen: tuple[int, int] | None = None) -> None:
    """The score of one token against itself at every pair of positions, after RoPE."""
    scores = first_token_rope(lesson)
    if scores is None:
        st.info("RoPE rotates pairs of features: pick an even head size d_k = d_model / H.")
        return
    labels = tuple(f"pos {i}" for i in range(scores.shape[0]))
    view = matrix_view(labels, labels, _matrix=scores, kind="score",
                       row_title="query position", col_title="key position")  # fmt: skip
    name = "RoPE score of one token against itself"
    if screen is None:
        show_heatmap(view, name)
    else:
        blocks.show_fitted(view, name, *screen)
    st.caption(
        "The same token as query at position m and key at position n. Every diagonal is one "
        "colour: after rotating q by m·θ and k by n·θ, their dot product depends only on m − n."
    )


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 9: order blindness, sinusoidal positions, RoPE."""
    settings = controls.current_settings()
    lesson = blocks.current_lesson(settings)
    seed, screen, large = settings.seed, (blocks.SCREEN[0], 190), (blocks.SCREEN[0], 290)
    return [
        Section("Shuffle the tokens", partial(show_permutation, lesson, seed, screen),
                "Point at the matching rows. Ask: so where could word order come from?",
                key="shuffle"),
        Section("Under the sidebar's mask", partial(show_mask_shuffle, lesson, seed, screen),
                "Ask: why does the causal mask make the shuffled outputs differ?",
                key="shuffle_masked"),
        Section("Sinusoidal positions, added to X", partial(show_sinusoidal, lesson, large),
                "Point at the fast and the slow columns. Ask: why several frequencies?",
                key="sinusoidal"),
        Section("RoPE: rotate q and k", partial(show_rope, lesson, large),
                "Ask: why does a score now depend only on how far apart two tokens are?",
                key="rope"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(settings: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at the sidebar's settings (their seed: a trained model's
    lesson keeps its own)."""
    lesson = lessons.computed(settings)
    return position_questions(lesson.trace, lesson.labels, settings.seed)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(s)


LESSON = LessonSpec(
    number=9,
    path="pages/position.py",
    title="9 · Position",
    minutes=11,
    icon=":material/swap_horiz:",
    summary="Attention is blind to order: shuffle the tokens; sinusoidal positions and RoPE.",
    objectives=(
        "say where a shuffled token's output goes when there is no mask",
        "compute a sinusoidal position entry PE[pos, i]",
        "rotate a pair of q by its RoPE angle",
    ),
    recap=(
        "attention moves outputs with their tokens; order comes from positions added to X or "
        "rotations of q and k."
    ),
    sections=sections,
    class_questions=class_questions,
)
