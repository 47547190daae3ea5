"""Shared test helpers: tiny deterministic tensors."""

import pytest
import torch


@pytest.fixture
def gen() -> torch.Generator:
    return torch.Generator().manual_seed(1234)
