# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.debugging``: run-time assertions, numeric checks and device-placement logging."""

from flowmesh.ops.check_ops import (
    assert_all_finite,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_proper_iterable,
    assert_rank,
    assert_rank_at_least,
    assert_rank_in,
    assert_same_float_dtype,
    assert_scalar,
    assert_type,
    check_numerics,
    is_non_decreasing,
    is_numeric_tensor,
    is_strictly_increasing,
)
from flowmesh.ops.logging_ops import Assert
from flowmesh.ops.math_ops import is_finite, is_inf, is_nan
from flowmesh.runtime.options import get_log_device_placement, set_log_device_placement
