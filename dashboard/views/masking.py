"""Lesson 3's blocks: one mask in three conventions, and what a fully masked row becomes."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import streamlit as st
import torch

from attention import as_additive, as_blocked, naive_softmax
from attention.check_yourself.masking import masking_questions
from attention.drills import Drill
from attention.explain import allowed_matrix
from dashboard import controls, lessons, state
from dashboard.controls import Settings
from dashboard.lessons import Computed
from dashboard.render import blocks
from dashboard.render.blocks import mask_text, show_rows
from dashboard.render.elements import Recorded, record, replay, style_cells
from dashboard.render.presenter import Section
from dashboard.render.tables import column_px
from dashboard.spec import LessonSpec


def show_mask_conventions(lesson: Computed, screen: tuple[int, int] | None = None) -> None:
    """The same mask written three ways, side by side (a wrapping row): tables on the page,
    blocks of text on a projector's `screen` (they scale with the section, presenter.FIT)."""
    allowed = allowed_matrix(lesson.trace, 0)  # (T, T)
    row = st.container(horizontal=True, gap="medium" if screen is None else "small")
    if screen is not None:
        for title, used_by, values in conventions(allowed):
            cells = [["−∞" if v == float("-inf") else f"{v:g}" for v in line]
                     if isinstance(line[0], float) else line for line in values]  # fmt: skip
            width = max(len(str(v)) for line in cells for v in line)
            text = "\n".join(" ".join(str(v).rjust(width) for v in line) for line in cells)
            with row.container(width=max(9 * len(text.split("\n")[0]) + 48, 180), gap=None):
                st.markdown(f"**{title}**  \n{used_by}")
                st.code(text, language=None)
        st.caption("T = True, F = False. Rows are queries, columns are keys.")
        return
    # keyed on what the tables show (the mask and the tokens), not on the lesson: a new seed,
    # d_model or head count draws the same three tables
    shown = mask_conventions(tuple(lesson.labels), allowed.numpy().tobytes(), _allowed=allowed)
    for title, used_by, width, table in shown:
        with row.container(width=width):
            st.markdown(f"**{title}**")
            st.caption(used_by)
            replay(table)
    st.caption("T = True, F = False. Rows are queries, columns are keys.")


def conventions(allowed: torch.Tensor) -> list[tuple[str, str, list]]:
    """The (T, T) mask `allowed` (True = may attend) in each convention: its title, where it
    is used, its cells (T/F, or 0 and -inf)."""
    return [
        (
            "True = may attend",
            "PyTorch `scaled_dot_product_attention(attn_mask=…)`; this package",
            mask_text(allowed, short=True),
        ),
        (
            "True = blocked",
            "`nn.MultiheadAttention(attn_mask=…, key_padding_mask=…)`; the classic "
            "tutorial's `mask = tril(ones) == 0`",
            mask_text(as_blocked(allowed), short=True),
        ),
        (
            "Additive float",
            "0 where allowed, −∞ where blocked, added to the scores (Hugging Face, "
            "the original Transformer code)",
            as_additive(allowed).tolist(),
        ),
    ]


@state.cached  # one lesson's three tables, marshalled once for every session
def mask_conventions(
    labels: tuple[str, ...], mask: bytes, *, _allowed: torch.Tensor
) -> list[tuple[str, str, int | str, Recorded]]:
    """Each convention's title, where it is used, its box's width and its table, for the
    (T, T) mask `_allowed` (True = may attend; `mask` is its bytes) over the tokens `labels`."""
    labels = list(labels)
    shown = []
    for title, used_by, values in conventions(_allowed):
        numeric = bool(values) and isinstance(values[0][0], float)
        cell = max(34, column_px(["-inf"])) if numeric else 34
        width = 44 + cell * len(labels) + 2
        frame = pd.DataFrame(values, index=labels, columns=labels)
        frame = frame.rename_axis(index="query", columns="key")
        column = st.column_config.Column(alignment="center", width=cell)
        config = {"_index": st.column_config.TextColumn(width=44), **dict.fromkeys(labels, column)}
        table = record(
            lambda dg, frame=frame, config=config: dg.dataframe(frame, column_config=config)
        )
        if numeric:  # the true -inf, as every export writes it, printed short ("-inf")
            table = style_cells(
                table, short_numbers(frame), np.zeros(frame.shape, bool), "", ADDITIVE_UUID
            )
        shown.append((title, used_by, width if width <= 400 else "stretch", table))
    return shown


