"""The per-job secret the launchers create."""

from __future__ import annotations

import os
import stat

import pytest

from flowmesh import config
from flowmesh.launch.secret import JobSecret


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


def test_the_rendezvous_store_listens_on_the_address_given_only():
    from flowmesh.collective.backends.torch_dist import connect_store

    store = connect_store("127.0.0.1", 0, True, None, 10.0)
    with open("/proc/net/tcp") as f:
        rows = [line.split() for line in f.readlines()[1:]]
    listening = [r[1] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == store.port]
    assert listening == [f"0100007F:{store.port:04X}"]  # 127.0.0.1, not 0.0.0.0 (*:port)
    client = connect_store("127.0.0.1", store.port, False, None, 10.0)
    client.set("k", "v")
    assert store.get("k") == b"v"
