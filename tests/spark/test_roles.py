"""TensorFlowOnSpark's assignment of executors to TensorFlow tasks."""

from __future__ import annotations

import pytest

from flowmesh.spark.experiments import combinations
from flowmesh.spark.roles import cluster_template, role_of, training_executors


def test_ps_first_then_chief_evaluator_and_workers():
    template = cluster_template(6, 2, master_node="chief", eval_node=True)
    assert template == {"ps": [0, 1], "chief": [2], "evaluator": [3], "worker": [4, 5]}
    assert role_of(template, 5).job_name == "worker" and role_of(template, 5).task_index == 1
    assert training_executors(template) == [2, 4, 5]


def test_too_few_executors_say_how_many_are_needed():
    with pytest.raises(ValueError, match="num_executors >= 3"):
        cluster_template(2, 2)


def test_combinations_vary_the_last_key_fastest():
    assert combinations({"a": [1, 2], "b": ["x", "y"]}) == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 2, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(TypeError, match="must be a list"):
        combinations({"a": 3})
