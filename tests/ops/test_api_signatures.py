"""Public math/array functions take TensorFlow's argument names in TensorFlow's order
(compared with ``tensorflow.compat.v1`` when it is installed)."""

from __future__ import annotations

import importlib
import inspect

import pytest

import flowmesh

MODULES = ("array_ops", "cast_ops", "clip_ops", "einsum_ops", "gather_ops", "linalg_ops", "manip_ops",
           "math_ops", "nd_index_ops", "range_ops", "reduction_ops", "segment_ops", "select_ops", "sort_ops", "string_ops", "strided_slice_ops")
# Arguments TensorFlow 2.x added to the 1.x functions (not part of the TF1 surface we mirror).
TF2_ADDITIONS = {"layout", "bad_indices_policy", "output_type", "grad_a", "grad_b", "k", "num_rows",
                 "num_cols", "padding_value", "align"}


def _owned_functions() -> set[int]:
    owned = set()
    for name in MODULES:
        module = importlib.import_module(f"flowmesh.ops.{name}")
        for value in vars(module).values():
            if callable(value) and getattr(value, "__module__", "").startswith("flowmesh.ops"):
                owned.add(id(value))
    return owned


def _parameters(fn) -> list[str] | None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [p.name for p in signature.parameters.values() if p.kind != p.VAR_KEYWORD]


@pytest.mark.oracle
def test_argument_names_and_order_match_tensorflow():
    from flowmesh.testing.tf_oracle import require_tensorflow

    tf1 = require_tensorflow()
    owned = _owned_functions()
    mismatches, compared = [], 0
    for label, ours, theirs in (("tf", flowmesh, tf1), ("tf.math", flowmesh.math, tf1.math),
                                ("tf.linalg", flowmesh.linalg, tf1.linalg),
                                ("tf.strings", flowmesh.strings, tf1.strings)):
        for name in sorted(dir(ours)):
            fn = getattr(ours, name)
            if id(fn) not in owned or not hasattr(theirs, name):
                continue
            mine, reference = _parameters(fn), _parameters(getattr(theirs, name))
            if mine is None or reference is None:
                continue
            compared += 1
            expected = [p for p in reference if p in mine or p not in TF2_ADDITIONS]
            if mine[:len(expected)] != expected:
                mismatches.append(f"{label}.{name}: flowmesh {mine} vs TensorFlow {reference}")
    assert compared > 150, f"only {compared} functions were compared"
    assert not mismatches, "\n".join(mismatches)
