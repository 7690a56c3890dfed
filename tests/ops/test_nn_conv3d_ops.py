"""conv3d / conv3d_transpose / conv3d_backprop_filter(_v2) / max_pool3d / avg_pool3d: values
and gradients against TensorFlow, gradients (and second order for the convolution) against
float64 finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow


def _conv(name, x_shape, f_shape, strides, padding, dilations=(1, 1, 1, 1, 1), **kw):
    def build(tf, x, f):
        return tf.nn.conv3d(x, f, list(strides), padding, dilations=list(dilations))
    return OpSpec(f"conv3d/{name}", build, (Input(x_shape), Input(f_shape)), **kw)


def _pool(kind, name, x_shape, k, s, padding, fmt="NDHWC", **kw):
    def build(tf, x):
        fn = tf.nn.max_pool3d if kind == "max" else tf.nn.avg_pool3d
        return fn(x, k, s, padding, data_format=fmt)
    x_input = Input(x_shape, kind="distinct") if kind == "max" else Input(x_shape)
    return OpSpec(f"{kind}_pool3d/{name}", build, (x_input,), **kw)


SPECS = [
    _conv("same_s1", (1, 3, 3, 3, 1), (2, 2, 2, 1, 2), (1, 1, 1, 1, 1), "SAME", second_order=True),
    _conv("same_s2_asym", (1, 4, 3, 4, 2), (2, 3, 2, 2, 1), (1, 2, 1, 2, 1), "SAME"),
    _conv("valid", (2, 3, 4, 3, 1), (2, 2, 2, 1, 2), (1, 1, 2, 1, 1), "VALID"),
    # TensorFlow's CPU Conv3D backprops reject dilations > 1: finite differences only.
    _conv("dilated", (1, 4, 4, 4, 1), (2, 2, 2, 1, 1), (1, 1, 1, 1, 1), "SAME",
          dilations=(1, 2, 2, 2, 1), oracle=False),
    OpSpec("conv3d_transpose/same_s2",
           lambda tf, x, f: tf.nn.conv3d_transpose(x, f, [1, 4, 3, 4, 2], [1, 2, 2, 2, 1], "SAME"),
           (Input((1, 2, 2, 2, 3)), Input((2, 2, 2, 2, 3)))),
    OpSpec("conv3d_transpose/valid",
           lambda tf, x, f: tf.nn.conv3d_transpose(x, f, [2, 4, 4, 3, 1], [1, 1, 1, 1, 1], "VALID"),
           (Input((2, 3, 3, 2, 2)), Input((2, 2, 2, 1, 2)))),
    OpSpec("conv3d_backprop_filter/same",
           lambda tf, x, g: tf.nn.conv3d_backprop_filter(x, [2, 2, 2, 1, 2], g, [1, 1, 1, 1, 1],
                                                         "SAME"),
           (Input((1, 3, 3, 3, 1)), Input((1, 3, 3, 3, 2)))),
    OpSpec("conv3d_backprop_filter_v2/valid_s2",
           lambda tf, x, g: tf.nn.conv3d_backprop_filter_v2(x, [2, 2, 2, 1, 1], g,
                                                            [1, 2, 2, 2, 1], "VALID"),
           (Input((1, 4, 4, 4, 1)), Input((1, 2, 2, 2, 1)))),
    _pool("max", "same", (1, 3, 4, 3, 2), [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
    _pool("max", "valid_overlap", (2, 3, 3, 3, 1), [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"),
    _pool("avg", "same", (1, 3, 4, 3, 2), [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
    _pool("avg", "valid", (1, 4, 4, 4, 1), [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
    # TensorFlow's CPU pooling kernels only take NDHWC: NCDHW checked by finite differences.
    _pool("avg", "ncdhw", (1, 2, 3, 3, 3), [1, 1, 2, 2, 2], [1, 1, 1, 1, 1], "SAME",
          fmt="NCDHW", oracle=False),
]
ORACLE = [s for s in SPECS if s.oracle]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE, ids=spec_ids(ORACLE))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_bad_arguments_say_what_to_fix():
    x = np.zeros((1, 3, 3, 3, 2), np.float32)
    with pytest.raises(InvalidArgumentError, match="Conv3D: input depth 2 must equal"):
        with fm.Graph().as_default(), fm.Session() as sess:
            sess.run(fm.nn.conv3d(fm.placeholder_with_default(x, None),
                                  np.zeros((1, 1, 1, 3, 1), np.float32), 1, "SAME"))
    with pytest.raises(InvalidArgumentError, match="padding must be 'SAME' or 'VALID'"):
        fm.nn.conv3d(x, np.zeros((1, 1, 1, 2, 1), np.float32), 1, "FULL")
    with pytest.raises(InvalidArgumentError, match="1 in the batch and channel"):
        fm.nn.max_pool3d(x, [2, 2, 2, 2, 1], 1, "VALID")
    with pytest.raises(InvalidArgumentError, match="computed output size would be"):
        fm.nn.avg_pool3d(x, 5, 1, "VALID")
