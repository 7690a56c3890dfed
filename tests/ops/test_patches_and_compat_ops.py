"""extract_image_patches / extract_volume_patches (values, gradients, second order),
approx_top_k and conv2d_backprop_*_v2: the oracle table against TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow


def _topk_ref(x, k, axis, largest):
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)


IMG = Input((2, 5, 6, 2))
VOL = Input((1, 4, 5, 3, 2))
SPECS = [
    OpSpec("extract_image_patches/valid", lambda tf, x: tf.extract_image_patches(
        x, [1, 2, 3, 1], [1, 1, 2, 1], [1, 1, 1, 1], "VALID"), (IMG,), second_order=True),
    OpSpec("extract_image_patches/same_strided_rates", lambda tf, x: tf.extract_image_patches(
        x, [1, 3, 2, 1], [1, 2, 3, 1], [1, 2, 1, 1], "SAME"), (IMG,)),
    OpSpec("extract_image_patches/int", lambda tf, x: tf.extract_image_patches(
        x, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "SAME"), (Input((1, 3, 3, 1), "int32", 0, 9, kind="int"),)),
    OpSpec("extract_volume_patches/valid", lambda tf, x: tf.extract_volume_patches(
        x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID"), (VOL,)),
    OpSpec("extract_volume_patches/same", lambda tf, x: tf.extract_volume_patches(
        x, [1, 3, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"), (VOL,)),
    # TensorFlow registers no gradient for Conv (flowmesh's comes from conv2d/conv3d).
    OpSpec("conv/2d", lambda tf, x, f: tf.conv(x, f, [1, 1, 2, 1], "SAME"), (IMG, Input((2, 3, 2, 3))),
           dynamic=False, grad=False),
    OpSpec("conv/2d_dilated", lambda tf, x, f: tf.conv(x, f, [1, 1, 1, 1], "VALID", dilations=[1, 2, 1, 1]),
           (IMG, Input((2, 2, 2, 3))), dynamic=False, grad=False),
    OpSpec("conv/3d_batch_dims2", lambda tf, x, f: tf.conv(x, f, [1, 1, 1, 1, 1], "VALID", batch_dims=2),
           (Input((2, 1, 3, 3, 3, 1)), Input((2, 2, 2, 1, 2))), dynamic=False, grad=False),
]
def _filter_grad_ref(x, f, g):
    import torch

    t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).permute(0, 3, 1, 2)  # noqa: E731
    w = torch.nn.grad.conv2d_weight(t(x), (f.shape[3], f.shape[2], f.shape[0], f.shape[1]), t(g))
    return w.permute(2, 3, 1, 0).numpy()


def _input_grad_ref(x, f, g):
    import torch

    t = lambda a: torch.from_numpy(np.ascontiguousarray(a)).permute(0, 3, 1, 2)  # noqa: E731
    w = torch.from_numpy(np.ascontiguousarray(f)).permute(3, 2, 0, 1)
    return torch.nn.grad.conv2d_input(tuple(t(x).shape), w, t(g)).permute(0, 2, 3, 1).numpy()


# TensorFlow's CPU build registers no kernel for the V2 backprop ops: checked against torch.
TOPK = [
    OpSpec("conv2d_backprop_filter_v2", lambda tf, x, f, g: tf.conv2d_backprop_filter_v2(
        x, f, g, [1, 1, 1, 1], "VALID"), (Input((1, 4, 4, 2)), Input((2, 2, 2, 3)), Input((1, 3, 3, 3))),
        reference=_filter_grad_ref, oracle=False, dynamic=False, grad=False),
    OpSpec("conv2d_backprop_input_v2", lambda tf, x, f, g: tf.conv2d_backprop_input_v2(
        x, f, g, [1, 1, 1, 1], "VALID"), (Input((1, 4, 4, 2)), Input((3, 3, 2, 3)), Input((1, 2, 2, 3))),
        reference=_input_grad_ref, oracle=False, dynamic=False, grad=False),
    OpSpec("approx_top_k/max", lambda tf, x: list(tf.approx_top_k(x, 3)), (Input((3, 7), kind="distinct"),),
           reference=lambda x: _topk_ref(x, 3, -1, True), oracle=False),
    OpSpec("approx_top_k/min_axis0", lambda tf, x: list(tf.approx_top_k(x, 2, reduction_dimension=0, is_max_k=False)),
           (Input((5, 3), kind="distinct"),), reference=lambda x: _topk_ref(x, 2, 0, False), oracle=False),
]


@pytest.mark.parametrize("spec", SPECS + TOPK, ids=spec_ids(SPECS + TOPK))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())
