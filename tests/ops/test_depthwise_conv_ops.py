"""Depthwise and separable convolutions: the oracle table (values, gradients, second order,
TensorFlow)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow


def _ref(x, f, stride=1, padding=0, dilation=1):
    """Depthwise conv in torch (NHWC in, NHWC out) for VALID/explicit symmetric padding."""
    h, w, c, m = f.shape
    xt = torch.from_numpy(np.asarray(x, np.float64)).permute(0, 3, 1, 2)
    ft = torch.from_numpy(np.asarray(f, np.float64)).reshape(h, w, 1, c * m).permute(3, 2, 0, 1)
    y = torch.nn.functional.conv2d(xt, ft, None, stride, padding, dilation, groups=c)
    return y.permute(0, 2, 3, 1).numpy()


X = Input((1, 5, 5, 2))
F = Input((3, 3, 2, 2))
SPECS = [
    OpSpec("depthwise_conv2d/valid", lambda tf, x, f: tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "VALID"),
           (X, F), reference=_ref, second_order=True),
    OpSpec("depthwise_conv2d/same_stride2", lambda tf, x, f: tf.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME"),
           (X, F)),
    OpSpec("depthwise_conv2d/rate2", lambda tf, x, f: tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "VALID",
                                                                              rate=[2, 2]),
           (Input((1, 6, 6, 2)), Input((2, 2, 2, 1))), reference=lambda x, f: _ref(x, f, dilation=2)),
    OpSpec("depthwise_conv2d_native/multiplier3",
           lambda tf, x, f: tf.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "SAME"),
           (Input((2, 4, 4, 2)), Input((2, 2, 2, 3)))),
    OpSpec("separable_conv2d", lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "VALID"),
           (X, F, Input((1, 1, 4, 3))), second_order=True),
    OpSpec("separable_conv2d/same_stride2",
           lambda tf, x, d, p: tf.nn.separable_conv2d(x, d, p, [1, 2, 2, 1], "SAME"),
           (X, Input((2, 2, 2, 1)), Input((1, 1, 2, 2)))),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_depthwise(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_depthwise_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_depthwise_channel_mismatch_is_named():
    import flowmesh as tf

    with pytest.raises(tf.errors.InvalidArgumentError, match="input depth 3 must equal the filter's in_channels 2"):
        tf.nn.depthwise_conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 2, 1]), [1, 1, 1, 1], "VALID")
