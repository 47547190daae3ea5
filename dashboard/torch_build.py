"""The home page's word for the teacher when the server runs PyTorch's CUDA build with no GPU.

Community Cloud installs the CPU build through uv (pyproject.toml); where it fell back to pip, or
a server was set up by hand, the home page says so instead of leaving the teacher to find out
when the app is stopped for its memory.
"""

from __future__ import annotations

from attention.torch_build import TorchBuild, torch_build


def cuda_build_note(build: TorchBuild | None = None) -> str | None:
    """The note when torch is a CUDA build on a machine with no GPU (this process's by default)."""
    build = torch_build() if build is None else build
    if not build.cuda_without_gpu:
        return None
    return (
        f"This server runs PyTorch's CUDA build (torch {build.version}, CUDA {build.cuda}) on a "
        "machine without a GPU: the numbers are the same, but each process holds about 270 MiB "
        "more, which a class on Streamlit Community Cloud may not have. Install the CPU build: "
        "see docs/community_cloud.md in the repository."
    )
