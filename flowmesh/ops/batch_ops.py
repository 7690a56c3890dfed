"""``tf.nondifferentiable_batch_function``: batch the calls of concurrent steps into one run
of a function (TensorFlow's ``BatchFunction`` op, used to serve a model to many clients).

The decorated function is traced into a function graph taking ``[batch, ...]`` arguments.
Each call builds one ``BatchFunction`` op; at run time the calls that arrive at that op
from concurrently running steps (threads calling ``Session.run``) within
``batch_timeout_micros`` are concatenated along axis 0 (up to ``max_batch_size`` rows,
padded to the next of ``allowed_batch_sizes``), the function runs once on the batch, and
each caller gets its own rows of the results (``kernels/batch_ops.py``). The op has no
gradient, as the name says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.function import FuncGraph
from flowmesh.core.graph import get_default_graph, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import _structure as nest
from flowmesh.ops.function_call import create_function_op, function_op_shape, function_output

register_op("BatchFunction", function_op_shape, not_differentiable=True, stateful=True)


def nondifferentiable_batch_function(num_batch_threads: int, max_batch_size: int,
                                     batch_timeout_micros: int,
                                     allowed_batch_sizes: Sequence[int] | None = None,
                                     max_enqueued_batches: int = 10, autograph: bool = True,
                                     enable_large_batch_splitting: bool = True
                                     ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator batching a function's calls across concurrent steps.

    Args:
        num_batch_threads: accepted for compatibility (a batch runs in the thread of the
            step that opened it).
        max_batch_size: the most rows one run of the function gets.
        batch_timeout_micros: how long the first call of a batch waits for more.
        allowed_batch_sizes: batch sizes the function may see (increasing, the last one
            ``max_batch_size``); a batch is padded to the next one.
        max_enqueued_batches: accepted for compatibility.
        autograph: accepted for compatibility (the function is traced as Python).
        enable_large_batch_splitting: a call with more rows than ``max_batch_size`` is
            run in pieces (otherwise it is an error).

    Returns:
        ``decorator(fn)``: ``fn`` takes and returns tensors whose first axis is the batch.

    Raises:
        ValueError: bad ``max_batch_size`` or ``allowed_batch_sizes``.
    """
    _check_sizes(max_batch_size, allowed_batch_sizes)
    attrs = {"num_batch_threads": int(num_batch_threads), "max_batch_size": int(max_batch_size),
             "batch_timeout_micros": int(batch_timeout_micros),
             "allowed_batch_sizes": [int(s) for s in allowed_batch_sizes or []],
             "max_enqueued_batches": int(max_enqueued_batches),
             "enable_large_batch_splitting": bool(enable_large_batch_splitting)}

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        def decorated(*args: Any) -> Any:
            return _batch_call(fn, attrs, args)

        decorated.__name__ = getattr(fn, "__name__", "batch_function")
        decorated.__doc__ = fn.__doc__
        return decorated

    return decorator


def _check_sizes(max_batch_size: int, allowed: Sequence[int] | None) -> None:
    if max_batch_size < 1:
        raise ValueError(f"max_batch_size must be positive, got {max_batch_size}")
    if allowed:
        sizes = [int(s) for s in allowed]
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise ValueError(f"allowed_batch_sizes entries must be monotonically increasing, "
                             f"got {sizes}")
        if sizes[-1] != max_batch_size:
            raise ValueError(f"final entry in allowed_batch_sizes must equal max_batch_size "
                             f"({sizes[-1]} vs. {max_batch_size})")


def _batch_call(fn: Callable[..., Any], attrs: dict[str, Any], args: Sequence[Any]) -> Any:
    tensors = [convert_to_tensor(a) for a in args]
    for t in tensors:
        if t.shape.rank == 0:
            raise ValueError(f"batch_function arguments need a batch (first) axis; {t.name} is "
                             "a scalar")
    graph = get_default_graph()
    name = getattr(fn, "__name__", "batch_function")
    with name_scope(None, "batch"):
        body = FuncGraph(f"{name}_batched", graph)
        with body.as_default():
            params = [body.add_input(t.dtype, TensorShape([None]).concatenate(t.shape[1:]),
                                     "batch_arg") for t in tensors]
            result = fn(*params)
            flat = [function_output(body, v, name) for v in nest.flatten(result)]
        for out in flat:
            if out.shape.rank == 0:
                raise ValueError(f"{name} must return tensors with a batch (first) axis; "
                                 f"{out.name} is a scalar")
        body.outputs = flat
        all_attrs = dict(attrs, f=body, Tout=[t.dtype for t in flat],
                         output_shapes=[t.shape for t in flat], shared_name=name)
        op = create_function_op(graph, "BatchFunction", tensors + body.external_captures,
                                [body], all_attrs, "BatchFunction")
    return nest.pack_sequence_as(result, list(op.outputs))


__all__ = ["nondifferentiable_batch_function"]
