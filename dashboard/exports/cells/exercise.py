"""Exercises: the learner writes each step of the layer in the cells marked *Your code*; the
cell after each checks it against the page's numbers. The solution notebook has them written.
"""

# %% active="py"
import math

import torch

from dashboard.exports.cells.page import C, H, T, W_k, W_o, W_q, W_v, X, allowed, mask_value, shown

# isort: split

# %% [markdown]
# ## Your turn: write each step
#
# Each cell marked *Your code* is yours: replace each `None` with the step, run it, then run the
# check under it, which compares your tensor with the numbers the dashboard showed. Work from
# the formulas on the page; the solution notebook (also in *Take it home*) has every step
# written.

# %%
torch.set_grad_enabled(False)  # numbers to compare, nothing to train
d_head = C // H  # the width of a head: the page and the checks call it d_k


def check(name, mine):
    """Your tensor against the dashboard's. Where it differs, the AssertionError says how: by a
    classic mistake's name when yours equals that mistake's result, otherwise where it differs
    most."""
    assert mine is not None, f"{name}: write it in the cell above"
    right = shown(name)
    if tuple(mine.shape) == tuple(right.shape) and close(mine, right):
        print(f"{name}: right, shape {tuple(mine.shape)}")
        return
    for mistake, made in classic_mistakes(name):
        if tuple(mine.shape) == tuple(made.shape) and close(mine, made):
            raise AssertionError(f"{name}: {mistake}")
    if tuple(mine.shape) != tuple(right.shape):
        raise AssertionError(
            f"{name}: your shape is {tuple(mine.shape)}, the page's is {tuple(right.shape)}"
        )
    gap = torch.where(mine == right, 0.0, (mine - right).abs()).nan_to_num(nan=math.inf)
    at = tuple(int(i) for i in torch.unravel_index(gap.argmax(), gap.shape))
    differ = int((gap > 1e-4).sum())
    where = ", ".join(f"{axis} {i}" for axis, i in zip(AXES[name], at, strict=True))
    cells = "the only cell that differs" if differ == 1 else f"of the {differ} cells that differ"
    raise AssertionError(
        f"{name}: at {where} yours is {mine[at].item():.4f}, the page's {right[at].item():.4f} "
        f"({cells})"
    )


# What each step's dimensions are, to say where a tensor differs
AXES = {name: ("head", "token", "column") for name in ("q", "k", "v", "heads")}
AXES |= {name: ("head", "query", "key") for name in ("scores", "scaled", "masked", "weights")}
AXES |= {name: ("token", "column") for name in ("concat", "output")}


def close(a, b):
    """Equal to the checks' tolerance, -inf matching -inf."""
    return torch.allclose(a.float(), b.float(), rtol=1e-4, atol=1e-4)


