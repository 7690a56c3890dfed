# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.math``: elementwise math, reductions, segment ops and special functions.

Everything here is also reachable where TensorFlow 1.x puts it (``tf.add``,
``tf.reduce_sum``, ``tf.nn.softplus`` ...); this module is the ``tf.math`` spelling.
"""

from flowmesh.ops.cast_ops import saturate_cast
from flowmesh.ops.clip_ops import clip_by_value
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.math_ops import (
    abs,
    accumulate_n,
    acos,
    acosh,
    add,
    add_n,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    ceil,
    cos,
    cosh,
    digamma,
    div_no_nan,
    divide,
    divide_no_nan,
    equal,
    erf,
    erfc,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    lgamma,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    multiply_no_nan,
    negative,
    not_equal,
    polygamma,
    pow,
    realdiv,
    reciprocal,
    rint,
    round,
    rsqrt,
    scalar_mul,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    squared_difference,
    subtract,
    tan,
    tanh,
    truediv,
    truncatediv,
    truncatemod,
    xdivy,
    xlogy,
)
from flowmesh.ops.nn_impl import in_top_k, log_sigmoid, softplus, softsign, top_k, zero_fraction
from flowmesh.ops.nn_norm_ops import l2_normalize
from flowmesh.ops.nn_ops import log_softmax, softmax
from flowmesh.ops.range_ops import invert_permutation
from flowmesh.ops.reduction_ops import (
    argmax,
    argmin,
    count_nonzero,
    cumprod,
    cumsum,
    reduce_all,
    reduce_any,
    reduce_euclidean_norm,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_std,
    reduce_sum,
    reduce_variance,
)
from flowmesh.ops.segment_ops import (
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
    unsorted_segment_sum,
)

__all__ = sorted(name for name in dir() if not name.startswith("_"))
from flowmesh import math_special as special  # noqa: E402 - tf.math.special
from flowmesh.ops.bessel_ops import bessel_i0, bessel_i0e, bessel_i1, bessel_i1e
from flowmesh.ops.check_ops import is_non_decreasing, is_strictly_increasing
from flowmesh.ops.complex_ops import angle, conj, imag, real
from flowmesh.ops.nn_compositions import approx_max_k, approx_min_k
from flowmesh.ops.search_ops import bincount, confusion_matrix
from flowmesh.ops.sobol_ops import sobol_sample
from flowmesh.ops.special_math_ops import (
    betainc,
    cumulative_logsumexp,
    erfcinv,
    erfinv,
    igamma,
    igammac,
    lbeta,
    ndtri,
    nextafter,
    polyval,
    reciprocal_no_nan,
    xlog1py,
    zeta,
)
