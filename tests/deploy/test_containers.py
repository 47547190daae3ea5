"""deploy/Dockerfile and deploy/k8s.yaml, checked statically: no Docker daemon or Kubernetes
cluster runs here, so these parse the files and check what a wrong edit would break (the probes,
the ports, the non-root user, the cookie affinity and websocket timeouts of the ingress)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy" / "Dockerfile"
K8S = REPO / "deploy" / "k8s.yaml"
PORT = 8501
HEALTH = "/_stcore/health"


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    joined, current = [], ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        joined.append(current + line)
        current = ""
    result = []
    for line in joined:
        word, _, rest = line.partition(" ")
        result.append((word.upper(), rest.strip()))
    return result


def args_of(rest: str) -> list[str]:
    """An instruction's arguments in exec (JSON) or shell form, as a list of words."""
    return json.loads(rest) if rest.startswith("[") else shlex.split(rest)


@pytest.fixture(scope="module")
def docker() -> list[tuple[str, str]]:
    return instructions(DOCKERFILE)


@pytest.fixture(scope="module")
def k8s() -> dict[str, dict]:
    docs = [doc for doc in yaml.safe_load_all(K8S.read_text()) if doc]
    kinds = [doc["kind"] for doc in docs]
    assert len(kinds) == len(set(kinds)), kinds
    return {doc["kind"]: doc for doc in docs}


def _one(docker: list[tuple[str, str]], word: str) -> str:
    found = [rest for w, rest in docker if w == word]
    assert len(found) == 1, f"{word}: {found}"
    return found[0]


def _uid(docker: list[tuple[str, str]]) -> int:
    useradd = next(rest for w, rest in docker if w == "RUN" and "useradd" in rest)
    return int(re.search(r"--uid (\d+)", useradd).group(1))


def test_dockerfile_base_is_python_311_slim(docker) -> None:
    assert docker[0] == ("FROM", "python:3.11-slim")


def test_dockerfile_installs_cpu_torch_at_the_pinned_version(docker) -> None:
    runs = " ".join(rest for w, rest in docker if w == "RUN")
    assert "--index-url https://download.pytorch.org/whl/cpu" in runs
    assert "grep -E '^torch==' requirements.txt" in runs  # the pin, not a second copy of it
    assert re.search(r"^torch==\d", (REPO / "requirements.txt").read_text(), re.M)
    assert runs.index("whl/cpu") < runs.index("pip install -r requirements.txt")


def test_dockerfile_runs_as_a_non_root_user(docker) -> None:
    users = [rest for w, rest in docker if w == "USER"]
    assert users and users[-1] not in {"root", "0"}
    assert users[-1] == str(_uid(docker))
    words = [w for w, _ in docker]
    assert words.index("USER") > words.index("RUN")  # installs as root, runs as the user


def test_dockerfile_health_check_asks_streamlits_health_endpoint(docker) -> None:
    check = _one(docker, "HEALTHCHECK")
    assert "--start-period=" in check
    command = args_of(check.split("CMD", 1)[1].strip())
    assert command[:2] == ["python", "-c"]
    assert f"http://127.0.0.1:{PORT}{HEALTH}" in command[2]
    compile(command[2], "HEALTHCHECK", "exec")  # the one-liner is valid Python


def test_dockerfile_serves_the_app_on_8501_on_every_interface(docker) -> None:
    assert _one(docker, "EXPOSE") == str(PORT)
    command = args_of(_one(docker, "CMD"))
    assert command[:3] == ["streamlit", "run", "streamlit_app.py"]
    assert "--server.address=0.0.0.0" in command
    assert f"--server.port={PORT}" in command
    assert "--server.headless=true" in command


def test_dockerfile_copies_only_what_exists_and_ignores_the_heavy_rest(docker) -> None:
    copies = [args_of(rest) for w, rest in docker if w == "COPY"]
    for words in copies:
        sources = [w for w in words[:-1] if not w.startswith("--")]
        assert all((REPO / s).exists() for s in sources), words
    ignored = (REPO / "deploy" / "Dockerfile.dockerignore").read_text().split()
    assert {".git", ".ci-venv", "artifacts"} <= set(ignored)


