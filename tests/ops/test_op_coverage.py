"""Every op the math/array families register is exercised by the oracle tables: each
differentiable op appears in the forward graph of a spec whose gradients are checked, and
each other op in some spec's graph."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flowmesh.core import registry
from flowmesh.testing.op_harness import graph_op_types
from tests.ops import (
    test_array_ops,
    test_linalg_ops,
    test_manip_ops,
    test_math_ops,
    test_reduction_ops,
)

OPS_DIR = Path(registry.__file__).resolve().parents[1] / "ops"
MODULES = ("array_ops", "cast_ops", "clip_ops", "einsum_ops", "gather_ops", "linalg_ops", "manip_ops",
           "math_ops", "nd_index_ops", "range_ops", "reduction_ops", "segment_ops", "select_ops", "strided_slice_ops")
_REGISTRATION = re.compile(
    r"(?:register_op|_unary|_binary|_unsorted|_sorted|_tensor_scatter)\(\s*\n?\s*\"(\w+)\"")
SPECS = (test_math_ops.SPECS + test_reduction_ops.SPECS + test_array_ops.SPECS + test_manip_ops.SPECS
         + test_linalg_ops.SPECS)
# Ops used only inside gradients (checked through the gradient and second-order checks of the
# ops that emit them) or helpers with no public wrapper of their own.
GRADIENT_ONLY = {"StridedSliceGrad", "MirrorPadGrad", "BroadcastGradientArgs"}


def _owned_op_types() -> set[str]:
    names: set[str] = set()
    for module in MODULES:
        names.update(_REGISTRATION.findall((OPS_DIR / f"{module}.py").read_text()))
    return names & set(registry.registered_ops())


@pytest.fixture(scope="module")
def coverage():
    forward_checked: set[str] = set()
    anywhere: set[str] = set()
    for spec in SPECS:
        forward = graph_op_types(spec, gradients=False)
        if spec.diff_indices:
            forward_checked |= forward
        anywhere |= forward | graph_op_types(spec)
    return forward_checked, anywhere


def test_the_registration_scan_finds_the_families():
    owned = _owned_op_types()
    assert {"MatMul", "AddV2", "GatherV2", "StridedSlice", "Einsum", "MirrorPad", "ScatterNd",
            "UnsortedSegmentMax", "LinSpace", "ClipByValue", "SelectV2", "Cast"} <= owned


def test_every_differentiable_op_has_its_gradient_checked(coverage):
    forward_checked, _ = coverage
    differentiable = {name for name in _owned_op_types()
                      if registry.gradient_decision(name) is not registry.NOT_DIFFERENTIABLE}
    missing = sorted(differentiable - forward_checked - GRADIENT_ONLY)
    assert not missing, f"differentiable ops without a gradient-checked OpSpec: {missing}"


def test_every_op_appears_in_some_spec(coverage):
    _, anywhere = coverage
    missing = sorted(_owned_op_types() - anywhere)
    assert not missing, f"ops that no OpSpec builds: {missing}"
