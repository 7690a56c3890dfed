"""``tf.map_fn``, ``tf.scan``, ``tf.foldl``, ``tf.foldr`` on top of ``tf.while_loop``.

Each function runs one ``While`` loop over the first dimension of ``elems`` (any nested
structure of tensors with equal first dimensions). Row ``i`` is read with ``gather``, so
the gradient loop only collects one row per iteration and the dense gradient of
``elems`` is assembled once, after the loop (as TensorFlow's, it is a dense Tensor). Per-iteration results (``map_fn``, ``scan``)
are the loop's accumulators stacked into one tensor; their gradient flows back into the
loop (see :mod:`flowmesh.ops.while_grad`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph, name_scope
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, gather_ops, math_ops
from flowmesh.ops.array_ops import identity
from flowmesh.ops.constant_op import constant
from flowmesh.ops.while_accumulators import accumulator_stack
from flowmesh.ops.while_grad import while_accumulator
from flowmesh.ops.while_loop import while_loop


class _Elems:
    """The flattened ``elems`` of a functional op and its number of rows."""

    def __init__(self, elems: Any, what: str):
        self.structure = elems
        self.flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
        if not self.flat:
            raise ValueError(f"{what}: elems must contain at least one tensor")
        static = None
        for t in self.flat:
            if t.shape.rank == 0:
                raise ValueError(f"{what}: elements in elems must be 1+ dimensional, got {t.name} "
                                 "with shape []")
            first = t.shape.as_list()[0] if t.shape.rank else None
            if first is not None and static is not None and first != static:
                raise ValueError(
                    f"{what}: all elems must have the same first dimension, got {static} and "
                    f"{first} ({t.name})"
                )
            static = first if first is not None else static
        self.static_n = static

        self.n = constant(static, dtype=dtypes.int32, name="n") if static is not None else \
            array_ops.shape(self.flat[0], out_type=dtypes.int32)[0]

    def rows(self, index: Tensor) -> Any:
        return nest.pack_sequence_as(self.structure, [gather_ops.gather(t, index) for t in self.flat])


def _in_graph(value: Any) -> Tensor:
    """A tensor of the current (function) graph for a returned leaf."""

    tensor = convert_to_tensor(value)
    return tensor if tensor.graph is get_default_graph() else identity(tensor)


def _stack(op: Any, tensor: Tensor, static_n: int | None) -> Tensor:
    stacked = accumulator_stack(while_accumulator(op, tensor), tensor.dtype, tensor.shape)
    stacked.set_shape(TensorShape([static_n]).concatenate(tensor.shape))
    return stacked


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None, parallel_iterations: int | None = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
           name: str | None = None, fn_output_signature: Any = None) -> Any:
    """Applies ``fn`` to each row of ``elems`` and stacks the results (``tf.map_fn``).

    Args:
        fn: called with one row (the structure of ``elems``); returns a nested structure.
        elems: a tensor or nested structure of tensors with the same first dimension.
        dtype: the output dtypes (structure) when they differ from ``elems``; checked
            against what ``fn`` returns.
        parallel_iterations, swap_memory, infer_shape: accepted for compatibility.
        back_prop: ``False`` stops gradients.
        name: name scope (default ``"map"``).
        fn_output_signature: TensorFlow 2 name of ``dtype``.

    Returns:
        The stacked results, in the structure ``fn`` returns.

    Raises:
        TypeError: ``fn`` is not callable or returns other dtypes than ``dtype``.
        ValueError: ``elems`` is empty, scalar, or has mismatching first dimensions.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with name_scope(name, "map"):
        rows = _Elems(elems, "map_fn")
        traced: list[Any] = []

        def body(i: Tensor) -> Tensor:
            result = fn(rows.rows(i))
            traced.append((result, [_in_graph(v) for v in nest.flatten(result)]))
            return i + 1

        from flowmesh.ops.constant_op import constant

        last = while_loop(lambda i: i < rows.n, body, [constant(0, dtype=dtypes.int32)],
                          parallel_iterations=parallel_iterations or 10, back_prop=back_prop,
                          swap_memory=swap_memory)
        result, flat = traced[0]
        _check_dtypes(dtype if dtype is not None else fn_output_signature, flat)
        stacked = [_stack(last.op, t, rows.static_n) for t in flat]
    return nest.pack_sequence_as(result, stacked)


def _check_dtypes(expected: Any, flat: list[Tensor]) -> None:
    if expected is None:
        return
    wanted = [dtypes.as_dtype(getattr(d, "dtype", d)) for d in nest.flatten(expected)]
    got = [t.dtype for t in flat]
    if len(wanted) == len(got) and wanted != got:
        raise TypeError(
            f"map_fn: fn returned dtypes {[d.name for d in got]} but dtype declares "
            f"{[d.name for d in wanted]}"
        )


