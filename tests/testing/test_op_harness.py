"""The oracle harness catches wrong values, wrong gradients and TensorFlow mismatches."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import flowmesh
from flowmesh.core.registry import register_op
from flowmesh.kernels.contract.registry import simple_kernel
from flowmesh.ops._builders import make_tensor, same_shape
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, assert_close, graph_op_types, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

GOOD = OpSpec("tanh", lambda tf, x: tf.tanh(x), (Input((2, 3)),), reference=np.tanh,
              second_order=True)


# An op whose registered gradient is 1% off: the finite-difference check must notice.
register_op("HarnessTestWrongTanh", same_shape,
            grad=lambda op, g: [g * 1.01 * (1.0 - op.outputs[0] * op.outputs[0])])
simple_kernel("HarnessTestWrongTanh", torch.tanh)


def _wrong_grad_tanh(tf, x):
    return make_tensor("HarnessTestWrongTanh", [x])


def test_good_spec_passes_every_check():
    OpHarness(GOOD).check()


def test_wrong_reference_is_reported():
    spec = OpSpec("tanh/wrong_ref", lambda tf, x: tf.tanh(x), (Input((2, 3)),),
                  reference=lambda x: np.tanh(x) + 1e-3)
    with pytest.raises(AssertionError, match="vs reference"):
        OpHarness(spec).check()


def test_wrong_gradient_is_caught_by_finite_differences():
    spec = OpSpec("tanh/wrong_grad", _wrong_grad_tanh, (Input((2, 3)),), oracle=False)
    with pytest.raises(AssertionError, match="finite differences"):
        OpHarness(spec).check()


def test_unknown_input_dims_are_exercised():
    spec = OpSpec("reduce_mean", lambda tf, x: tf.reduce_mean(x, axis=0), (Input((3, 2)),))
    harness = OpHarness(spec)
    harness.check_dynamic_shapes()
    harness.close()


def test_assert_close_reports_the_worst_element():
    with pytest.raises(AssertionError, match=r"worst at \(1,\)"):
        assert_close(np.array([1.0, 2.5]), np.array([1.0, 2.0]), (1e-6, 1e-6), "x")
    with pytest.raises(AssertionError, match="shape"):
        assert_close(np.zeros(2), np.zeros(3), (1e-6, 1e-6), "x")
    with pytest.raises(AssertionError, match="differ"):
        assert_close(np.array([1, 2]), np.array([1, 3]), (1.0, 1.0), "ints are exact")


def test_duplicate_spec_names_are_rejected():
    with pytest.raises(ValueError, match="Duplicate"):
        spec_ids([GOOD, GOOD])


def test_graph_op_types_include_gradient_ops():
    types = graph_op_types(GOOD)
    assert {"Tanh", "Placeholder"} <= types
    assert "Mul" in types  # from the gradient and the second-order graph


@pytest.mark.oracle
def test_tensorflow_agrees_on_a_good_spec():
    OpHarness(GOOD).check_tensorflow(require_tensorflow())


@pytest.mark.oracle
def test_tensorflow_dtype_mismatch_is_reported():
    tf1 = require_tensorflow()
    spec = OpSpec("cast/mismatch",
                  lambda tf, x: tf.cast(x, tf.float64) if tf is flowmesh else tf.identity(x),
                  (Input((2,)),), grad=False)
    with pytest.raises(AssertionError, match="dtype float64 != TensorFlow's float32"):
        OpHarness(spec).check_tensorflow(tf1)
