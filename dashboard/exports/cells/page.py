"""The notebook's opening: the page's settings and numbers, the weights, X and the mask."""

# %% active="py"
# As a plain script, the page is a small example lesson (see __init__.py).
from dashboard.exports.cells.example import PAGE

# isort: split

# %% [markdown]
# # Self-attention, rebuilt in plain PyTorch
#
# This notebook was written by the *Self-attention, step by step* dashboard. It rebuilds the view
# you were looking at with nothing but PyTorch: the layer's weights (seeded at random, or a
# trained model's), the input X, the mask, then every stage, printing each one and checking it
# equals the numbers the dashboard showed (embedded in the next section, as JSON).
#
# Most of the file is those numbers, each written with the fewest digits that read back as the
# dashboard's float32 exactly. With a trained model's layer (lessons 6 and 12, or the sidebar's
# *trained* input), its four C × C weight matrices make up most of it.
#
# Run all cells (Kernel → Restart & Run All). Only `torch` is needed.

# %%
import hashlib
import json
import math

import torch

torch.set_printoptions(precision=4, sci_mode=False, linewidth=120)

# %% [markdown]
# ## What the dashboard showed
#
# Settings, then its numbers.

# %% tags=["parameters"]
source = PAGE["source"]  # where X comes from: random, sentence, worked, trained, shakespeare
tokens = PAGE["tokens"]
T, C, H = PAGE["T"], PAGE["C"], PAGE["H"]  # tokens, d_model, heads
d_head = C // H
seed = PAGE["seed"]
causal = PAGE["causal"]
n_padding = PAGE["n_padding"]  # trailing tokens that are padding keys
empty_last_row = PAGE["empty_last_row"]  # block every key of the last query
mask_value = PAGE["mask_value"]  # what blocked scores hold
has_W_o = PAGE["has_W_o"]

# %% tags=["parameters"]
# The dashboard's numbers (strict JSON has no infinities: a masked score is the string
# "-Infinity"). Only used to compare.
dashboard = json.loads(PAGE["dashboard"])


def shown(name):
    """One stage as the dashboard computed it, as a tensor."""

    def number(v):
        if isinstance(v, list):
            return [number(x) for x in v]
        return -math.inf if v == "-Infinity" else v

    return torch.tensor(number(dashboard["stages"][name]))


# %% [markdown]
# ## The weights
#
# `torch.manual_seed(seed)` right before the four projections are created, in the order W_q,
# W_k, W_v, W_o, as the classic tutorials do. A trained layer (lesson 6's tiny models, lesson
# 12's small GPT) cannot be drawn from a seed: its weights are the dashboard's own, copied in.


# %%
def trained(name):
    linear = torch.nn.Linear(C, C, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(dashboard["weights"][name]))
    return linear


if source in ("trained", "shakespeare"):  # a trained model's layer
    W_q, W_k, W_v = trained("W_q"), trained("W_k"), trained("W_v")
    W_o = trained("W_o") if has_W_o else None
else:
    torch.manual_seed(seed)
    W_q = torch.nn.Linear(C, C, bias=False)
    W_k = torch.nn.Linear(C, C, bias=False)
    W_v = torch.nn.Linear(C, C, bias=False)
    W_o = torch.nn.Linear(C, C, bias=False) if has_W_o else None
for name, linear in [("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o)]:
    if linear is not None:
        assert torch.equal(linear.weight, torch.tensor(dashboard["weights"][name])), name
print(W_q.weight)

# %% [markdown]
# ## The input X, shape (T, C)

# %%
if source == "random":
    # seeded N(0, 1) vectors from a stream of their own: a hash of the seed, so X is
    # independent of the weights drawn by torch.manual_seed(seed)
    x_digest = hashlib.blake2b(f"x\x00{seed}".encode(), digest_size=8).digest()
    x_seed = int.from_bytes(x_digest, "little") >> 1
    X = torch.randn(T, C, generator=torch.Generator().manual_seed(x_seed))  # (T, C)
    assert torch.equal(X, shown("x"))
else:
    # the dashboard's own X: one vector per token of a sentence (plus sinusoidal positions, if
    # chosen), the worked example's encodings, or a trained model's residual stream entering
    # this layer (token and position embeddings, plus the earlier layers' outputs)
    X = shown("x")  # (T, C)
print(X)

# %% [markdown]
# ## The mask, True = may attend
#
# Rows are queries, columns are keys.

# %%
allowed = torch.ones(T, T, dtype=torch.bool)
if causal:
    allowed = torch.tril(allowed)  # query i sees keys 0 .. i
if n_padding:
    allowed[:, T - n_padding :] = False  # padding keys
if empty_last_row:
    allowed[-1] = False
assert allowed.tolist() == dashboard["allowed"]
print(allowed)
