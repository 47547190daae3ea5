"""Issue 51, item 3: where the app's data lives. A SQLite store on a host whose disk is not kept
(Streamlit Community Cloud: the repository cloned under /mount/src, the host named "streamlit")
is said to be lost when the app sleeps; a database server, or a disk that is kept (a machine of
yours, deploy/serve), is not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.classroom.database import PROJECT, disk_is_kept, store_outlives_the_app

CLOUD = Path("/mount/src/attention-dashboard")  # where Community Cloud clones the repository


@pytest.mark.parametrize(
    ("environ", "project", "kept"),
    [
        ({}, PROJECT, True),  # streamlit run here, deploy/serve: the disk stays
        ({"HOSTNAME": "streamlit"}, PROJECT, False),  # Community Cloud's host name
        ({}, CLOUD, False),  # Community Cloud's clone
        ({"HOSTNAME": "laptop"}, Path("/home/me/mount/src/app"), True),  # not the root's
        ({"ATTENTION_DISK_KEPT": "1"}, CLOUD, True),  # a host that says otherwise
        ({"ATTENTION_DISK_KEPT": "0"}, PROJECT, False),
        ({"ATTENTION_DISK_KEPT": "maybe"}, CLOUD, False),  # not 0 or 1: detected as usual
    ],
)
def test_hosting_the_disk_is_kept_except_where_the_host_makes_it_afresh(environ, project, kept):
    assert disk_is_kept(environ, project) is kept


@pytest.mark.parametrize(
    ("url", "environ", "lasts"),
    [
        ("sqlite:////app/data/classroom.db", {}, True),
        ("sqlite:////app/data/classroom.db", {"HOSTNAME": "streamlit"}, False),
        ("postgresql+psycopg://u:p@db.example/attention", {"HOSTNAME": "streamlit"}, True),
    ],
)
def test_hosting_a_database_server_outlives_the_app_wherever_it_runs(url, environ, lasts):
    assert store_outlives_the_app(url, environ) is lasts


def test_hosting_a_process_started_as_community_cloud_starts_it_finds_its_disk_not_kept():
    """A fresh interpreter with Community Cloud's host name, as the app's server starts there."""
    check = "from dashboard.classroom.database import disk_is_kept as k; print(k())"
    for hostname, said in (("streamlit", "False"), ("my-laptop", "True")):
        environ = {**os.environ, "HOSTNAME": hostname}
        environ.pop("ATTENTION_DISK_KEPT", None)
        out = subprocess.run(
            [sys.executable, "-c", check], cwd=PROJECT, env=environ, capture_output=True,
            text=True, check=True,
        )  # fmt: skip
        assert out.stdout.strip() == said
