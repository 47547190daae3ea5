"""The home page's note on the PyTorch build: only for a CUDA build on a machine with no GPU."""

import torch

from attention.torch_build import TorchBuild, torch_build
from dashboard.torch_build import cuda_build_note


def test_cuda_build_note_names_a_cuda_build_without_a_gpu():
    note = cuda_build_note(TorchBuild("2.13.0", "13.0", gpu=False))
    assert note is not None and "torch 2.13.0, CUDA 13.0" in note


def test_cuda_build_note_is_silent_for_the_cpu_build_and_on_a_gpu():
    assert cuda_build_note(TorchBuild("2.13.0+cpu", None, gpu=False)) is None
    assert cuda_build_note(TorchBuild("2.13.0", "13.0", gpu=True)) is None


def test_torch_build_reads_this_torch():
    build = torch_build()
    assert (build.version, build.cuda, build.gpu) == (
        torch.__version__,
        torch.version.cuda,
        torch.cuda.is_available(),
    )
    assert (cuda_build_note() is None) == (not build.cuda_without_gpu)
