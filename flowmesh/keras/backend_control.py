"""``tf.keras.backend`` control flow: ``K.switch``, the learning-phase helpers
(``K.in_train_phase``, ``K.learning_phase_scope``), ``K.map_fn``/``foldl``/``foldr`` and
``K.rnn`` (a ``While`` loop over time); re-exported by :mod:`flowmesh.keras.backend`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras import backend_state
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops


def switch(condition: Any, then_expression: Any, else_expression: Any) -> Any:
    """``then_expression`` where ``condition`` holds (a scalar picks a branch with
    ``tf.cond``; a tensor condition selects element-wise, broadcast to the expressions)."""
    from flowmesh.ops.select_ops import where

    condition = convert_to_tensor(condition)
    if condition.dtype != dtypes.bool:
        condition = cast_ops.cast(condition, dtypes.bool)
    if condition.shape.rank == 0:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return backend_state.smart_cond(condition, then_fn, else_fn)
    then_value = then_expression() if callable(then_expression) else convert_to_tensor(then_expression)
    else_value = else_expression() if callable(else_expression) else convert_to_tensor(else_expression)
    cond_rank, expr_rank = condition.shape.rank, then_value.shape.rank
    if cond_rank is not None and expr_rank is not None and cond_rank < expr_rank:
        condition = array_ops.reshape(condition, array_ops.concat(
            [array_ops.shape(condition), [1] * (expr_rank - cond_rank)], 0))
        condition = math_ops.logical_and(condition, array_ops.ones_like(then_value, dtype=dtypes.bool))
    return where(condition, then_value, else_value)


def in_train_phase(x: Any, alt: Any, training: Any = None) -> Any:
    """``x`` in the training phase, else ``alt`` (callables are called only when chosen)."""
    if training is None:
        training = backend_state.learning_phase()
    if training is True or (isinstance(training, int) and training == 1):
        return x() if callable(x) else x
    if training is False or (isinstance(training, int) and training == 0):
        return alt() if callable(alt) else alt
    return switch(training, x, alt)


def in_test_phase(x: Any, alt: Any, training: Any = None) -> Any:
    return in_train_phase(alt, x, training=training)


@contextlib.contextmanager
def learning_phase_scope(value: int) -> Iterator[None]:
    """Fixes the learning phase (0 or 1) of the default graph inside the block."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    from flowmesh.core.graph import get_default_graph

    phases = backend_state._LEARNING_PHASES
    graph = get_default_graph()
    previous = phases.get(graph)
    backend_state.set_learning_phase(value)
    try:
        yield
    finally:
        if previous is None:
            phases.pop(graph, None)
        else:
            phases[graph] = previous


def map_fn(fn: Any, elems: Any, name: str | None = None, dtype: Any = None) -> Any:
    from flowmesh.ops.functional_ops import map_fn as map_op

    return map_op(fn, elems, name=name, dtype=dtype)


def foldl(fn: Any, elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    from flowmesh.ops.functional_ops import foldl as fold

    return fold(fn, elems, initializer=initializer, name=name)


def foldr(fn: Any, elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    from flowmesh.ops.functional_ops import foldr as fold

    return fold(fn, elems, initializer=initializer, name=name)


def rnn(step_function: Any, inputs: Any, initial_states: Any, go_backwards: bool = False, mask: Any = None,
        constants: Any = None, unroll: bool = False, input_length: Any = None, time_major: bool = False,
        zero_output_for_mask: bool = False, return_all_outputs: bool = True) -> tuple[Any, Any, list[Any]]:
    """Iterates ``step_function(inputs_t, states + constants) -> (output_t, new_states)``
    over the time axis of ``inputs`` (a ``While`` loop); returns ``(last_output, outputs,
    new_states)``. Where ``mask`` ``[batch, time]`` is false the states are kept and the
    output repeats the previous one (zeros with ``zero_output_for_mask``)."""
    from flowmesh.ops import select_ops
    from flowmesh.rnn.dynamic_rnn import rnn_loop

    x = convert_to_tensor(inputs)
    rank = x.shape.rank
    if not time_major:
        x = array_ops.transpose(x, [1, 0] + list(range(2, rank)))
    keep = None
    if mask is not None:
        keep = cast_ops.cast(mask, dtypes.bool)
        keep = array_ops.transpose(keep, [1, 0]) if not time_major else keep
    if go_backwards:
        x = manip_ops.reverse(x, [0])
        keep = manip_ops.reverse(keep, [0]) if keep is not None else None
    extra = list(constants or [])
    states = tuple(convert_to_tensor(s) for s in initial_states)

    def plain(x_t: Any, state: Any) -> tuple[Any, Any]:
        output, new_states = step_function(x_t, list(state) + extra)
        return output, tuple(new_states)

    def masked(step_inputs: Any, state: Any) -> tuple[Any, Any]:
        x_t, keep_t = step_inputs
        previous, *old = state
        output, new_states = step_function(x_t, list(old) + extra)
        output = select_ops.where(keep_t, output, array_ops.zeros_like(output) if zero_output_for_mask
                                  else previous)
        kept = [select_ops.where(keep_t, new, prev) for new, prev in zip(new_states, old)]
        return output, (output, *kept)

    if keep is None:
        outputs, final = rnn_loop(plain, x, [x], states, None, 32, False)
        final = list(final)
    else:
        probe, _ = step_function(x[0], list(states) + extra)  # the output's shape and dtype
        first = array_ops.zeros_like(probe)
        outputs, final = rnn_loop(masked, (x, keep), [x, keep], (first, *states), None, 32, False)
        final = list(final[1:])
    last = outputs[-1]
    if not return_all_outputs:
        outputs = array_ops.expand_dims(last, 0)
    if not time_major:
        outputs = array_ops.transpose(outputs, [1, 0] + list(range(2, outputs.shape.rank)))
    return last, outputs, final


__all__ = [
    "foldl",
    "foldr",
    "in_test_phase",
    "in_train_phase",
    "learning_phase_scope",
    "map_fn",
    "rnn",
    "switch",
]
