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
d_head = C // H


def check(name, mine):
    """Your tensor against the dashboard's (an AssertionError names what differs)."""
    assert mine is not None, f"{name}: write it in the cell above"
    torch.testing.assert_close(mine, shown(name), rtol=1e-4, atol=1e-4)
    print(f"{name}: right, shape {tuple(mine.shape)}")


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
