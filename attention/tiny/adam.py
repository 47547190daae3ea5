"""Adam (Kingma and Ba, 2015), written out: the update `torch.optim.Adam` makes on the CPU (its
single-tensor path, the one PyTorch takes for CPU tensors), operation for operation, so a run
trained with it equals one trained with PyTorch's, bit for bit (tests/attention/test_tiny.py).

Why not `torch.optim.Adam` itself: making one imports torch._dynamo, PyTorch's compiler (its
methods are wrapped to stay out of `torch.compile`, which nothing here uses, and the wrapper
imports the compiler when first called): 1.6 s of one core and 72 MiB a server then holds for
good, paid by the first *Train again* of lesson 6 while a class waits.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor


class Adam:
    """Adam with PyTorch's defaults: betas (0.9, 0.999), eps 1e-8, no weight decay. Per parameter
    θ with gradient g, at step t:

        m ← β₁ m + (1 − β₁) g          the gradient's running mean
        v ← β₂ v + (1 − β₂) g²         its running mean square
        θ ← θ − lr · m / (1 − β₁ᵗ) / (√v / √(1 − β₂ᵗ) + ε)

    m and v start at zero, which the two corrections (1 − βᵗ) make up for in the first steps."""

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError("Adam needs at least one parameter")
        if not lr > 0:
            raise ValueError(f"lr must be positive, got {lr!r}")
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        # per parameter: its step count t (a float32 tensor, as PyTorch keeps it), m and v
        self.state: dict[int, tuple[Tensor, Tensor, Tensor]] = {}

    def zero_grad(self) -> None:
        """Forget the gradients (`zero_grad(set_to_none=True)`)."""
        for param in self.params:
            param.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        for i, param in enumerate(self.params):
            grad = param.grad
            if grad is None:
                continue
            if i not in self.state:
                zeros = torch.zeros_like(param, memory_format=torch.preserve_format)
                self.state[i] = (torch.tensor(0.0), zeros, zeros.clone())
            t, m, v = self.state[i]
            t += 1
            m.lerp_(grad, 1 - self.beta1)
            v.mul_(self.beta2).addcmul_(grad, grad, value=1 - self.beta2)
            step = t.item()
            step_size = self.lr / (1 - self.beta1**step)
            denom = (v.sqrt() / (1 - self.beta2**step) ** 0.5).add_(self.eps)
            param.addcdiv_(m, denom, value=-step_size)
