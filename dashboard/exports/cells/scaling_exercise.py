"""Lesson 4's exercises: the learner writes the dot products, the scaling, the softmax, its
entropy and its Jacobian in the cells marked *Your code*; the cell after each checks them against
the page's numbers. The solution notebook has them written."""

# %% active="py"
# As a plain script, the page's numbers are a small example's (see __init__.py).
from dashboard.exports.cells.example import SCALING

# isort: split

# %% [markdown]
# # Why divide by √d_k? Your turn
#
# This notebook was written by lesson 4 of the *Self-attention, step by step* dashboard, with the
# page's numbers in it. Each cell marked *Your code* is yours: replace each `None`, run it, then
# run the check under it, which compares your numbers with the page's. The solution notebook
# (also in *Take it home*) has every step written. Only `torch` is needed.

# %%
import math

import torch

# %% tags=["parameters"]
seed, n = SCALING["seed"], SCALING["n"]  # the page's seed; random pairs per d_k
variances_by_dashboard = SCALING["variances_by_dashboard"]  # (d_k, Var(q·k), Var(q·k / √d_k))
T, d_k, tau = SCALING["T"], SCALING["d_k"], SCALING["tau"]  # one query against T keys
saturation_by_dashboard = SCALING["saturation_by_dashboard"]  # (scale, max weight, entropy, ‖J‖)


# %%
def check(name, mine, page):
    """Your number against the page's (an AssertionError names what differs)."""
    assert mine is not None, f"{name}: write it in the cell above"
    assert math.isclose(float(mine), page, rel_tol=1e-5, abs_tol=1e-9), f"{name}: {mine} ≠ {page}"
    print(f"{name} = {float(mine):.4f}: right")


# %% [markdown]
# ## 1. Dot products, with and without 1/√d_k
#
# Below, n random pairs q, k of the page's largest d_k, each of shape (n, d_k). Write `raw`, the
# n dot products q·k (one per pair, shape (n,)), and `scaled`, the same divided by √d_k.

# %%
d, shown_raw, shown_scaled = variances_by_dashboard[-1]
generator = torch.Generator().manual_seed(seed + d)
q = torch.randn(n, d, generator=generator)  # (n, d_k)
k = torch.randn(n, d, generator=generator)  # (n, d_k)

# %% tags=["exercise"]
raw = (q * k).sum(dim=-1)  # (n,) one dot product per pair
scaled = raw / math.sqrt(d)  # (n,)

# %%
check(f"Var(q·k) at d_k = {d}", None if raw is None else raw.var(), shown_raw)
check(f"Var(q·k / √d_k) at d_k = {d}", None if scaled is None else scaled.var(), shown_scaled)

# %% [markdown]
# ## 2. One row of scores through the softmax, scaled by 1/√d_k
#
# `scores` holds one query's raw scores against T keys. Write `p`, the softmax of the scores
# times 1/√d_k (shape (T,)); its `entropy` −Σ p log p in nats; and `J`, the softmax's Jacobian
# diag(p) − p pᵀ (shape (T, T)), whose size ‖J‖ (`J.norm()`) says how much gradient flows back.

# %%
generator = torch.Generator().manual_seed(seed)
query = torch.randn(d_k, generator=generator)  # (d_k,)
keys = torch.randn(T, d_k, generator=generator)  # (T, d_k)
scores = (keys @ query).double()  # (T,) raw scores, variance d_k
page_scale, page_max, page_entropy, page_gradient = saturation_by_dashboard[1]

# %% tags=["exercise"]
p = torch.softmax(scores / math.sqrt(d_k), dim=-1)  # (T,)
entropy = -(p * torch.log(p.clamp_min(1e-300))).sum()
J = torch.diag(p) - torch.outer(p, p)  # (T, T)

# %%
check("max weight", None if p is None else p.max(), page_max)
check("entropy (nats)", entropy, page_entropy)
check("gradient size ‖J‖", None if J is None else J.norm(), page_gradient)
print("Every step right: these are the page's numbers.")
