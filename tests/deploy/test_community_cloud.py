"""The file Streamlit Community Cloud reads, installed as it installs it, against local stand-ins.

Community Cloud reads `requirements.txt` (the first of its dependency files this repository has)
and installs it with uv, falling back to pip. PyPI's `torch` on Linux is the CUDA build; our
`pyproject.toml` gives uv (never pip) PyTorch's CPU page of torch wheels as a find-links page.
This machine reaches neither PyPI's torch nor PyTorch's index, so two loopback servers stand in:
"PyPI", holding the real wheels of everything the README's install gives plus a CUDA-labelled
torch that pulls an NVIDIA package, and "PyTorch's CPU index", holding a `+cpu` torch and, as
the real one does, older copies of common packages (numpy, pillow, requests, typing-extensions).
Only inside the test is the index address in the project's files rewritten to the stand-in.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import http.server
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TORCH_PAGE = "https://download.pytorch.org/whl/cpu/torch/"  # what pyproject.toml names
TORCH = "2.13.0"
CPU_TAG = "cp311-cp311-manylinux_2_28_x86_64"
# Packages PyTorch's index also serves, at versions older than PyPI's: a resolver that took them
# from there (uv's first-index rule with an extra index) would install these instead.
OLD_COPIES = {"numpy": "1.26.3", "pillow": "10.2.0", "requests": "2.28.1",
              "typing-extensions": "4.8.0"}  # fmt: skip

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or sys.version_info[:2] != (3, 11),
    reason="the stand-in wheels are tagged for CPython 3.11 on Linux x86-64, Community Cloud's",
)


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def make_wheel(folder: Path, name: str, version: str, tag: str, requires: list[str]) -> Path:
    """A minimal valid wheel: a module saying which build it is, and its metadata."""
    dist = f"{name.replace('-', '_')}-{version}"
    files = {
        f"{name.replace('-', '_')}/__init__.py": f"__version__ = {version!r}\n",
        f"{dist}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires),
        f"{dist}.dist-info/WHEEL": f"Wheel-Version: 1.0\nGenerator: stand-in\n"
        f"Root-Is-Purelib: false\nTag: {tag}\n",
    }
    record = []
    path = folder / f"{dist}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
            digest = hashlib.sha256(text.encode()).digest()
            b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
            record.append(f"{member},sha256={b64},{len(text)}")
        record.append(f"{dist}.dist-info/RECORD,,")
        archive.writestr(f"{dist}.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def simple_index(wheels: Path, root: Path) -> None:
    """A PEP 503 simple index of the wheels in a folder: root/simple/<name>/ links to files/."""
    (root / "files").mkdir(parents=True)
    projects: dict[str, list[str]] = {}
    for wheel in sorted(wheels.glob("*.whl")):
        shutil.copy(wheel, root / "files" / wheel.name)
        projects.setdefault(normalise(wheel.name.split("-")[0]), []).append(wheel.name)
    for project, names in projects.items():
        page = root / "simple" / project
        page.mkdir(parents=True)
        links = "".join(
            f'<a href="../../files/{n.replace("+", "%2B")}#sha256='
            f'{hashlib.sha256((root / "files" / n).read_bytes()).hexdigest()}">{n}</a>\n'
            for n in names
        )
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """A static HTTP server of root on a free loopback port; yields its base URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment less every pip and uv setting (this machine's local wheel
    folder and constraint file among them), as on a machine that knows only the stand-ins."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def installed(python: Path) -> dict[str, str]:
    """{normalised name: version} of what a virtual environment holds."""
    code = (
        "import importlib.metadata as m\n"
        "for d in m.distributions(): print(d.metadata['Name'], d.version)"
    )
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout
    return {normalise(n): v for n, v in (line.split() for line in out.splitlines())}


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """The two loopback indexes, and a copy of the project's dependency files rewritten to them."""
    tmp = tmp_path_factory.mktemp("community-cloud")
    wheelhouse = tmp / "wheelhouse"
    # The README's install, resolved by this machine's pip as `pip install -r requirements.txt`
    # resolves it: the real wheels of every package at the versions a newcomer gets here.
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:",
         "-r", REPO / "requirements.txt", "-d", wheelhouse],
        check=True, capture_output=True,
    )  # fmt: skip
    real_torch = next(wheelhouse.glob("torch-*.whl"))
    with zipfile.ZipFile(real_torch) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        torch_requires = [
            line.split(": ", 1)[1]
            for line in archive.read(meta).decode().splitlines()
            if line.startswith("Requires-Dist: ")
        ]
    real_torch.unlink()
    # PyPI's torch on Linux: the CUDA build, which pulls NVIDIA's libraries.
    make_wheel(wheelhouse, "torch", TORCH, CPU_TAG, [*torch_requires, "nvidia-standin==13.0"])
    make_wheel(wheelhouse, "nvidia-standin", "13.0", "py3-none-any", [])
    cpu = tmp / "cpu-wheels"
    cpu.mkdir()
    make_wheel(cpu, "torch", f"{TORCH}+cpu", CPU_TAG, torch_requires)
    for name, version in OLD_COPIES.items():
        make_wheel(cpu, name, version, "py3-none-any", [])
    simple_index(wheelhouse, tmp / "pypi")
    simple_index(cpu, tmp / "pytorch")
    with serve(tmp / "pypi") as pypi, serve(tmp / "pytorch") as pytorch:
        project = tmp / "project"
        project.mkdir()
        shutil.copy(REPO / "requirements.txt", project / "requirements.txt")
        pyproject = (REPO / "pyproject.toml").read_text()
        assert TORCH_PAGE in pyproject, "pyproject.toml no longer names PyTorch's CPU torch page"
        local_page = f"{pytorch}/simple/torch/"
        (project / "pyproject.toml").write_text(pyproject.replace(TORCH_PAGE, local_page))
        yield {"tmp": tmp, "project": project, "pypi": f"{pypi}/simple", "pytorch": pytorch}


