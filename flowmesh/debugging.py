# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.debugging``: run-time assertions, numeric checks and device-placement logging."""

from flowmesh import debugging_experimental as experimental
from flowmesh.errors import (
    disable_traceback_filtering,
    enable_traceback_filtering,
    is_traceback_filtering_enabled,
)
from flowmesh.ops.assert_shapes import assert_shapes
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


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """Ops created from now on check their floating outputs for NaN and Inf when they run,
    failing the step with an error naming the op, its output and where it was defined
    (``tf.debugging.enable_check_numerics``; the limits are accepted for compatibility)."""
    from flowmesh.core import graph

    graph.CHECK_NUMERICS[0] = True


def disable_check_numerics() -> None:
    """Ops created from now on are not instrumented (instrumented ones keep checking)."""
    from flowmesh.core import graph

    graph.CHECK_NUMERICS[0] = False
