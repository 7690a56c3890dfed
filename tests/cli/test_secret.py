"""The per-job secret the launchers create."""

from __future__ import annotations

import os
import stat

import pytest

from flowmesh import config
from flowmesh.cli.secret import JobSecret


def test_a_job_secret_is_a_private_file_removed_with_the_job():
    secret = JobSecret.create({})
    path = secret.path
    assert path is not None and secret.env == {"FLOWMESH_CLUSTER_SECRET_FILE": path}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    value = config.cluster_secret(secret.env)
    assert value is not None and len(value) == 64
    assert JobSecret.create({}).path != path  # one per job
    secret.remove()
    assert not os.path.exists(path)


def test_a_secret_the_user_set_is_kept():
    assert JobSecret.create({"FLOWMESH_CLUSTER_SECRET": "s" * 32}).env == {}


def test_a_secret_file_others_can_read_is_refused(tmp_path):
    path = tmp_path / "secret"
    path.write_text("s" * 32)
    os.chmod(path, 0o644)
    with pytest.raises(ValueError, match="chmod 600"):
        config.cluster_secret({"FLOWMESH_CLUSTER_SECRET_FILE": str(path)})
