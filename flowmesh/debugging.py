"""``tf.debugging``: run-time assertions, numeric checks and device-placement logging."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "debugging")


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
