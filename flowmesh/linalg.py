# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.linalg``: matrix products, contractions, diagonals, bands, norms."""

from flowmesh.ops.clip_ops import global_norm
from flowmesh.ops.einsum_ops import einsum
from flowmesh.ops.linalg_compositions import matrix_rank, normalize, pinv
from flowmesh.ops.linalg_decomp_ops import (
    adjoint,
    cholesky,
    cholesky_solve,
    cross,
    det,
    logdet,
    matvec,
    slogdet,
)
from flowmesh.ops.linalg_decomp_ops import matrix_solve_ls as lstsq
from flowmesh.ops.linalg_decomp_ops import matrix_triangular_solve as triangular_solve
from flowmesh.ops.linalg_decomp_ops import self_adjoint_eig as eigh
from flowmesh.ops.linalg_decomp_ops import self_adjoint_eigvals as eigvalsh
from flowmesh.ops.linalg_ops import (
    diag as tensor_diag,
)
from flowmesh.ops.linalg_ops import (
    diag_part as tensor_diag_part,
)
from flowmesh.ops.linalg_ops import (
    eye,
    matmul,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    matrix_transpose,
    norm,
    tensordot,
    trace,
)
from flowmesh.ops.linalg_solve_ops import matrix_inverse, matrix_solve
from flowmesh.ops.linear_operator import *  # noqa: F403 - the LinearOperator family
from flowmesh.ops.lu_ops import lu, lu_matrix_inverse, lu_reconstruct, lu_solve
from flowmesh.ops.matrix_function_ops import expm, logm, sqrtm
from flowmesh.ops.nn_norm_ops import l2_normalize
from flowmesh.ops.svd_qr_ops import qr, svd
from flowmesh.ops.tridiagonal_ops import eigh_tridiagonal, tridiagonal_matmul, tridiagonal_solve

band_part = matrix_band_part
inv = matrix_inverse
solve = matrix_solve
diag = matrix_diag
diag_part = matrix_diag_part
set_diag = matrix_set_diag
transpose = matrix_transpose
from flowmesh import linalg_experimental as experimental  # noqa: E402 - tf.linalg.experimental

__all__ = sorted(name for name in dir() if not name.startswith("_"))
