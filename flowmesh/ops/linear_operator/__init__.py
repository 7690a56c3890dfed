"""``tf.linalg.LinearOperator`` and its subclasses (see :mod:`.base` for the table)."""

from flowmesh.ops.linear_operator.adjoint import LinearOperatorAdjoint
from flowmesh.ops.linear_operator.base import LinearOperator
from flowmesh.ops.linear_operator.blocks import (
    LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular,
    LinearOperatorKronecker,
)
from flowmesh.ops.linear_operator.circulant import (
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
)
from flowmesh.ops.linear_operator.composition import LinearOperatorComposition
from flowmesh.ops.linear_operator.diag import LinearOperatorDiag
from flowmesh.ops.linear_operator.full_matrix import LinearOperatorFullMatrix
from flowmesh.ops.linear_operator.identity import LinearOperatorIdentity, LinearOperatorScaledIdentity
from flowmesh.ops.linear_operator.inversion import LinearOperatorInversion
from flowmesh.ops.linear_operator.special import (
    LinearOperatorHouseholder,
    LinearOperatorLowRankUpdate,
    LinearOperatorPermutation,
    LinearOperatorToeplitz,
    LinearOperatorTridiag,
)
from flowmesh.ops.linear_operator.triangular import LinearOperatorLowerTriangular
from flowmesh.ops.linear_operator.zeros import LinearOperatorZeros

__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorHouseholder",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorPermutation",
    "LinearOperatorScaledIdentity",
    "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
    "LinearOperatorZeros",
]
