"""Lesson 4's notebook: Var(q·k) with and without 1/√d_k, and a softmax saturating."""

# %% active="py"
# As a plain script, the page's numbers are a small example's (see __init__.py).
from dashboard.exports.cells.example import SCALING

# isort: split

# %% [markdown]
# # Why divide by √d_k? Rebuilt in plain PyTorch
#
# This notebook was written by lesson 4 of the *Self-attention, step by step* dashboard. It
# draws the same random q and k, measures Var(q·k) with and without the 1/√d_k scale, then feeds
# one row of scores to a softmax at three scales and measures how peaked it is and how much
# gradient flows back, checking every number against the page (embedded below). Only `torch` is
# needed.

# %%
import math

import torch

# %% tags=["parameters"]
seed, n = SCALING["seed"], SCALING["n"]  # the page's seed; random pairs per d_k
variances_by_dashboard = SCALING["variances_by_dashboard"]  # (d_k, Var(q·k), Var(q·k / √d_k))
T, d_k, tau = SCALING["T"], SCALING["d_k"], SCALING["tau"]  # one query against T keys
saturation_by_dashboard = SCALING["saturation_by_dashboard"]  # (scale, max weight, entropy, ‖J‖)

# %% [markdown]
# ## Dot products grow with d_k
#
# q·k sums d_k products of variance 1: Var(q·k) = d_k, and Var(q·k / √d_k) = 1.

# %%
for d, shown_raw, shown_scaled in variances_by_dashboard:
    generator = torch.Generator().manual_seed(seed + d)
    q = torch.randn(n, d, generator=generator)  # (n, d_k)
    k = torch.randn(n, d, generator=generator)  # (n, d_k)
    raw = (q * k).sum(dim=-1)  # (n,) one dot product per pair
    scaled = raw / math.sqrt(d)
    print(f"d_k = {d:4d}: Var(q·k) = {raw.var():9.4f}   Var(q·k / √d_k) = {scaled.var():.4f}")
    assert math.isclose(raw.var().item(), shown_raw, rel_tol=1e-5)
    assert math.isclose(scaled.var().item(), shown_scaled, rel_tol=1e-5)

# %% [markdown]
# ## Large scores saturate the softmax
#
# The softmax's Jacobian is diag(p) − p pᵀ: checked against autograd's, then its size measured at
# each scale.

# %%
generator = torch.Generator().manual_seed(seed)
q = torch.randn(d_k, generator=generator)  # (d_k,)
keys = torch.randn(T, d_k, generator=generator)  # (T, d_k)
scores = keys @ q  # (T,) raw scores, variance d_k
scales = [1.0, 1 / math.sqrt(d_k), 1 / (tau * math.sqrt(d_k))]  # none, standard, τ
for scale, shown in zip(scales, saturation_by_dashboard, strict=True):
    assert math.isclose(scale, shown[0], rel_tol=1e-12)
    shown_max, shown_entropy, shown_gradient = shown[1:]
    p = torch.softmax(scores.double() * scale, dim=-1)  # (T,)
    J = torch.diag(p) - torch.outer(p, p)  # (T, T) d p / d (scaled scores)
    J_autograd = torch.autograd.functional.jacobian(
        lambda z: torch.softmax(z, dim=-1), scores.double() * scale
    )
    torch.testing.assert_close(J, J_autograd)
    entropy = -(p * torch.log(p.clamp_min(1e-300))).sum()
    print(
        f"scale {scale:.4f}: max weight {p.max():.4f}, entropy {entropy:.4f} nats, "
        f"gradient size {J.norm():.4f}"
    )
    for mine, page in ((p.max(), shown_max), (entropy, shown_entropy), (J.norm(), shown_gradient)):
        assert math.isclose(mine.item(), page, rel_tol=1e-5, abs_tol=1e-9)
print("Every variance and every softmax equals the page.")