def _scan_loop(fn: Callable[[Any, Any], Any], rows: _Elems, initializer: Any, reverse: bool,
               loop_kwargs: dict[str, Any]) -> tuple[Any, Any, int]:
    """Runs the carry loop; returns (While op, final carry, index of the first step)."""

    if initializer is None:
        first = rows.n - 1 if reverse else 0
        carry0, start = rows.rows(first), 1
    else:
        carry0, start = nest.map_structure(convert_to_tensor, initializer), 0

    def cond(i: Tensor, carry: Any) -> Tensor:
        return i < rows.n

    def body(i: Tensor, carry: Any) -> tuple[Tensor, Any]:
        index = math_ops.subtract(rows.n - 1, i) if reverse else i
        new_carry = fn(carry, rows.rows(index))
        try:
            nest.assert_same_structure(carry, new_carry, check_types=False)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"fn must return the structure of the accumulator: {exc}") from None
        return i + 1, new_carry

    _, final = while_loop(cond, body, (start, carry0), **loop_kwargs)
    return final, carry0, start


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
         parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
         infer_shape: bool = True, reverse: bool = False, name: str | None = None) -> Any:
    """Cumulative ``a = fn(a, row)`` over the rows of ``elems``; stacks every ``a``
    (``tf.scan``).

    Args:
        fn: ``fn(accumulator, row) -> new accumulator`` (same structure).
        elems: a tensor or nested structure of tensors with the same first dimension.
        initializer: the first accumulator; by default row 0 (row ``n-1`` when reversed),
            which is then also the first (last) output.
        reverse: scan from the last row to the first (outputs keep the rows' order).
        parallel_iterations, swap_memory, infer_shape: accepted for compatibility.
        back_prop: ``False`` stops gradients.
        name: name scope (default ``"scan"``).

    Returns:
        The stacked accumulators, in the structure of ``initializer`` (or ``elems``).
    """

    if not callable(fn):
        raise TypeError("fn must be callable.")
    with name_scope(name, "scan"):
        rows = _Elems(elems, "scan")
        loop = {"parallel_iterations": parallel_iterations, "back_prop": back_prop,
                "swap_memory": swap_memory, "return_same_structure": True}
        final, carry0, start = _scan_loop(fn, rows, initializer, reverse, loop)
        op = nest.flatten(final)[0].op
        num_vars = len(nest.flatten(carry0))
        body_out = op.attrs["body"].outputs[2:2 + num_vars]
        stacked = [_stack(op, t, None) for t in body_out]
        if reverse:
            stacked = [s[::-1] for s in stacked]
        if start:
            firsts = [array_ops.expand_dims(c, 0) for c in nest.flatten(carry0)]
            pairs = zip(stacked, firsts)
            stacked = [array_ops.concat([s, f] if reverse else [f, s], 0) for s, f in pairs]
        for s in stacked:
            s.set_shape(TensorShape([rows.static_n]).concatenate(s.shape[1:]))
    return nest.pack_sequence_as(carry0, stacked)


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """``a = fn(a, row)`` over the rows of ``elems`` from first to last; returns the final
    ``a`` (``tf.foldl``). Without ``initializer`` the first row starts the fold."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with name_scope(name, "foldl"):
        rows = _Elems(elems, "foldl")
        loop = {"parallel_iterations": parallel_iterations, "back_prop": back_prop,
                "swap_memory": swap_memory, "return_same_structure": True}
        final, _, _ = _scan_loop(fn, rows, initializer, False, loop)
    return final


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """Like :func:`foldl` from the last row to the first (``tf.foldr``)."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with name_scope(name, "foldr"):
        rows = _Elems(elems, "foldr")
        loop = {"parallel_iterations": parallel_iterations, "back_prop": back_prop,
                "swap_memory": swap_memory, "return_same_structure": True}
        final, _, _ = _scan_loop(fn, rows, initializer, True, loop)
    return final


def vectorized_map(fn: Callable[[Any], Any], elems: Any, fallback_to_while_loop: bool = True,
                   warn: bool = True) -> Any:
    """``fn`` applied to every row of ``elems``, results stacked (``tf.vectorized_map``).

    TensorFlow first tries to vectorize ``fn`` (pfor) and falls back to a ``while_loop``;
    flowmesh always runs the loop (:func:`map_fn`), which gives the same values and
    gradients. ``fallback_to_while_loop`` and ``warn`` are accepted for compatibility.
    """
    return map_fn(fn, elems, name="vectorized_map")
