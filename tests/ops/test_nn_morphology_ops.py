"""dilation2d / erosion2d / max_pool_with_argmax: values, arg-max indices and gradients against
TensorFlow, gradients against float64 finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow


def _dilation(name, x_shape, f_shape, strides, rates, padding):
    return OpSpec(f"dilation2d/{name}",
                  lambda tf, x, f: tf.nn.dilation2d(x, f, strides, rates, padding),
                  (Input(x_shape, kind="distinct"), Input(f_shape, kind="distinct")))


def _erosion(name, x_shape, f_shape, strides, rates, padding):
    return OpSpec(f"erosion2d/{name}",
                  lambda tf, x, f: tf.nn.erosion2d(x, f, strides, rates, padding),
                  (Input(x_shape, kind="distinct"), Input(f_shape, kind="distinct")))


def _argmax(name, x_shape, k, s, padding, batch=False):
    def build(tf, x):
        out, idx = tf.nn.max_pool_with_argmax(x, k, s, padding, include_batch_in_index=batch)
        return [out, idx]
    return OpSpec(f"max_pool_with_argmax/{name}", build, (Input(x_shape, kind="distinct"),))


SPECS = [
    _dilation("same", (1, 4, 5, 2), (2, 3, 2), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
    _dilation("valid_strided_rate", (2, 6, 6, 1), (2, 2, 1), [1, 2, 1, 1], [1, 2, 2, 1], "VALID"),
    _dilation("same_rate", (1, 5, 4, 1), (3, 2, 1), [1, 1, 2, 1], [1, 2, 1, 1], "SAME"),
    _erosion("same", (1, 4, 4, 2), (2, 2, 2), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
    _erosion("valid_rate", (1, 5, 5, 1), (2, 2, 1), [1, 1, 1, 1], [1, 2, 2, 1], "VALID"),
    _argmax("same_s2", (2, 5, 4, 3), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
    _argmax("valid_overlap_batch", (2, 4, 4, 2), [1, 3, 2, 1], [1, 1, 1, 1], "VALID", batch=True),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_argmax_int32_and_errors():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    with fm.Graph().as_default(), fm.Session() as sess:
        out, idx = fm.nn.max_pool_with_argmax(x, 2, 2, "VALID", Targmax=fm.int32)
        assert idx.dtype == fm.int32
        np.testing.assert_array_equal(sess.run(idx).ravel(), [5, 7, 13, 15])
    with pytest.raises(InvalidArgumentError, match="only NHWC"):
        fm.nn.max_pool_with_argmax(x, 2, 2, "VALID", data_format="NCHW")
    with pytest.raises(InvalidArgumentError, match=r"strides must be \[1, strides_height"):
        fm.nn.dilation2d(x, np.zeros((2, 2, 1), np.float32), [2, 1, 1, 1], [1, 1, 1, 1], "SAME")
