"""The ``tf.linalg.LinearOperator`` family against TensorFlow's: every operator is built the
same way in both libraries from well-conditioned float64/complex128 arrays, and each method
(dense matrix, products and solves with and without adjoints, determinants, diagonal, trace,
shape, adjoint and inverse operators) must give TensorFlow's values to rounding."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(11)
N = 4


def _well(n=N, batch=()):
    return RNG.uniform(-0.4, 0.4, batch + (n, n)) + 2.0 * np.eye(n)


A, B, TRIL = _well(), _well(batch=(2,)), np.tril(_well())
D = RNG.uniform(0.5, 2.0, (2, N))
U, V = RNG.uniform(-0.5, 0.5, (N, 2)), RNG.uniform(-0.5, 0.5, (N, 2))
SPECTRUM = RNG.uniform(1.0, 2.0, (N,)) + 0.3j * RNG.uniform(-1.0, 1.0, (N,))
HERMITIAN = np.real(np.fft.fft(np.array([3.0, 0.5, 0.2, 0.5]))).astype(np.float64)
W2, W3, W4, RECT = _well(2), _well(3), _well(), RNG.uniform(-1, 1, (3, 2))
AXES, SPEC2D, SPEC3D = RNG.uniform(-1.0, 1.0, (2, N)), RNG.uniform(1.0, 2.0, (2, 2)) + 0j, RNG.uniform(1.0, 2.0, (1, 2, 2)) + 0.1j
COMPACT = np.stack([RNG.uniform(-0.5, 0.5, N), RNG.uniform(2.0, 3.0, N), RNG.uniform(-0.5, 0.5, N)])

OPERATORS = {
    "full_matrix": lambda lib: lib.linalg.LinearOperatorFullMatrix(A),
    "full_matrix_batch": lambda lib: lib.linalg.LinearOperatorFullMatrix(B, is_non_singular=True),
    "lower_triangular": lambda lib: lib.linalg.LinearOperatorLowerTriangular(TRIL),
    "diag": lambda lib: lib.linalg.LinearOperatorDiag(D),
    "identity": lambda lib: lib.linalg.LinearOperatorIdentity(N, dtype=lib.float64),
    "identity_batch": lambda lib: lib.linalg.LinearOperatorIdentity(N, batch_shape=[2], dtype=lib.float64),
    "scaled_identity": lambda lib: lib.linalg.LinearOperatorScaledIdentity(N, np.array([1.5, -0.5])),
    "zeros": lambda lib: lib.linalg.LinearOperatorZeros(N, dtype=lib.float64),
    "zeros_rectangular": lambda lib: lib.linalg.LinearOperatorZeros(N, 3, batch_shape=[2], dtype=lib.float64, is_square=False,
                                                            is_self_adjoint=False),
    "adjoint": lambda lib: lib.linalg.LinearOperatorAdjoint(lib.linalg.LinearOperatorFullMatrix(A)),
    "inversion": lambda lib: lib.linalg.LinearOperatorInversion(lib.linalg.LinearOperatorFullMatrix(A)),
    "composition": lambda lib: lib.linalg.LinearOperatorComposition(
        [lib.linalg.LinearOperatorFullMatrix(A), lib.linalg.LinearOperatorLowerTriangular(TRIL)]),
    "block_diag": lambda lib: lib.linalg.LinearOperatorBlockDiag(
        [lib.linalg.LinearOperatorFullMatrix(W2), lib.linalg.LinearOperatorDiag(D[0, :3])]),
    "block_lower_triangular": lambda lib: lib.linalg.LinearOperatorBlockLowerTriangular(
        [[lib.linalg.LinearOperatorFullMatrix(W2)],
         [lib.linalg.LinearOperatorFullMatrix(RECT), lib.linalg.LinearOperatorDiag(D[1, :3])]]),
    "kronecker": lambda lib: lib.linalg.LinearOperatorKronecker(
        [lib.linalg.LinearOperatorFullMatrix(W2), lib.linalg.LinearOperatorFullMatrix(W3)]),
    "low_rank_update": lambda lib: lib.linalg.LinearOperatorLowRankUpdate(
        lib.linalg.LinearOperatorDiag(D[0]), U, diag_update=np.array([0.5, 1.5]), v=V),
    "low_rank_update_symmetric": lambda lib: lib.linalg.LinearOperatorLowRankUpdate(
        lib.linalg.LinearOperatorIdentity(N, dtype=lib.float64), U),
    "householder": lambda lib: lib.linalg.LinearOperatorHouseholder(AXES),
    "permutation": lambda lib: lib.linalg.LinearOperatorPermutation(np.array([2, 0, 3, 1], np.int32), dtype=lib.float64),
    "toeplitz": lambda lib: lib.linalg.LinearOperatorToeplitz(
        np.array([3.0, 0.5, -0.2, 0.1]), np.array([9.0, 0.4, 0.3, -0.1])),
    "tridiag": lambda lib: lib.linalg.LinearOperatorTridiag(COMPACT),
    "tridiag_matrix": lambda lib: lib.linalg.LinearOperatorTridiag(np.triu(np.tril(W4, 1), -1), diagonals_format="matrix"),
    "circulant": lambda lib: lib.linalg.LinearOperatorCirculant(SPECTRUM, input_output_dtype=lib.complex128),
    "circulant_real": lambda lib: lib.linalg.LinearOperatorCirculant(
        HERMITIAN + 3.0, input_output_dtype=lib.float64, is_self_adjoint=True),
    "circulant2d": lambda lib: lib.linalg.LinearOperatorCirculant2D(
        SPEC2D, input_output_dtype=lib.complex128),
    "circulant3d": lambda lib: lib.linalg.LinearOperatorCirculant3D(
        SPEC3D, input_output_dtype=lib.complex128),
}
SINGULAR = {"zeros", "zeros_rectangular"}


def _methods(op, lib):
    n = op.shape.as_list()[-1]
    m = op.shape.as_list()[-2]
    dtype = op.dtype.as_numpy_dtype
    x = (np.arange(n * 2).reshape(n, 2) % 5 - 2.0).astype(dtype)
    y = (np.arange(m * 2).reshape(m, 2) % 3 - 1.0).astype(dtype)
    out = {"to_dense": op.to_dense(), "matmul": op.matmul(x), "matmul_adjoint": op.matmul(y, adjoint=True),
           "matmul_adjoint_arg": op.matmul(np.ascontiguousarray(x.T), adjoint_arg=True),
           "matvec": op.matvec(x[:, 0]), "diag_part": op.diag_part(), "trace": op.trace(),
           "shape_tensor": op.shape_tensor(), "adjoint_dense": op.adjoint().to_dense(),
           "add_to_tensor": op.add_to_tensor(lib.constant(np.ones(op.shape.as_list(), dtype)))}
    if m == n:
        out.update(determinant=op.determinant(), log_abs_determinant=op.log_abs_determinant())
    if m == n and not out["to_dense"].dtype.is_complex and op.is_self_adjoint:
        out["eigvals"] = op.eigvals()
    return out


def _solves(op):
    n = op.shape.as_list()[-1]
    rhs = (np.arange(n * 2).reshape(n, 2) % 4 - 1.5).astype(op.dtype.as_numpy_dtype)
    return {"solve": op.solve(rhs), "solve_adjoint": op.solve(rhs, adjoint=True), "solvevec": op.solvevec(rhs[:, 0]),
            "inverse_dense": op.inverse().to_dense()}


def _evaluate(lib, name, config=None):
    with lib.Graph().as_default() as g:
        op = OPERATORS[name](lib)
        fetches = _methods(op, lib)
        if name not in SINGULAR:
            fetches.update(_solves(op))
        with lib.Session(graph=g, config=config) as sess:
            values = sess.run(fetches)
        return values, op.shape.as_list(), op.dtype.name, type(op).__name__


@pytest.mark.parametrize("name", list(OPERATORS))
def test_linear_operator_matches_tensorflow(name):
    tf1 = require_tensorflow()
    ours, shape, dtype, cls = _evaluate(tf, name)
    theirs, tf_shape, tf_dtype, tf_cls = _evaluate(tf1, name, session_config(tf1))
    assert (shape, dtype, cls) == (tf_shape, tf_dtype, tf_cls)
    assert sorted(ours) == sorted(theirs)
    tolerance = 1e-6 if name.startswith("circulant") else 1e-9  # TensorFlow's circulants compute in complex64
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=tolerance, atol=tolerance, err_msg=f"{name}.{key}")


def test_operator_gradients_flow_to_parameters():
    """d log|det| / d diag of a diagonal operator is 1 / diag; through a composition too."""
    with tf.Graph().as_default(), tf.Session() as sess:
        d = tf.constant([1.0, 2.0, 4.0], tf.float64)
        op = tf.linalg.LinearOperatorComposition([tf.linalg.LinearOperatorDiag(d),
                                                  tf.linalg.LinearOperatorFullMatrix(tf.linalg.diag(d))])
        (grad,) = tf.gradients(op.log_abs_determinant(), [d])
        np.testing.assert_allclose(sess.run(grad), 2.0 / np.array([1.0, 2.0, 4.0]))


def test_hints_and_errors_are_named():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="positive definite operator is always non-singular"):
            tf.linalg.LinearOperatorFullMatrix(A, is_positive_definite=True, is_non_singular=False)
        zeros = tf.linalg.LinearOperatorZeros(3)
        with pytest.raises(NotImplementedError, match="singular"):
            zeros.solve(np.ones((3, 1)))
        with pytest.raises(ValueError, match="singular operator"):
            zeros.inverse()
        with pytest.raises(ValueError, match="cannot multiply"):
            tf.linalg.LinearOperatorComposition([tf.linalg.LinearOperatorFullMatrix(np.ones((2, 3))),
                                                 tf.linalg.LinearOperatorFullMatrix(np.ones((2, 2)))])
        op = tf.linalg.LinearOperatorDiag([1.0, 2.0])
        assert op.H is op and op.is_self_adjoint and op.is_square
        composed = op @ tf.linalg.LinearOperatorIdentity(2)
        assert isinstance(composed, tf.linalg.LinearOperatorComposition)


def _circulant_extras(lib, config=None):
    with lib.Graph().as_default() as g:
        real_op = OPERATORS["circulant_real"](lib)
        op2d = OPERATORS["circulant2d"](lib)
        low_rank = OPERATORS["low_rank_update"](lib)
        fetches = [real_op.convolution_kernel(), op2d.convolution_kernel(), op2d.block_shape_tensor(),
                   low_rank.diag_operator.to_dense()]
        with lib.Session(graph=g, config=config) as sess:
            return sess.run(fetches)


def test_circulant_kernel_and_low_rank_parts_match_tensorflow():
    tf1 = require_tensorflow()
    for ours, theirs in zip(_circulant_extras(tf), _circulant_extras(tf1, session_config(tf1))):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def test_assert_hermitian_spectrum():
    # (TensorFlow 2.21's own check fails to build for float64 spectra, so this one is ours alone.)
    with tf.Graph().as_default(), tf.Session() as sess:
        sess.run(OPERATORS["circulant_real"](tf).assert_hermitian_spectrum())
        with pytest.raises(tf.errors.InvalidArgumentError, match="not Hermitian"):
            sess.run(OPERATORS["circulant"](tf).assert_hermitian_spectrum())


class _ScaledOnesPlusIdentity(tf.linalg.LinearOperator):
    """A user subclass the TensorFlow way: only ``_shape``, ``_shape_tensor`` and ``_matmul``."""

    def __init__(self, n, c):
        self._n, self._c = n, c
        super().__init__(dtype=tf.float64, is_self_adjoint=True, is_non_singular=True, name="OnesPlusI")

    def _shape(self):
        return tf.TensorShape([self._n, self._n])

    def _shape_tensor(self):
        return tf.constant([self._n, self._n])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = tf.linalg.adjoint(x) if adjoint_arg else x
        return x + self._c * tf.reduce_sum(x, axis=-2, keepdims=True)


def test_user_subclass_gets_every_method_from_matmul():
    dense = np.eye(3) + 0.5 * np.ones((3, 3))
    rhs = np.arange(6.0).reshape(3, 2)
    with tf.Graph().as_default(), tf.Session() as sess:
        op = _ScaledOnesPlusIdentity(3, 0.5)
        values = sess.run([op.to_dense(), op.solve(rhs), op.determinant(), op.trace(), op.eigvals(),
                           op.inverse().matmul(rhs)])
    np.testing.assert_allclose(values[0], dense)
    np.testing.assert_allclose(values[1], np.linalg.solve(dense, rhs))
    np.testing.assert_allclose(values[2], np.linalg.det(dense))
    np.testing.assert_allclose(values[3], np.trace(dense))
    np.testing.assert_allclose(values[4], np.linalg.eigvalsh(dense))
    np.testing.assert_allclose(values[5], np.linalg.solve(dense, rhs))
