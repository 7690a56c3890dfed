"""Shared fixtures: every test starts with a fresh default graph."""

from __future__ import annotations

import os

import pytest

# The suite runs many processes on few cores (clusters, ranks, Spark and Ray tasks): their
# OpenMP threads sleep when idle instead of spinning against each other. flowmesh itself
# decides at import (AUTO, flowmesh/runtime/threading_policy.py); the suite does not wait
# for the load average to notice. Set before flowmesh (and torch) load; children inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import flowmesh as tf  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
