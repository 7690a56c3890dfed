"""fp32 CPU MatMul through oneDNN: same results as float64 numpy within float32 rounding,
for every transpose combination, the shapes of a Keras MLP's forward and backward pass, and
the shapes and layouts that fall back to torch.matmul."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import flowmesh as tf
from flowmesh.kernels.cpu import onednn_matmul

needs_onednn = pytest.mark.skipif(not onednn_matmul.available(), reason="torch built without oneDNN")

# (m, k, n): the MLP's matmuls, k below MIN_K (torch.matmul) and a transpose_a with n < MIN_N.
SHAPES = [(128, 784, 256), (256, 128, 256), (128, 256, 10), (128, 10, 256), (256, 128, 10), (3, 70, 1)]


def _run(a: np.ndarray, b: np.ndarray, ta: bool, tb: bool) -> np.ndarray:
    with tf.Graph().as_default():
        pa = tf.placeholder(tf.float32, a.shape)
        pb = tf.placeholder(tf.float32, b.shape)
        out = tf.matmul(pa, pb, transpose_a=ta, transpose_b=tb)
        with tf.Session() as sess:
            return sess.run(out, {pa: a, pb: b})


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_matmul_matches_float64(m, k, n, ta, tb):
    rng = np.random.RandomState(m * 7 + k + n)
    a = rng.randn(*((k, m) if ta else (m, k))).astype(np.float32)
    b = rng.randn(*((n, k) if tb else (k, n))).astype(np.float32)
    got = _run(a, b, ta, tb)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = (a64.T if ta else a64) @ (b64.T if tb else b64)
    assert got.dtype == np.float32 and got.shape == (m, n)
    # float32 rounding of a k-term dot product: error bound ~ k * eps * sum|a_i b_i|.
    scale = np.abs(a64.T if ta else a64) @ np.abs(b64.T if tb else b64)
    np.testing.assert_array_less(np.abs(got - want), 4 * k * np.finfo(np.float32).eps * scale + 1e-30)


@needs_onednn
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_kernel_layouts_and_fallbacks(ta, tb):
    """Strided views oneDNN rejects, batched and empty operands go to torch.matmul."""
    run = onednn_matmul.matmul_fn(ta, tb)
    g = torch.Generator().manual_seed(0)
    base_a = torch.randn(96, 200, generator=g)
    base_b = torch.randn(200, 160, generator=g)
    cases = [
        (base_a[:, :96], base_b[:96, :80]),              # row-major views with padding strides
        (base_a[::2, :96], base_b[:96, ::2]),            # step slices (no unit stride)
        (base_a[:0, :96], base_b[:96, :80]),             # empty
        (torch.randn(2, 96, 96, generator=g), torch.randn(96, 80, generator=g)),  # batched
    ]
    for a, b in cases:
        a = a.mT if ta else a
        b = b.mT if tb else b
        want = torch.matmul(a.mT if ta else a, b.mT if tb else b)
        got = run(a, b)
        assert got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)


def test_setting_turns_onednn_off(monkeypatch):
    from flowmesh.core import dtypes

    cpu = torch.device("cpu")
    monkeypatch.setenv("FLOWMESH_ONEDNN_MATMUL", "0")
    assert not onednn_matmul.usable(cpu, [dtypes.float32, dtypes.float32])
    monkeypatch.setenv("FLOWMESH_ONEDNN_MATMUL", "1")
    assert onednn_matmul.usable(cpu, [dtypes.float32, dtypes.float32]) == onednn_matmul.available()
    assert not onednn_matmul.usable(cpu, [dtypes.float64, dtypes.float64])


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_narrow_outputs_are_row_major(ta, tb):
    """Outputs narrower than SMALL_N columns are computed transposed and come back row-major
    (downstream kernels and in-place buffer forwarding get a fresh contiguous tensor)."""
    run = onednn_matmul.matmul_fn(ta, tb)
    g = torch.Generator().manual_seed(1)
    for m, k, n in [(128, 256, 10), (64, 3, 15), (17, 40, 1)]:
        a = torch.randn(*((k, m) if ta else (m, k)), generator=g)
        b = torch.randn(*((n, k) if tb else (k, n)), generator=g)
        got = run(a, b)
        want = (a.double().mT if ta else a.double()) @ (b.double().mT if tb else b.double())
        assert got.shape == (m, n) and got.is_contiguous() and got.dtype == torch.float32
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-4)
