"""SVD, QR, LU and what is built on them (lu_solve/reconstruct/inverse, pinv, matrix_rank),
matrix functions (expm, sqrtm, logm), tridiagonal ops and normalize: values against NumPy /
torch, gradients against finite differences and TensorFlow. Decompositions that are unique
only up to signs are compared through sign-free functions of them (reconstructions,
projections, absolute values)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import flowmesh as tf
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

WIDE, TALL, SQUARE = Input((2, 3, 4)), Input((4, 3)), Input((3, 3))
RHS = Input((3, 2))
FIXED = Input((3, 3), diff=False)


def _near_identity(tf, a):
    """A well-conditioned matrix with eigenvalues near 1 (differentiable in ``a``)."""
    n = a.shape.as_list()[-1] or 3
    return tf.eye(n, dtype=a.dtype) + 0.25 * a


def _np_near_identity(a):
    return np.eye(a.shape[-1]) + 0.25 * a


def _compact(rng):
    """Diagonally dominant compact tridiagonal diagonals ``[3, 4]``."""
    d = rng.uniform(-1.0, 1.0, (3, 4))
    d[1] += np.where(d[1] >= 0, 3.0, -3.0)
    return d


def _np_dense(d):
    return np.diag(d[1]) + np.diag(d[0, :-1], 1) + np.diag(d[2, 1:], -1)


def _lu_packed(rng):
    low = np.tril(rng.uniform(-0.5, 0.5, (3, 3)), -1)
    up = np.triu(rng.uniform(-0.5, 0.5, (3, 3)), 1) + np.diag(rng.uniform(1.5, 2.5, 3))
    return low + up


PERM = Input((3,), dtype="int32", maker=lambda rng: rng.permutation(3))
LU = Input((3, 3), maker=_lu_packed)
DIAGS = Input((3, 4), maker=_compact)


def _sign_free_svd(tf, a):
    s, u, v = tf.linalg.svd(a)
    return [s, tf.abs(u), tf.matmul(v, v, transpose_b=True)]


def _np_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    v = np.swapaxes(vh, -1, -2)
    return [s, np.abs(u), v @ np.swapaxes(v, -1, -2)]


def _np_lu_reconstruct(lu, perm):
    low, up = np.tril(lu, -1) + np.eye(3), np.triu(lu)
    out = np.empty_like(lu)
    out[perm] = low @ up
    return out


SPECS = [
    OpSpec("svd/sign_free", _sign_free_svd, (WIDE,), reference=_np_svd, dynamic=False),
    OpSpec("svd/tall_reconstruct", lambda tf, a: (lambda s, u, v: tf.matmul(u * s[..., None, :], v, adjoint_b=True))(
        *tf.svd(a)), (TALL,), reference=lambda a: a, dynamic=False),
    OpSpec("svd/values_only", lambda tf, a: tf.linalg.svd(a, compute_uv=False), (TALL,),
           reference=lambda a: np.linalg.svd(a, compute_uv=False)),
    OpSpec("svd/full_square", lambda tf, a: tf.abs(tf.linalg.svd(a, full_matrices=True)[1]), (SQUARE,),
           reference=lambda a: np.abs(np.linalg.svd(a)[0]), dynamic=False),
    OpSpec("qr/tall", lambda tf, a: [tf.matmul(*tf.linalg.qr(a)), tf.abs(tf.qr(a)[1])], (TALL,),
           reference=lambda a: [a, np.abs(np.linalg.qr(a)[1])], dynamic=False),
    OpSpec("qr/wide", lambda tf, a: [tf.abs(tf.linalg.qr(a)[0]), tf.abs(tf.linalg.qr(a)[1])], (WIDE,),
           reference=lambda a: [np.abs(np.linalg.qr(a)[0]), np.abs(np.linalg.qr(a)[1])], dynamic=False),
    OpSpec("lu/factors", lambda tf, a: list(tf.linalg.lu(a)), (FIXED,),
           reference=lambda a: _lu_reference(a)),
    OpSpec("lu_solve/rhs", lambda tf, a, b: tf.linalg.lu_solve(*tf.linalg.lu(a), b), (FIXED, RHS),
           reference=lambda a, b: np.linalg.solve(a, b)),
    OpSpec("lu_solve/factors", lambda tf, lu, p, b: tf.linalg.lu_solve(lu, p, b), (LU, PERM, RHS),
           reference=lambda lu, p, b: np.linalg.solve(_np_lu_reconstruct(lu, p), b)),
    OpSpec("lu_reconstruct", lambda tf, lu, p: tf.linalg.lu_reconstruct(lu, p), (LU, PERM),
           reference=_np_lu_reconstruct),
    OpSpec("lu_matrix_inverse", lambda tf, lu, p: tf.linalg.lu_matrix_inverse(lu, p), (LU, PERM),
           reference=lambda lu, p: np.linalg.inv(_np_lu_reconstruct(lu, p))),
    OpSpec("pinv/tall", lambda tf, a: tf.linalg.pinv(a), (TALL,), reference=np.linalg.pinv, dynamic=False),
    OpSpec("matrix_rank", lambda tf, a, b: tf.linalg.matrix_rank(tf.matmul(a, b)),
           (Input((2, 4, 2)), Input((2, 2, 3))), reference=lambda a, b: np.linalg.matrix_rank(a @ b)),
    OpSpec("expm", lambda tf, a: tf.linalg.expm(a), (Input((2, 3, 3), low=-1.0, high=1.0),),
           reference=lambda a: torch.linalg.matrix_exp(torch.from_numpy(a.astype(np.float64))).numpy(),
           second_order=True),
    OpSpec("sqrtm", lambda tf, a: tf.linalg.sqrtm(_near_identity(tf, a)), (SQUARE,),
           reference=lambda a: _np_sqrtm(_np_near_identity(a))),
    OpSpec("matrix_square_root/spd", lambda tf, a: tf.matrix_square_root(
        tf.matmul(a, a, transpose_b=True) + tf.eye(3, dtype=a.dtype)), (Input((2, 3, 3)),)),
    OpSpec("logm", lambda tf, a: tf.math.real(tf.linalg.logm(tf.complex(_near_identity(tf, a), tf.zeros_like(a)))),
           (FIXED,), reference=lambda a: _np_logm(_np_near_identity(a))),
    OpSpec("tridiagonal_matmul/compact", lambda tf, d, b: tf.linalg.tridiagonal_matmul(d, b), (DIAGS, Input((4, 2))),
           reference=lambda d, b: _np_dense(d) @ b),
    OpSpec("tridiagonal_matmul/sequence",
           lambda tf, d, b: tf.linalg.tridiagonal_matmul([d[0], d[1], d[2]], b, diagonals_format="sequence"),
           (DIAGS, Input((4, 2))), reference=lambda d, b: _np_dense(d) @ b),
    OpSpec("tridiagonal_solve/compact", lambda tf, d, b: tf.linalg.tridiagonal_solve(d, b), (DIAGS, Input((4, 2))),
           reference=lambda d, b: np.linalg.solve(_np_dense(d), b)),
    OpSpec("tridiagonal_solve/vector_sequence_short",
           lambda tf, d, b: tf.linalg.tridiagonal_solve([d[0, :3], d[1], d[2, 1:]], b, diagonals_format="sequence"),
           (DIAGS, Input((4,))), reference=lambda d, b: np.linalg.solve(_np_dense(d), b), dynamic=False),
    OpSpec("tridiagonal_solve/matrix_transpose_rhs",
           lambda tf, m, b: tf.linalg.tridiagonal_solve(m, b, diagonals_format="matrix", transpose_rhs=True),
           (Input((4, 4), maker=lambda rng: _np_dense(_compact(rng))), Input((2, 4))),
           reference=lambda m, b: np.linalg.solve(m, b.T)),
    OpSpec("eigh_tridiagonal", lambda tf, a, b: tf.linalg.eigh_tridiagonal(a, b), (Input((4,)), Input((3,))),
           reference=lambda a, b: np.linalg.eigvalsh(np.diag(a) + np.diag(b, 1) + np.diag(b, -1)), grad=False),
    OpSpec("eigh_tridiagonal/select_index",
           lambda tf, a, b: tf.linalg.eigh_tridiagonal(a, b, select="i", select_range=[1, 2]),
           (Input((4,)), Input((3,))),
           reference=lambda a, b: np.linalg.eigvalsh(np.diag(a) + np.diag(b, 1) + np.diag(b, -1))[1:3], grad=False),
    OpSpec("normalize/euclidean", lambda tf, x: list(tf.linalg.normalize(x)), (Input((2, 3)),),
           reference=lambda x: [x / np.linalg.norm(x), np.reshape(np.linalg.norm(x), (1, 1))]),
    OpSpec("normalize/axis_ord1", lambda tf, x: list(tf.linalg.normalize(x, ord=1, axis=-1)),
           (Input((2, 3), kind="nonzero", low=0.2),),
           reference=lambda x: [x / np.abs(x).sum(-1, keepdims=True), np.abs(x).sum(-1, keepdims=True)]),
]


def _lu_reference(a):
    p, low, up = torch.linalg.lu(torch.from_numpy(a.astype(np.float64)))
    return [(torch.tril(low, -1) + up).numpy(), p.argmax(dim=-2).numpy().astype(np.int32)]


def _np_sqrtm(a):
    values, vectors = np.linalg.eig(a)
    return (vectors @ np.diag(np.sqrt(values.astype(complex))) @ np.linalg.inv(vectors)).real


def _np_logm(a):
    values, vectors = np.linalg.eig(a)
    return (vectors @ np.diag(np.log(values.astype(complex))) @ np.linalg.inv(vectors)).real


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_decomposition(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_decomposition_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_eigh_tridiagonal_vectors_and_value_range():
    import flowmesh as tf

    alpha, beta = np.array([2.0, 1.0, 3.0, 0.5]), np.array([0.3, -0.4, 0.2])
    dense = np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1)
    expected = np.linalg.eigvalsh(dense)
    with tf.Graph().as_default(), tf.Session() as sess:
        values, vectors = sess.run(tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False))
        in_range = sess.run(tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=[0.9, 2.5]))
    np.testing.assert_allclose(values, expected, atol=1e-12)
    np.testing.assert_allclose(dense @ vectors, vectors * values, atol=1e-12)
    np.testing.assert_allclose(in_range, expected[(expected > 0.9) & (expected <= 2.5)], atol=1e-12)


def test_bad_inputs_are_named():
    import flowmesh as tf

    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank >= 2"):
            tf.linalg.svd(tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match="Qr"):
            tf.linalg.qr(tf.constant([[1, 2], [3, 4]]))
        with pytest.raises(TypeError, match="MatrixLogarithm"):
            tf.linalg.logm(tf.eye(2))
        with pytest.raises(ValueError, match="unrecognized diagonals_format"):
            tf.linalg.tridiagonal_matmul(tf.ones([3, 2]), tf.ones([2, 1]), diagonals_format="band")


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_tridiagonal_solve_of_a_large_system_pivots_in_linear_time(dtype) -> None:
    """Systems larger than the dense cut-off run the O(M) elimination with row interchanges
    (small main diagonal, so most rows swap); values and the rhs gradient match dense solves."""
    from flowmesh.kernels.tridiagonal_ops import DENSE_SOLVE_MAX_SIZE

    rng = np.random.default_rng(3)
    m = DENSE_SOLVE_MAX_SIZE + 72

    def draw(*shape):
        x = rng.uniform(-1, 1, shape)
        return (x + 1j * rng.uniform(-1, 1, shape)).astype(dtype) if dtype == np.complex128 else x.astype(dtype)

    diags = draw(2, 3, m)
    diags[:, 1] *= 0.1
    rhs, weights = draw(2, m, 3), draw(2, m, 3)
    dense = np.stack([_np_dense(d) for d in diags])
    expected = np.linalg.solve(dense, rhs)
    expected_grad = np.linalg.solve(np.swapaxes(dense, -1, -2), weights)  # as TensorFlow (checked)
    tolerance = 1e-12 * max(np.linalg.cond(a) for a in dense)
    with tf.Graph().as_default():
        d, b = tf.constant(diags), tf.constant(rhs)
        x = tf.linalg.tridiagonal_solve(d, b)
        (grad,) = tf.gradients(tf.reduce_sum(tf.math.real(x * tf.constant(np.conj(weights)))), [b])
        with tf.Session() as sess:
            got, got_grad = sess.run([x, grad])
    assert np.abs(got - expected).max() <= tolerance * np.abs(expected).max()
    assert np.abs(got_grad - expected_grad).max() <= tolerance * np.abs(expected_grad).max()


def test_tridiagonal_solve_of_a_large_singular_system_raises() -> None:
    from flowmesh.kernels.tridiagonal_ops import DENSE_SOLVE_MAX_SIZE

    diags = np.ones((3, DENSE_SOLVE_MAX_SIZE + 8), np.float32)  # rows 0 and 1 of [[1,1,..],[1,1,1,..]] ...
    diags[:, 5:] = 0.0                                           # ... a zero block: singular
    with tf.Graph().as_default():
        x = tf.linalg.tridiagonal_solve(diags, np.ones((diags.shape[1], 1), np.float32), name="big")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="'big.*not invertible"):
            sess.run(x)
