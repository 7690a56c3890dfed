"""Where a process sits in the world: flowmesh run's environment, TF_CONFIG, or alone."""

from __future__ import annotations

import json

import pytest

from flowmesh.collective.bootstrap import resolve
from flowmesh.collective.world import WorldInfo, split_address

RUN_VARS = ("FLOWMESH_RANK", "FLOWMESH_SIZE", "FLOWMESH_LOCAL_RANK", "FLOWMESH_LOCAL_SIZE",
            "FLOWMESH_RENDEZVOUS", "TF_CONFIG")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in RUN_VARS:
        monkeypatch.delenv(name, raising=False)


def test_alone():
    assert resolve() == WorldInfo(0, 1, 0, 1)


def test_flowmesh_run_environment(monkeypatch):
    monkeypatch.setenv("FLOWMESH_RANK", "2")
    monkeypatch.setenv("FLOWMESH_SIZE", "4")
    monkeypatch.setenv("FLOWMESH_RENDEZVOUS", "127.0.0.1:29500")
    info = resolve()
    assert (info.rank, info.size, info.local_rank, info.local_size) == (2, 4, 2, 4)
    assert (info.host, info.port, info.host_store, info.source) == ("127.0.0.1", 29500, False, "flowmesh run")


def test_inconsistent_launcher_settings(monkeypatch):
    monkeypatch.setenv("FLOWMESH_RANK", "3")
    monkeypatch.setenv("FLOWMESH_SIZE", "2")
    with pytest.raises(ValueError, match="inconsistent"):
        resolve()
    monkeypatch.setenv("FLOWMESH_RANK", "1")
    with pytest.raises(ValueError, match="FLOWMESH_RENDEZVOUS"):
        resolve()


def test_tf_config_ranks(monkeypatch):
    cluster = {"chief": ["a:1000"], "worker": ["b:2000", "b:2001"], "ps": ["c:3000"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    info = resolve()
    assert (info.rank, info.size, info.local_rank, info.local_size) == (2, 3, 1, 2)
    assert (info.host, info.port, info.host_store, info.source) == ("a", 1000, False, "TF_CONFIG")
    monkeypatch.setenv("FLOWMESH_RENDEZVOUS", "d:4000")
    assert (resolve().host, resolve().port) == ("d", 4000)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "ps", "index": 0}}))
    assert resolve().size == 1  # parameter servers do not take part in all-reduce


def test_addresses():
    assert split_address("[::1]:80", "x") == ("::1", 80)
    with pytest.raises(ValueError, match="host:port"):
        split_address("nohost", "FLOWMESH_RENDEZVOUS")
