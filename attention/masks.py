"""Masks: which query may attend to which key, and the three conventions people write them in.

This package uses PyTorch's `scaled_dot_product_attention` convention: a bool tensor where
True = may attend ("allowed"). Two other conventions are common:

- `nn.MultiheadAttention`'s `attn_mask` / `key_padding_mask` (and many tutorials, such as the
  classic worked example's `mask = tril(ones) == 0`): bool, True = blocked. See `as_blocked`.
- Additive float masks (the original Transformer code, Hugging Face): 0 where allowed, -inf
  (or a large negative number) where blocked, added to the scores. See `as_additive`.

The three describe the same mask; mixing them up silently inverts the mask, so every table in
the dashboard says which convention it shows.
"""

from __future__ import annotations

import torch
from torch import Tensor

MaskSpec = None | str | Tensor


def causal_mask(t_query: int, t_key: int | None = None) -> Tensor:
    """Bool (T_q, T_k), True on and below the diagonal: query i sees keys 0..i (top-left aligned,
    as PyTorch's `is_causal`)."""
    t_key = t_query if t_key is None else t_key
    if t_query < 1 or t_key < 1:
        raise ValueError(
            f"a causal mask needs at least one query and one key, got {t_query}x{t_key}"
        )
    return torch.ones(t_query, t_key, dtype=torch.bool).tril()


def padding_mask(lengths: list[int] | Tensor, t: int) -> Tensor:
    """Bool (B, 1, 1, T), True for real keys: sequence b has lengths[b] real tokens, the rest are
    padding that no query may attend to."""
    lengths = torch.as_tensor(lengths)
    if lengths.ndim != 1 or lengths.numel() == 0:
        raise ValueError("lengths must be a non-empty list with one length per sequence")
    if bool((lengths < 0).any()) or bool((lengths > t).any()):
        raise ValueError(f"every length must lie in 0..{t}, got {lengths.tolist()}")
    keys = torch.arange(t)  # (T,)
    real = keys[None, :] < lengths[:, None]  # (B, T)
    return real[:, None, None, :]  # (B, 1, 1, T)


def as_blocked(allowed: Tensor) -> Tensor:
    """The same mask in `nn.MultiheadAttention`'s convention: True = blocked."""
    return ~allowed


def as_additive(allowed: Tensor, fill: float = float("-inf"), dtype=torch.float32) -> Tensor:
    """The same mask as an additive float mask: 0 where allowed, `fill` where blocked."""
    zeros = torch.zeros(allowed.shape, dtype=dtype)
    return zeros.masked_fill(~allowed, fill)


def resolve_mask(mask: MaskSpec, target: tuple[int, ...]) -> Tensor:
    """Turn a mask spec (None, "causal", or a bool tensor, True = allowed) into a bool tensor that
    broadcasts to `target` = (..., T_q, T_k)."""
    t_query, t_key = target[-2], target[-1]
    if mask is None:
        return torch.ones(t_query, t_key, dtype=torch.bool)
    if isinstance(mask, str):
        if mask != "causal":
            raise ValueError(f'mask must be None, "causal" or a bool tensor, not the word {mask!r}')
        return causal_mask(t_query, t_key)
    if not isinstance(mask, Tensor):
        raise ValueError(f'mask must be None, "causal" or a bool tensor, got {type(mask).__name__}')
    if mask.dtype != torch.bool:
        raise ValueError(
            f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}; "
            "for an additive float mask use mask == 0, for a True = blocked mask use ~mask"
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, target)
    except RuntimeError:
        broadcast = None
    if broadcast != torch.Size(target):
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to (..., T_q, T_k) = {target}"
        )
    return mask


def build_mask(t: int, *, causal: bool, n_padding: int = 0, empty_last_row: bool = False) -> Tensor:
    """Bool (T, T), True = may attend: the causal mask (or none) AND the last n_padding tokens
    as padding keys; empty_last_row also blocks every key of the last query, the case where
    -inf and -1e9 fills part ways."""
    if not 0 <= n_padding <= t:
        raise ValueError(f"the number of padding tokens must lie in 0..{t}, got {n_padding}")
    allowed = causal_mask(t) if causal else torch.ones(t, t, dtype=torch.bool)  # (T, T)
    allowed = allowed & padding_mask([t - n_padding], t)[0, 0]  # (T, T)
    if empty_last_row:
        allowed[-1] = False
    return allowed


def sliding_window_mask(t: int, window: int) -> Tensor:
    """Bool (T, T), True = may attend: query i sees keys i - window + 1 .. i (causal, at most
    `window` keys; Mistral's and Longformer's local attention)."""
    for name, value in (("T", t), ("window", window)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    i = torch.arange(t)[:, None]  # (T, 1) query positions
    j = torch.arange(t)[None, :]  # (1, T) key positions
    return (j <= i) & (j > i - window)