def test_k8s_deployment_has_replicas_and_matching_labels(k8s) -> None:
    deployment, service = k8s["Deployment"], k8s["Service"]
    spec = deployment["spec"]
    assert spec["replicas"] >= 2
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert k8s["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= labels.items()


def _container(k8s) -> dict:
    containers = k8s["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


@pytest.mark.parametrize("probe", ["readinessProbe", "livenessProbe", "startupProbe"])
def test_k8s_probes_ask_the_health_endpoint_on_8501(k8s, probe) -> None:
    get = _container(k8s)[probe]["httpGet"]
    assert get["path"] == HEALTH
    assert get["port"] == PORT


def test_k8s_liveness_is_more_patient_than_readiness(k8s) -> None:
    container = _container(k8s)
    ready, live = container["readinessProbe"], container["livenessProbe"]
    patience = live["periodSeconds"] * live["failureThreshold"]
    assert patience > ready["periodSeconds"] * ready["failureThreshold"]
    assert patience >= 30  # a busy worker (a class's burst) is not killed for one slow answer


def test_k8s_container_port_service_and_non_root(k8s, docker) -> None:
    container = _container(k8s)
    assert {"name": "http", "containerPort": PORT, "protocol": "TCP"} in container["ports"]
    pod = k8s["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == _uid(docker)
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    ports = k8s["Service"]["spec"]["ports"]
    assert [p["targetPort"] for p in ports] == [PORT]


def test_k8s_ingress_is_sticky_by_cookie_with_long_websocket_timeouts(k8s) -> None:
    ingress = k8s["Ingress"]
    notes = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert notes[prefix + "affinity"] == "cookie"
    assert notes[prefix + "session-cookie-name"]
    assert notes[prefix + "affinity-mode"] == "persistent"
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[prefix + timeout]) >= 3600, timeout
    assert prefix + "upstream-hash-by" not in notes  # never by client IP (a class shares one)
    for annotation, value in notes.items():
        assert isinstance(value, str), f"{annotation}: annotations must be strings"


def test_k8s_ingress_routes_everything_to_the_service(k8s) -> None:
    service = k8s["Service"]
    (rule,) = k8s["Ingress"]["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert (path["path"], path["pathType"]) == ("/", "Prefix")
    backend = path["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}


def test_dockerfile_gives_the_class_store_a_writable_default(docker) -> None:
    """ATTENTION_CLASS_DB is set (overridable with `docker run -e`), to a SQLite file in a
    folder the non-root user owns; a local data/ folder stays out of the image."""
    env = " ".join(rest for w, rest in docker if w == "ENV")
    url = re.search(r"ATTENTION_CLASS_DB=(\S+)", env).group(1)
    assert url.startswith("sqlite:////")
    folder = str(Path(url.removeprefix("sqlite:///")).parent)
    assert any(
        w == "RUN" and f"mkdir -p {folder}" in rest and f"chown app:app {folder}" in rest
        for w, rest in docker
    )
    assert "data" in (REPO / "deploy" / "Dockerfile.dockerignore").read_text().split()


def test_k8s_replicas_share_one_class_database_from_a_secret(k8s) -> None:
    """Every replica reads ATTENTION_CLASS_DB from the same Secret (a PostgreSQL URL): a SQLite
    file per pod would split a class between pods."""
    env = {item["name"]: item for item in _container(k8s).get("env", [])}
    source = env["ATTENTION_CLASS_DB"]["valueFrom"]["secretKeyRef"]
    assert source["name"] and source["key"]
    assert source.get("optional", False) is False
    assert "value" not in env["ATTENTION_CLASS_DB"]  # no password typed into the manifest
    comments = K8S.read_text()
    assert f"kubectl create secret generic {source['name']}" in comments
    assert f"--from-literal={source['key']}='postgresql+psycopg://" in comments
