"""The computation behind a page: settings -> X, layer and trace, cached on plain values."""

from __future__ import annotations

from dataclasses import astuple, dataclass, replace

import torch

from attention import (
    AttentionTrace,
    Embedded,
    MultiHeadSelfAttention,
    build_mask,
    parse_matrix,
    random_embeddings,
    seeded_layer,
    sentence_embeddings,
    worked_example,
)
from attention.drills import Drill
from attention.ops import NEG_INF
from dashboard import state
from dashboard.settings import DEFAULTS, LM_LAYERS, TRAINED_TASKS, Settings
from dashboard.text import unique_labels

# Every cache shares one budget in bytes (state.py) and its entries expire after ten idle
# minutes, so a server that taught a class in the morning is not holding the class's matrices in
# the afternoon. Sizes: docs/performance.md.


@dataclass(frozen=True, eq=False)
class Computed:
    """What a page shows: token labels, X and the trace (or the reason there is none)."""

    settings: Settings
    labels: list[str]
    embedded: Embedded | None
    trace: AttentionTrace | None
    layer: MultiHeadSelfAttention | None = None
    error: str | None = None
    notice: str | None = None
    key: tuple = ()  # the cache key: plain values that determine everything above


@dataclass(frozen=True)
class Variant:
    """Lesson-specific changes to the shared computation (plain values, so they key the cache)."""

    n_padding: int = 0  # trailing tokens treated as padding
    empty_last_row: bool = False  # block every key of the last query
    mask_value: float | None = None  # None: the source's own (-1e9 for the worked example)
    encodings: tuple[tuple[float, ...], ...] | None = None  # the worked example's X, edited


def canonical(settings: Settings) -> Settings:
    """Settings with the values that do not matter for this source reset, so they share a cache
    entry: the worked example ignores the sizes and the seed; only a sentence has text."""
    if settings.source == "worked":
        return Settings(
            source="worked",
            causal=settings.causal,
            text="",
            seq_len=3,
            d_model=2,
            n_heads=1,
            seed=0,
            positions=False,
        )
    if settings.source == "trained":
        task = settings.task if settings.task in TRAINED_TASKS else DEFAULTS["task"]
        layers = TRAINED_TASKS[task]
        return Settings(
            source="trained", task=task, layer=min(max(settings.layer, 0), layers - 1), text="",
            seq_len=0, d_model=0, n_heads=0, seed=0, positions=False, causal=False,
        )  # fmt: skip
    if settings.source == "shakespeare":
        return Settings(
            source="shakespeare", text=settings.text,
            layer=min(max(settings.layer, 0), LM_LAYERS - 1), seq_len=0, d_model=0, n_heads=0,
            seed=0, positions=False, causal=True,
        )  # fmt: skip
    if settings.source == "random":
        return replace(settings, text="", positions=False)
    return settings


def computed(settings: Settings, variant: Variant = Variant()) -> Computed:
    """The trace for these settings, computed once per distinct settings (bounded cache)."""
    state.one_torch_thread()
    return cached_computed(astuple(canonical(settings)), astuple(variant))


def computed_at(settings: Settings, **changes) -> Computed:
    """The lesson at these settings with some of them changed (`causal=True`)."""
    return computed(replace(settings, **changes))


@state.cached  # bounded by bytes: a trace at the maxima is 2.6 MB, at the defaults a few KB
def cached_computed(settings_key: tuple, variant_key: tuple) -> Computed:
    """Keyed on plain tuples; the tensors are made in inference mode, so nobody can change the
    shared copy in place."""
    settings, variant = Settings(*settings_key), Variant(*variant_key)
    key = (settings_key, variant_key)
    try:
        with torch.inference_mode():
            return replace(compute(settings, variant), key=key)
    except ValueError as error:
        return Computed(settings, [], None, None, error=str(error), key=key)


