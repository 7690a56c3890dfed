"""Determinants, Cholesky, triangular solves, symmetric eigendecomposition and their
compositions: the oracle table (values vs NumPy, gradients vs finite differences and
TensorFlow)."""

from __future__ import annotations

import numpy as np
import pytest

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

M = Input((3, 3))
BATCH = Input((2, 3, 3))
RHS = Input((3, 2))


def _spd(tf, a):
    """A symmetric positive definite matrix from any square ``a`` (differentiable)."""
    n = a.shape.as_list()[-1] if a.shape.rank is not None and a.shape.as_list()[-1] is not None else 3
    return tf.matmul(a, a, transpose_b=True) + 3.0 * tf.eye(n, dtype=a.dtype)


def _lower(tf, a):
    return tf.matrix_band_part(a, -1, 0) + 3.0 * tf.eye(3, dtype=a.dtype)


def _np_spd(a):
    return a @ np.swapaxes(a, -1, -2) + 3.0 * np.eye(a.shape[-1])


SPECS = [
    OpSpec("det", lambda tf, a: tf.linalg.det(a), (M,), reference=np.linalg.det, second_order=True),
    OpSpec("det/batch", lambda tf, a: tf.matrix_determinant(a), (BATCH,), reference=np.linalg.det),
    OpSpec("slogdet", lambda tf, a: tf.linalg.slogdet(a), (BATCH,), reference=lambda a: np.linalg.slogdet(a)),
    OpSpec("logdet", lambda tf, a: tf.linalg.logdet(_spd(tf, a)), (M,),
           reference=lambda a: np.linalg.slogdet(_np_spd(a))[1]),
    OpSpec("cholesky", lambda tf, a: tf.cholesky(_spd(tf, a)), (BATCH,),
           reference=lambda a: np.linalg.cholesky(_np_spd(a)), second_order=True),
    OpSpec("triangular_solve/lower", lambda tf, a, b: tf.matrix_triangular_solve(_lower(tf, a), b), (M, RHS),
           second_order=True),
    OpSpec("triangular_solve/upper_adjoint",
           lambda tf, a, b: tf.linalg.triangular_solve(tf.transpose(_lower(tf, a)), b, lower=False, adjoint=True),
           (M, RHS)),
    OpSpec("cholesky_solve", lambda tf, a, b: tf.cholesky_solve(tf.cholesky(_spd(tf, a)), b), (M, RHS),
           reference=lambda a, b: np.linalg.solve(_np_spd(a), b)),
    OpSpec("eigvalsh", lambda tf, a: tf.self_adjoint_eigvals(_spd(tf, a)), (BATCH,),
           reference=lambda a: np.linalg.eigvalsh(_np_spd(a))),
    OpSpec("eigh/values_and_squared_vectors",
           lambda tf, a: [tf.linalg.eigh(_spd(tf, a))[0], tf.square(tf.linalg.eigh(_spd(tf, a))[1])], (M,),
           reference=lambda a: [np.linalg.eigh(_np_spd(a))[0], np.linalg.eigh(_np_spd(a))[1] ** 2]),
    OpSpec("matrix_solve_ls", lambda tf, a, b: tf.matrix_solve_ls(a, b), (Input((4, 3)), Input((4, 2))),
           reference=lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], dynamic=False),
    OpSpec("matrix_solve_ls/l2", lambda tf, a, b: tf.linalg.lstsq(a, b, l2_regularizer=0.5),
           (Input((4, 3)), Input((4, 2))), dynamic=False),
    OpSpec("matvec", lambda tf, a, b: tf.linalg.matvec(a, b), (Input((2, 3, 4)), Input((2, 4)))),
    OpSpec("adjoint", lambda tf, a: tf.linalg.adjoint(a), (Input((2, 3)),), reference=lambda a: a.T),
    OpSpec("cross", lambda tf, a, b: tf.linalg.cross(a, b), (Input((2, 3)), Input((2, 3))), reference=np.cross,
           second_order=True),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_linalg(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_linalg_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


def test_cholesky_of_an_indefinite_matrix_is_named():
    import flowmesh as tf

    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="not symmetric positive definite"):
            sess.run(tf.cholesky(tf.constant([[1.0, 2.0], [2.0, 1.0]])))
