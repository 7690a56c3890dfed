"""Shared fixtures: every test starts with a fresh default graph."""

from __future__ import annotations

import pytest

# flowmesh sets OpenMP's wait policy (PASSIVE) itself when imported before torch
# (flowmesh/runtime/threading_policy.py); imported first here, it holds for every test.
import flowmesh as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()
