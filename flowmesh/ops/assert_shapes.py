"""``tf.debugging.assert_shapes``: checks the ranks of tensors and the sizes their
dimensions share through symbols, statically where the shapes are known (``ValueError`` at
graph construction) and with ``Assert`` ops otherwise (TensorFlow's algorithm and
messages). A symbol is an int (exact size), ``None`` or ``'.'`` (any size), or any other
hashable (equal sizes); a leading ``...`` or ``'*'`` allows any number of outer dims;
scalars count as shape ``[1]``."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, control_dependencies, name_scope
from flowmesh.ops import array_ops
from flowmesh.ops.check_ops import assert_rank, assert_rank_at_least, assert_rank_in
from flowmesh.ops.control_flow_ops import group
from flowmesh.ops.logging_ops import Assert
from flowmesh.ops.math_ops import equal


def _is_int(size: Any) -> bool:
    if size is None or isinstance(size, Tensor):
        return False
    try:
        int(size)
        return True
    except (ValueError, TypeError):
        return False


def _sizes(x: Tensor) -> tuple[Any, ...]:
    dynamic = array_ops.shape(x)
    rank = x.shape.rank
    if rank == 0:
        return (1,)
    if rank is not None:
        return tuple(int(d) if d is not None else dynamic[i] for i, d in enumerate(x.shape.as_list()))
    return (dynamic,)


def _parse(tensor: Tensor, shape: Any, prefix: str) -> tuple[bool, tuple[Any, ...]]:
    if not hasattr(shape, "__iter__") and not hasattr(shape, "__getitem__"):
        raise ValueError(f"{prefix}Tensor {tensor.name}.  Specified shape must be an iterable.  An iterable has "
                         f"the attribute `__iter__` or `__getitem__`.  Received specified shape: {shape}")
    symbols = tuple(d.value if hasattr(d, "value") and not isinstance(d, int) else d for d in shape)
    for i, s in enumerate(symbols):
        if (s is Ellipsis or s == "*") and i != 0:
            raise ValueError(f"{prefix}Tensor {tensor.name} specified shape index {i}.  Symbol `...` or `*` for a "
                             "variable number of unspecified dimensions is only allowed as the first entry")
    inner = bool(symbols) and (symbols[0] is Ellipsis or symbols[0] == "*")
    symbols = symbols[1:] if inner else symbols
    return inner, symbols or (1,)


def _rank_check(x: Tensor, inner: bool, rank: int, **kw: Any) -> Any:
    if inner:
        return None if rank in (0, 1) else assert_rank_at_least(x, rank, **kw)
    return assert_rank_in(x, [0, 1], **kw) if rank in (0, 1) else assert_rank(x, rank, **kw)


def assert_shapes(shapes: Any, data: Any = None, summarize: int | None = None, message: str | None = None,
                  name: str | None = None) -> Operation:
    """Asserts that ``shapes`` (a list of ``(tensor, shape)`` or a dict) hold.

    Returns:
        An op that raises ``InvalidArgumentError`` when a dynamic check fails.

    Raises:
        ValueError: a static check fails (rank or size), or a malformed shape.
    """
    prefix = f"{message}.  " if message else ""
    items = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    kw = {"data": data, "summarize": summarize, "message": message, "name": name}
    with name_scope(name, "assert_shapes"):
        parsed = []
        for x, shape in items:
            if shape is None:
                continue
            x = convert_to_tensor(x)
            inner, symbols = _parse(x, shape, prefix)
            parsed.append((x, inner, _sizes(x), symbols))
        rank_checks = [c for c in (_rank_check(x, inner, len(sym), **kw) for x, inner, _, sym in parsed)
                       if c is not None]
        size_checks, specified = [], {}
        for x, inner, actual_sizes, symbols in parsed:
            for i, symbol in enumerate(symbols):
                if symbol is None or symbol == ".":
                    continue
                dim = i - len(symbols) if inner else i
                if symbol in specified or _is_int(symbol):
                    if _is_int(symbol):
                        expected, how = int(symbol), "Specified explicitly"
                    else:
                        expected, by, at = specified[symbol]
                        how = f"Specified by tensor {by.name} dimension {at}"
                    with control_dependencies(rank_checks):
                        actual = actual_sizes[dim]
                    if _is_int(actual) and _is_int(expected):
                        if int(actual) != int(expected):
                            raise ValueError(f"{prefix}{how}.  Tensor {x.name} dimension {dim} must have size "
                                             f"{expected}.  Received size {actual}, shape {x.shape}")
                        continue
                    shown = data if data is not None else [
                        prefix, how, f"Tensor {x.name} dimension", dim, "must have size", expected,
                        "Received shape: ", array_ops.shape(x)]
                    size_checks.append(Assert(equal(convert_to_tensor(actual), convert_to_tensor(expected)),
                                              shown, summarize=summarize))
                else:
                    with control_dependencies(rank_checks):
                        specified[symbol] = (actual_sizes[dim], x, dim)
        with control_dependencies(rank_checks):
            return group(*size_checks)
