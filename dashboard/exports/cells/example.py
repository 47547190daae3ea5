"""The small lessons a cell file checks when it runs as a plain script, instead of a page's.

Their data is made by the same functions that give a notebook its parameters, from the attention
package's own numbers, so running a cell file checks the notebook's plain PyTorch against both.
"""

from attention.scaling import random_scores, sample_dot_products, softmax_saturation, softmax_scale
from dashboard.controls import Settings
from dashboard.exports.notebooks import block_data, cross_data, page_data, scaling_data
from dashboard.lessons import computed

LESSON = computed(Settings(seq_len=5, d_model=8, n_heads=2, seed=3))  # random X, causal
PAGE = page_data(LESSON)  # what page.py's parameters are given in a notebook of LESSON


def scaling_example(seed: int, n: int, d_ks: tuple[int, ...], t: int, d_k: int, tau: float) -> dict:
    """What scaling.py's parameters are given in a notebook, from attention.scaling itself."""
    samples = [sample_dot_products(d, n, seed + d) for d in d_ks]
    variances = [(s.d_k, s.raw_variance, s.scaled_variance) for s in samples]
    scores = random_scores(t, d_k, seed)
    scales = (1.0, softmax_scale(d_k), softmax_scale(d_k, tau))
    rows = [softmax_saturation(scores, scale) for scale in scales]
    saturation = [(r.scale, r.max_weight, r.entropy, r.gradient_norm) for r in rows]
    return scaling_data(seed, n, variances, t, d_k, tau, saturation)


SCALING = scaling_example(seed=3, n=200, d_ks=(4, 16), t=6, d_k=16, tau=0.5)


def block_example(typed: str, position: int) -> dict:
    """What block.py's parameters are given in a notebook of lesson 14 at this text and
    position, from attention.lm.block itself."""
    from attention.lm.block import logit_lens, stream_of
    from attention.lm.training import load

    model = load().model
    stream = stream_of(model, typed)
    return block_data(model, stream, logit_lens(model, stream), position)


BLOCK = block_example("ROMEO:\nBut soft, what light through yonder window breaks?", 56)


def cross_example(word: str, layer: int, head: int) -> dict:
    """What cross.py's parameters are given in a notebook of lesson 13 at this word, decoder
    layer and head, from attention.cross itself."""
    from attention.cross.model import write
    from attention.cross.training import load

    model = load()
    return cross_data(model, write(model, word), layer, head)


CROSS = cross_example("black", 1, 1)
