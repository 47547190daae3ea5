"""Lesson 9's blocks: attention is blind to order, the causal mask and positions fix it."""

from __future__ import annotations

import nbformat
import pandas as pd
import streamlit as st
from torch import Tensor

from attention.positions import (
    Shuffled,
    random_permutation,
    rope_scores,
    shuffle_tokens,
    sinusoidal_positions,
)
from dashboard import exports, state
from dashboard.lessons import Lesson
from dashboard.render.blocks import show_heatmap, show_matrix
from dashboard.render.matrices import matrix_view
from dashboard.render.tables import feature_labels, format_number


@state.cached
def shuffled(key: tuple, seed: int, *, _lesson: Lesson) -> dict[str, Shuffled]:
    """The layer on X and on X with its rows shuffled, without a mask ("open") and causal."""
    x, layer = _lesson.embedded.x, _lesson.layer
    perm = random_permutation(x.shape[0], seed)
    return {
        "open": shuffle_tokens(layer, x, perm),
        "causal": shuffle_tokens(layer, x, perm, "causal"),
    }


def first_token_rope(lesson: Lesson) -> Tensor | None:
    """RoPE's scores (T, T) of the first token's query against its key in head 0, at every
    pair of positions; None when d_head is odd (RoPE rotates pairs of features)."""
    trace = lesson.trace
    q, k = trace.q[0, 0].detach(), trace.k[0, 0].detach()  # (d_head,) each
    return rope_scores(q, k, trace.q.shape[-2]) if q.shape[-1] % 2 == 0 else None


def notebook_section(lesson: Lesson, seed: int) -> list[nbformat.NotebookNode]:
    """Take it home: the notebook's position section, checked against this page's numbers."""
    shuffle = shuffled(lesson.key, seed, _lesson=lesson)["open"]
    T, C = lesson.embedded.x.shape
    pe = sinusoidal_positions(T, C)
    return exports.position_cells(
        shuffle.perm, shuffle.permuted_outputs, pe, first_token_rope(lesson)
    )


def show_permutation(lesson: Lesson, seed: int) -> None:
    """Shuffle the tokens: without a mask the output rows shuffle the same way, exactly."""
    data = shuffled(lesson.key, seed, _lesson=lesson)
    shuffle = data["open"]
    perm = shuffle.perm.tolist()
    labels = lesson.labels
    st.dataframe(
        pd.DataFrame(
            {"new position": range(len(perm)), "takes the token from": perm,
             "token": [labels[p] for p in perm]}
        ),
        hide_index=True,
    )  # fmt: skip
    out, out_perm, gap = shuffle.outputs, shuffle.permuted_outputs, shuffle.gap
    permuted_labels = [labels[p] for p in perm]
    columns = feature_labels(out.shape[-1])
    # one under the other: each is a table beside its heatmap, too wide for half a page
    show_matrix(
        matrix_view(tuple(labels), tuple(columns), _matrix=out,
                    kind="projection", row_title="token", col_title="feature"),
        "perm-out", "Attn(X)", "The output rows in the original order.",
    )  # fmt: skip
    show_matrix(
        matrix_view(tuple(permuted_labels), tuple(columns),
                    _matrix=out_perm, kind="projection", row_title="token", col_title="feature"),
        "perm-outp", "Attn(P X)", "The same rows, in the shuffled order: nothing else changed.",
    )  # fmt: skip
    causal_gap = data["causal"].gap
    st.markdown(
        f"max |Attn(P X) − P Attn(X)| without a mask: **{format_number(gap)}** "
        f"(equal up to float rounding). With the causal mask: **{format_number(causal_gap)}**: "
        "who may see whom depends on the positions, so the symmetry is broken."
    )


def show_sinusoidal(lesson: Lesson) -> None:
    T, C = lesson.embedded.x.shape
    pe = sinusoidal_positions(T, C)
    show_matrix(
        matrix_view(tuple(lesson.labels), tuple(feature_labels(C)), _matrix=pe,
                    kind="embedding", row_title="token", col_title="feature"),
        "pe", "PE (T, C), added to X",
        "Column pairs oscillate at falling frequencies: each position gets its own pattern.",
    )  # fmt: skip


def show_rope(lesson: Lesson) -> None:
    """The score of one token against itself at every pair of positions, after RoPE."""
    scores = first_token_rope(lesson)
    if scores is None:
        st.info("RoPE rotates pairs of features: pick a d_head that is even.")
        return
    labels = tuple(f"pos {i}" for i in range(scores.shape[0]))
    view = matrix_view(labels, labels, _matrix=scores, kind="score",
                       row_title="query position", col_title="key position")  # fmt: skip
    show_heatmap(view, "RoPE score of one token against itself")
    st.caption(
        "The same token as query at position m and key at position n. Every diagonal is one "
        "colour: after rotating q by m·θ and k by n·θ, their dot product depends only on m − n."
    )
