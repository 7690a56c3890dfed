"""Convolution weights go to torch in the memory format of the input's layout: one copy
per call, none inside torch (channels-last weights for NHWC inputs)."""

from __future__ import annotations

import torch

from flowmesh.kernels.nn_conv_ops import _oihw, _weight_shape


def test_weights_follow_the_input_layout():
    hwio = torch.randn(3, 2, 5, 7)
    nhwc, nchw = _oihw(hwio, "NHWC"), _oihw(hwio, "NCHW")
    assert nhwc.shape == nchw.shape == (7, 5, 3, 2)
    assert nhwc.is_contiguous(memory_format=torch.channels_last) and nchw.is_contiguous()
    assert torch.equal(nhwc, nchw) and torch.equal(nchw, hwio.permute(3, 2, 0, 1))
    shaped = _weight_shape(7, 5, 3, 2, torch.float32, "NHWC")
    assert shaped.shape == (7, 5, 3, 2) and shaped.is_contiguous(memory_format=torch.channels_last)
    assert _weight_shape(7, 5, 3, 2, torch.float32, "NCHW").shape == (7, 5, 3, 2)


def test_nhwc_convolution_outputs_and_gradients_stay_channels_last():
    x = torch.randn(2, 6, 6, 5).permute(0, 3, 1, 2)  # an NHWC tensor as torch sees it
    w = _oihw(torch.randn(3, 3, 5, 4), "NHWC")
    y = torch.nn.functional.conv2d(x, w, None, 1, 1)
    dx, dw, _ = torch.ops.aten.convolution_backward(
        y, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, False])
    for t in (y, dx, dw):
        assert t.is_contiguous(memory_format=torch.channels_last)
