"""atrous_conv2d_transpose and with_space_to_batch against TensorFlow (values and gradients)
and float64 finite differences."""

from __future__ import annotations

import pytest

import flowmesh as fm
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow


def _transpose(name, x_shape, f_shape, out_shape, rate, padding):
    return OpSpec(f"atrous_conv2d_transpose/{name}",
                  lambda tf, x, f: tf.nn.atrous_conv2d_transpose(x, f, out_shape, rate, padding),
                  (Input(x_shape), Input(f_shape)))


def _pool_op(tf):
    return lambda x, n, padding: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], padding)


def _conv_op(tf, f):
    return lambda x, n, padding: tf.nn.conv2d(x, f, [1, 1, 1, 1], padding)


SPECS = [
    _transpose("same_rate2", (1, 5, 5, 2), (3, 3, 1, 2), [1, 5, 5, 1], 2, "SAME"),
    _transpose("same_even_filter", (2, 4, 6, 1), (2, 2, 2, 1), [2, 4, 6, 2], 3, "SAME"),
    _transpose("valid_rate2", (1, 3, 2, 1), (2, 2, 1, 1), [1, 5, 4, 1], 2, "VALID"),
    _transpose("rate1", (1, 3, 3, 1), (2, 2, 2, 1), [1, 3, 3, 2], 1, "SAME"),
    OpSpec("with_space_to_batch/conv_same",
           lambda tf, x, f: tf.nn.with_space_to_batch(x, [2, 2], "SAME", _conv_op(tf, f), [2, 3]),
           (Input((1, 5, 6, 2)), Input((2, 3, 2, 1))), dynamic=False),
    OpSpec("with_space_to_batch/pool_valid",
           lambda tf, x: tf.nn.with_space_to_batch(x, [2, 3], "VALID", _pool_op(tf)),
           (Input((2, 6, 7, 1), kind="distinct"),), dynamic=False),
    OpSpec("with_space_to_batch/rate1",
           lambda tf, x: tf.nn.with_space_to_batch(x, [1, 1], "SAME", _pool_op(tf)),
           (Input((1, 3, 3, 1), kind="distinct"),)),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_errors():
    x = fm.placeholder(fm.float32, [1, None, 4, 1])
    with pytest.raises(InvalidArgumentError, match="spatial sizes of the input"):
        fm.nn.with_space_to_batch(x, [2, 2], "VALID", lambda t, n, p: t)
    with pytest.raises(ValueError, match="filter_shape"):
        fm.nn.with_space_to_batch(x, [2, 2], "SAME", lambda t, n, p: t)
    with pytest.raises(InvalidArgumentError, match="rate must be >= 1"):
        fm.nn.atrous_conv2d_transpose(x, fm.zeros([2, 2, 1, 1]), [1, 3, 4, 1], 0, "SAME")
