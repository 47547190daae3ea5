"""Which PyTorch build runs this process: the CPU build, or a CUDA build with or without a GPU.

PyPI's `torch` on Linux is the CUDA build: on a machine without a GPU it computes the same numbers
on the CPU, with about 270 MiB more resident memory after import (492 MiB against 219 MiB,
measured 2026-11-26) and about 3 GB more to install (docs/community_cloud.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TorchBuild:
    """torch.__version__, torch.version.cuda (None for the CPU build), and whether a GPU is seen."""

    version: str
    cuda: str | None
    gpu: bool

    @property
    def cuda_without_gpu(self) -> bool:
        """A CUDA build on a machine with no GPU: the memory paid for nothing."""
        return self.cuda is not None and not self.gpu


def torch_build() -> TorchBuild:
    """The build of the torch this process imported."""
    return TorchBuild(torch.__version__, torch.version.cuda, torch.cuda.is_available())
