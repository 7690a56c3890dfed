"""OpenMP's wait policy: set by ``import flowmesh`` before torch loads, never over the user's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flowmesh.runtime.threading_policy import configure_openmp, openmp_decision


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "FLOWMESH_OMP_WAIT_POLICY")}
    return subprocess.run([sys.executable, "-W", "always", "-c", code], env={**clean, **env},
                          capture_output=True, text=True, timeout=120)


def test_import_sets_passive_before_torch_loads_it() -> None:
    run = _python("import os, flowmesh, torch\n"
                  "print(os.environ['OMP_WAIT_POLICY'])\n"
                  "print(flowmesh.runtime.threading_policy.openmp_decision())",
                  FLOWMESH_OMP_WAIT_POLICY="PASSIVE")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["PASSIVE", "OMP_WAIT_POLICY=PASSIVE set before torch loads"]
    assert "RuntimeWarning" not in run.stderr


def test_torch_imported_first_warns_how_to_fix_it() -> None:
    run = _python("import os, torch, flowmesh\nprint(os.environ.get('OMP_WAIT_POLICY'))",
                  FLOWMESH_OMP_WAIT_POLICY="PASSIVE")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "None"
    assert "torch was imported before flowmesh" in run.stderr
    assert "Import flowmesh before torch, or set OMP_WAIT_POLICY=PASSIVE" in run.stderr


def test_the_users_own_settings_win() -> None:
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert "left as the user set it (OMP_WAIT_POLICY)" in configure_openmp(env)
    assert env == {"OMP_WAIT_POLICY": "ACTIVE"}
    env = {"GOMP_SPINCOUNT": "10000"}
    configure_openmp(env)
    assert "OMP_WAIT_POLICY" not in env
    env = {"FLOWMESH_OMP_WAIT_POLICY": "none"}
    assert "left to OpenMP" in configure_openmp(env) and "OMP_WAIT_POLICY" not in env
    with pytest.raises(ValueError, match="use AUTO, PASSIVE, ACTIVE, or NONE"):
        configure_openmp({"FLOWMESH_OMP_WAIT_POLICY": "sometimes"})
    configure_openmp({"OMP_WAIT_POLICY": "PASSIVE"})
    assert openmp_decision().startswith("OpenMP wait policy left as the user set it")


def test_the_suite_runs_with_a_wait_policy() -> None:
    """tests/conftest.py sets nothing: the policy comes from ``import flowmesh`` (or from
    the user's own OMP_WAIT_POLICY / GOMP_SPINCOUNT)."""
    assert os.environ.get("OMP_WAIT_POLICY") or os.environ.get("GOMP_SPINCOUNT")


def test_auto_sleeps_only_on_a_busy_machine() -> None:
    env: dict[str, str] = {}
    assert "not busy" in configure_openmp(env, busy=lambda: False) and env == {}
    # busy: AUTO wants PASSIVE (torch is already loaded in this test process, so it says
    # it is too late; a fresh process gets it set, as the PASSIVE test above shows)
    with pytest.warns(RuntimeWarning, match="could not set OMP_WAIT_POLICY=PASSIVE"):
        assert "NOT set" in configure_openmp({}, busy=lambda: True)
    env = {"OMP_WAIT_POLICY": "ACTIVE"}  # the user's choice still wins over AUTO
    assert "left as the user set it" in configure_openmp(env, busy=lambda: True)