def compute(settings: Settings, variant: Variant) -> Computed:
    """Build X and run the layer (no caching here: see `computed`). The lesson's own variant (the
    padding, the fully masked row, the fill value) applies to every source, a trained layer's
    too: lesson 3 on a trained model masks that model's layer as it masks the others."""
    s = settings
    mask_value = variant.mask_value
    if s.source == "worked":
        x = (
            None
            if variant.encodings is None
            else parse_matrix([list(row) for row in variant.encodings], max_rows=3, max_cols=2)
        )
        example = worked_example(x)
        embedded, layer = example.embedded, example.layer
        if mask_value is None:
            mask_value = example.mask_value  # the tutorial fills with -1e9
    elif s.source == "trained":
        s, embedded, layer = trained_input(s)
    elif s.source == "shakespeare":
        s, embedded, layer = lm_input(s)
    elif s.source == "sentence":
        embedded = sentence_embeddings(
            s.text, s.d_model, seed=s.seed, max_len=s.seq_len, positional=s.positions
        )
        layer = shared_layer(s.seed, s.d_model, s.n_heads)
    else:
        embedded = random_embeddings(s.seq_len, s.d_model, s.seed)
        layer = shared_layer(s.seed, s.d_model, s.n_heads)
    mask_value = NEG_INF if mask_value is None else mask_value
    T = embedded.x.shape[0]
    mask = build_mask(
        T,
        causal=s.causal,
        n_padding=min(variant.n_padding, T),
        empty_last_row=variant.empty_last_row,
    )
    trace = layer.eval()(embedded.x, mask, mask_value=mask_value)
    labels = unique_labels(embedded.tokens)
    return Computed(s, labels, embedded, trace, layer=layer, notice=embedded.notice)


@state.cached  # the lesson's variants (padding, fill value, T) share one layer
def shared_layer(seed: int, d_model: int, n_heads: int) -> MultiHeadSelfAttention:
    """The seeded layer, made once (lesson 3 runs four variants of a lesson on it); in
    inference mode, so no caller can change the shared weights."""
    with torch.inference_mode():
        return seeded_layer(seed, d_model, n_heads).eval()


def trained_input(s: Settings) -> tuple[Settings, Embedded, MultiHeadSelfAttention]:
    """One layer of a shipped trained model on its task's example: X is that layer's input
    (token + position embeddings, plus the earlier layers' outputs); the settings say the
    model's sizes and its own mask (the reverse task reads both ways: no causal mask)."""
    from dashboard import trained  # the trained models: imported by the lessons that show one

    run = trained.shipped(s.task)
    ids = run.history.example  # (T,)
    x = run.model(ids[None]).traces[s.layer].x[0]  # (T, C): the residual stream into the layer
    layer = run.model.layers[s.layer]
    tokens = tuple(run.task.decode(ids))
    settings = replace(
        s, seq_len=len(tokens), d_model=layer.d_model, n_heads=layer.n_heads,
        causal=run.task.causal,
    )  # fmt: skip
    return settings, Embedded(tokens=tokens, x=x), layer


def lm_input(s: Settings) -> tuple[Settings, Embedded, MultiHeadSelfAttention]:
    """One layer of the Shakespeare model reading the student's text: X is that layer's input
    as its attention reads it, LN_1(residual stream); a character per token; causal."""
    from dashboard import trained  # as trained_input

    read = trained.read_text(s.text)
    model = trained.language_model()
    ids = read.ids  # (T,)
    x = model(ids[None]).traces[s.layer].x[0]  # (T, C): the layer-normed residual stream
    layer = model.blocks[s.layer].attn
    settings = replace(
        s, seq_len=len(ids), d_model=layer.d_model, n_heads=layer.n_heads, causal=True
    )
    return settings, Embedded(tokens=read.tokens, x=x, notice=read.notice), layer


@state.per_lesson  # a buggy forward per mistake and cell tried: once per setting
def diagnostic_questions(lesson: Computed) -> tuple[Drill, ...]:
    """A weight of the page's own layer on a new input, asked from its raw scores; the numbers
    the bug hunt's classic mistakes give for it are run when an answer is typed (`diagnosed`)."""
    if lesson.layer is None:
        return ()
    from attention import diagnosis  # the bug hunt's mistakes: only lessons that ask it

    drill = diagnosis.weight_question(lesson.layer, lesson.trace.allowed, lesson.settings.seed)
    return () if drill is None else (drill,)


@state.cached  # keyed on the question's text: its mistakes, run once when an answer is typed
def diagnosed(prompt: str, answer_text: str, _drill: Drill) -> Drill:
    """The question with the numbers its classic mistakes give (attention.diagnosis)."""
    from attention import diagnosis

    return diagnosis.diagnosed(_drill)