def readme_versions(names: set[str]) -> dict[str, str]:
    """The versions the README's install gave this test environment."""
    return {n: importlib.metadata.version(n) for n in names}


def test_community_cloud_uv_installs_the_cpu_torch_and_pypi_for_everything_else(stand_ins):
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    tmp, project = stand_ins["tmp"], stand_ins["project"]
    venv = tmp / "uv-venv"
    env = clean_env(
        UV_DEFAULT_INDEX=str(stand_ins["pypi"]),
        UV_CACHE_DIR=str(tmp / "uv-cache"),
        XDG_CONFIG_HOME=str(tmp / "no-user-config"),  # only the project's own settings
        UV_PYTHON_DOWNLOADS="never",
    )
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, venv], check=True, env=env)
    run = subprocess.run(
        [uv, "pip", "install", "--python", venv / "bin" / "python", "-r", "requirements.txt"],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    got = installed(venv / "bin" / "python")
    assert got["torch"] == f"{TORCH}+cpu"
    assert "nvidia-standin" not in got
    others = set(got) - {"torch"}
    for name, version in OLD_COPIES.items():
        if name in got:
            assert got[name] != version, f"uv took {name} from PyTorch's index"
    assert {n: got[n] for n in others} == readme_versions(others)


def test_community_cloud_pip_fallback_installs_every_package_and_pypis_torch(stand_ins):
    """pip reads requirements.txt alone: where Community Cloud falls back to it, the app installs
    with every package as the README's install, but torch is PyPI's (the CUDA build). The app
    says so on its home page (dashboard/frame.py); docs/community_cloud.md says what is proven."""
    tmp, project = stand_ins["tmp"], stand_ins["project"]
    venv = tmp / "pip-venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = clean_env(PIP_INDEX_URL=str(stand_ins["pypi"]), PIP_NO_CACHE_DIR="1")
    run = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "-q", "-r", "requirements.txt"],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    got = installed(venv / "bin" / "python")
    assert got["torch"] == TORCH and "nvidia-standin" in got
    others = set(got) - {"torch", "nvidia-standin", "pip", "setuptools"}
    assert {n: got[n] for n in others} == readme_versions(others)