ADDITIVE_UUID = "additive_mask"  # a Styler's table id (no CSS names it: nothing is coloured)


def short_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """The additive mask as its table prints it: 0 and -inf (what
    `frame.style.format(lambda v: "-inf" if v == -inf else f"{v:g}")` shows)."""
    return frame.map(lambda v: "-inf" if v == float("-inf") else f"{v:g}").astype(str)


def show_fill_comparison(with_inf: Computed, with_big: Computed) -> None:
    """What a fully blocked query row becomes: naive softmax with -inf, with -1e9, and PyTorch."""
    labels = with_inf.labels
    last = len(labels) - 1
    rows = {
        "naive softmax, fill −∞": naive_softmax(with_inf.trace.masked)[0, last],
        "naive softmax, fill −1e9": naive_softmax(with_big.trace.masked)[0, last],
        "this package = PyTorch SDPA": with_inf.trace.weights[0, last],
    }
    rows = {name: row.tolist() for name, row in rows.items()}
    show_rows(rows, labels, row_title=f"weights of query {labels[last]}")


# --- presenter mode (?present=1): one section a screen ---------------------------------


def sections() -> list[Section]:
    """Lesson 3: one mask in three conventions, the mask at work, a fully masked row."""
    settings = controls.current_settings()
    T = len(blocks.current_lesson(settings).labels)
    n_padding = controls.lesson_value("pad", range(T), 0)
    padded = lessons.computed(settings, lessons.Variant(n_padding=n_padding))
    empty = {"n_padding": n_padding, "empty_last_row": True}
    with_inf = lessons.computed(settings, lessons.Variant(**empty, mask_value=float("-inf")))
    with_big = lessons.computed(settings, lessons.Variant(**empty, mask_value=-1e9))
    return [
        Section("One mask, three conventions",
                partial(show_mask_conventions, padded, blocks.SCREEN),
                "Point at one cell in all three. Ask: what goes wrong if you pass the wrong one?",
                key="conventions"),
        blocks.stage_section(padded, "masked"),
        blocks.stage_section(padded, "weights"),
        Section("−∞ or −1e9? A fully masked row",
                partial(show_fill_comparison, with_inf, with_big),
                "Every key of the last query is blocked. Ask: which row would you rather debug?",
                key="fill"),
    ]  # fmt: skip


# --- the lesson, declared once (dashboard/spec.py) ---------------------------------------


def lesson_questions(settings: Settings, n_padding: int) -> tuple[Drill, ...]:
    """The check-yourself questions at the sidebar's settings (their seed: a trained model's
    lesson keeps its own) and the page's padding: the mask another padding makes, asked of the
    lesson without padding, and a weight of the page's own layer on a new input, padded."""
    base = lessons.computed(settings)
    padded = lessons.computed(settings, lessons.Variant(n_padding=n_padding))
    return masking_questions(
        base.trace, base.labels, base.settings.causal, n_padding, settings.seed
    ) + lessons.diagnostic_questions(padded)


def class_questions(s: Settings) -> tuple[Drill, ...]:
    """The check-yourself questions at a class's settings (dashboard/classroom/asking.py)."""
    return lesson_questions(s, 0)  # the page's padding slider at its start, 0


LESSON = LessonSpec(
    number=3,
    path="pages/masking.py",
    title="3 · Masking",
    minutes=10,
    icon=":material/block:",
    summary="Causal and padding masks, -inf vs -1e9, and the three mask conventions.",
    objectives=(
        "say which keys a causal mask with padding blocks for a query",
        "compute a weight under a mask: the softmax over the allowed keys only",
    ),
    recap="a mask removes keys before the softmax, so the allowed keys share all the weight.",
    params=("pad", "mask_head"),
    sections=sections,
    class_questions=class_questions,
)
