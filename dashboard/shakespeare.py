"""The Shakespeare GPT on the screen, shared by the lessons that show it (6, 10 and 12): the
model's reading of a text (every head's weights and scores), every head at once, and the KV
cache's speed-up on this server. Lesson 12 (views/real_model.py) is built on it; lessons 6 and 10
show a part of it without importing lesson 12.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
import torch

from attention.lm.generate import sample
from attention.lm.heads import KINDS, HeadScore, head_scores
from attention.lm.reading import losses
from attention.lm.training import SIZE
from attention.masks import as_blocked, causal_mask
from dashboard import state, trained
from dashboard.render import blocks
from dashboard.render.layout import wrapping_row
from dashboard.render.matrices import StageView, weights_view

TEXT_DEFAULT = "ROMEO:\nBut soft, what light through yonder window breaks?"


@dataclass(frozen=True, eq=False)
class Reading:
    """The model on one text: its tokens, every head's weights, logits, head scores, losses."""

    text: str
    labels: list[str]
    ids: torch.Tensor  # (T,)
    weights: tuple[torch.Tensor, ...]  # per layer (H, T, T)
    logits: torch.Tensor  # (T, vocab)
    scores: list[HeadScore]
    losses: torch.Tensor  # (T - 1,) nats per next character
    notice: str | None


def position_labels(tokens) -> list[str]:
    """Axis labels that name a character and its position, "3:a" (as lesson 6's do): the
    questions ask for positions, and a character repeats."""
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


@state.cached
def reading(text: str) -> Reading:
    """The model's forward on the text (ValueError when it has nothing to read)."""
    state.one_torch_thread()
    model = trained.language_model()
    read = trained.read_text(text)
    with torch.inference_mode():
        out = model(read.ids[None])
        scores = head_scores(model, read.ids[None])
        per_char = losses(model, read.ids)
    return Reading(
        text, position_labels(read.tokens), read.ids,
        tuple(t.weights[0] for t in out.traces), out.logits[0], scores, per_char, read.notice,
    )  # fmt: skip


GENERATED = 200  # characters timed with and without the cache


@state.cached(keep=True)
def generation_seconds() -> dict[bool, float]:
    """Seconds to write GENERATED characters after "ROMEO:", with the KV cache (True) and
    without (False): the best of three runs each, measured once per server."""
    state.one_torch_thread()
    model = trained.language_model()
    best = {}
    with torch.inference_mode():
        for cache in (True, False, True, False, True, False):
            run = sample(model, "ROMEO:\n", GENERATED, use_cache=cache,
                         generator=torch.Generator().manual_seed(0))  # fmt: skip
            best[cache] = min(best.get(cache, run.seconds), run.seconds)
    return best


def show_generation_timing() -> None:
    """The cache's speed-up on this model, measured on this server once a learner asks (the
    six runs take seconds on one core: a class opening lesson 10 at once waited for them
    behind its first student); shown to everyone on the server from then on."""
    if not generation_seconds.is_cached():
        asking = st.empty()  # the offer, replaced by the figures once measured
        with asking.container():
            st.markdown("How much does the cache save? Time it on this server, writing the same "
                        "text with the cache and without it:")  # fmt: skip
            timed = st.button(
                "Time it on this server",
                key="time_generation",
                icon=":material/timer:",
                help=f"Writes {GENERATED} characters three times with the cache and three "
                "times without, on this server (a few seconds), then says how long each took.",
            )
        if not timed:
            return
        asking.empty()
    seconds = generation_seconds()
    st.markdown(
        f"Writing {GENERATED} characters after “ROMEO:” (always the same run) took "
        f"**{seconds[True] * 1000:.0f} ms** with the KV cache and **{seconds[False] * 1000:.0f} "
        f"ms** without it on this server ({seconds[False] / seconds[True]:.1f}× longer; the "
        "same text either way)."
    )
    st.caption(
        "Best of three runs each, one torch thread. Without the cache every character re-runs "
        f"both layers on the whole window (up to {SIZE.context} characters); with it, one new "
        "row per layer. The model knows positions up to "
        f"{SIZE.context - 1} only, so {GENERATED} characters overflow the window: each time it "
        f"is full, both ways keep its last {SIZE.context // 2} characters, and the cache is "
        "filled again from them."
    )


def head_title(score: HeadScore) -> str:
    return f"layer {score.layer} · head {score.head}"


def role_words(score: HeadScore) -> str:
    """The head's role on this text, from its scores: the kind with the best share of its
    ceiling, when that reaches ROLE_SHARE."""
    kind = score.role
    if kind is None:
        best = max(score.scores, key=score.share)
        return f"no clear role (best: {KINDS[best]}, {score.share(best):.0%} of its best)"
    return f"{KINDS[kind]} ({score.share(kind):.0%} of its best)"


@state.cached  # per text, as `reading` is: hashed once, not every head's map on every run
def head_views(text: str) -> list[tuple[StageView, str, str]]:
    """Every head's map on the text, with its title and its role in words."""
    read = reading(text)
    blocked = as_blocked(causal_mask(len(read.labels)))  # (T, T): True where a query may not look
    return [
        (weights_view(read.weights[s.layer][s.head], read.labels, head_title(s), blocked),
         head_title(s), role_words(s))
        for s in read.scores
    ]  # fmt: skip


def show_all_heads(read: Reading, size: int | None = None) -> None:
    """Every layer × head on the text at once (BertViz's model view), each named from its
    scores on this text."""
    row = wrapping_row("small")
    for view, title, role in head_views(read.text):
        with row.container(width="content", gap=None):
            blocks.show_fitted(view, title, size or 300, size or 300)
            st.caption(role)