def classic_mistakes(name):
    """What the classic mistakes give at step `name`, made from the page's own numbers (never
    from yours): (what went wrong, the tensor it gives)."""
    d = d_head

    def split(t, transpose=True):  # (T, C) -> (H, T, d_head)
        return t.view(T, H, d).transpose(0, 1) if transpose else t.reshape(H, T, d)

    made = []
    if name in ("q", "k", "v"):
        W = {"q": W_q, "k": W_k, "v": W_v}[name]
        made += [
            (".view(H, T, d_k) without the transpose: it cuts the rows into heads, not the "
             "columns; use .view(T, H, d_k).transpose(0, 1)", split(X @ W.weight.T, False)),
            ("W.weight without .T: PyTorch stores it as (out, in), so X @ W.weight.T",
             split(X @ W.weight)),
            ("not split into heads yet: use .view(T, H, d_k).transpose(0, 1)", X @ W.weight.T),
        ]  # fmt: skip
    scores = shown("scores")
    if name == "scaled":
        made += [
            ("the scores were not scaled: divide them by √d_k", scores),
            ("divided by d_k: the scale is its square root, √d_k", scores / d),
            ("divided by √d_model: the scale is √d_k, each head's own width",
             scores / math.sqrt(C)),
        ]  # fmt: skip
    if name == "masked":
        made += [
            ("no mask: fill the blocked scores with mask_value", shown("scaled")),
            ("the mask the wrong way round: fill where allowed is False, ~allowed",
             shown("scaled").masked_fill(allowed, mask_value)),
        ]  # fmt: skip
    if name == "weights":
        blocked = ~allowed

        def softmax(t, dim=-1):
            return torch.where(allowed, torch.softmax(t.masked_fill(blocked, -math.inf), dim), 0.0)

        made += [
            ("softmax over the wrong axis, the queries (dim=-2): each row's weights, over the "
             "keys, must sum to 1", softmax(shown("scaled"), dim=-2)),
            ("softmax of the unscaled scores: scale first", softmax(scores)),
            ("softmax without the mask: the blocked keys got weight",
             torch.softmax(shown("scaled"), dim=-1)),
        ]  # fmt: skip
    if name == "heads":
        made += [
            ("the weights transposed: heads = weights @ v, each query's row of weights mixing "
             "the rows of v",
             shown("weights").transpose(-2, -1) @ shown("v")),
        ]  # fmt: skip
    if name == "concat":
        made += [
            ("the heads joined without .transpose(0, 1): .reshape(T, C) alone mixes the tokens",
             shown("heads").reshape(T, C)),
        ]  # fmt: skip
    if name == "output" and W_o is not None:
        made += [("W_o not applied: output = concat @ W_o.weight.T", shown("concat"))]
    return made


# %% [markdown]
# ### 1. Q, K, V and the head split
#
# Q = X W_q: PyTorch stores `W_q.weight` as (out, in), so `X @ W_q.weight.T`. Then cut Q's C
# columns into H heads of d_head: `.view(T, H, d_head)`, then `.transpose(0, 1)`, shape
# (H, T, d_head). The same for K and V.

# %% tags=["exercise"]
q = (X @ W_q.weight.T).view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)
k = (X @ W_k.weight.T).view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)
v = (X @ W_v.weight.T).view(T, H, d_head).transpose(0, 1)  # (H, T, d_head)

# %%
check("q", q)
check("k", k)
check("v", v)

# %% [markdown]
# ### 2. The scores, then the scaling
#
# Every query against every key, S = q kᵀ, shape (H, T, T); then S′ = S / √d_head.

# %% tags=["exercise"]
scores = q @ k.transpose(-2, -1)  # (H, T, T)
scaled = scores / math.sqrt(d_head)  # (H, T, T)

# %%
check("scores", scores)
check("scaled", scaled)

# %% [markdown]
# ### 3. The mask
#
# Where `allowed` is False, the scaled score becomes `mask_value` (−∞, or −1e9 as in some code).

# %% tags=["exercise"]
masked = scaled.masked_fill(~allowed, mask_value)  # (H, T, T)

# %%
check("masked", masked)

# %% [markdown]
# ### 4. The softmax along each row
#
# Over the keys (the last dimension); a blocked key's weight is 0, and a query with no allowed
# key gets a row of zeros (as PyTorch's `scaled_dot_product_attention` does).

# %% tags=["exercise"]
weights = torch.softmax(scaled.masked_fill(~allowed, -math.inf), dim=-1)  # (H, T, T)
weights = torch.where(allowed, weights, torch.zeros(()))  # no NaN for an empty row

# %%
check("weights", weights)

# %% [markdown]
# ### 5. Weights times V, then the heads back together
#
# Each head's output is `weights @ v`, shape (H, T, d_head); the concat undoes the split,
# `.transpose(0, 1).reshape(T, C)`; the output multiplies it by W_o (when the layer has one).

# %% tags=["exercise"]
heads = weights @ v  # (H, T, d_head)
concat = heads.transpose(0, 1).reshape(T, C)  # (T, C)
output = concat @ W_o.weight.T if W_o is not None else concat  # (T, C)

# %%
check("heads", heads)
check("concat", concat)
check("output", output)
print("Every step right: this is the layer the page showed.")
