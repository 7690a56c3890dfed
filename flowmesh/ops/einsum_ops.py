"""``tf.einsum``: the ``Einsum`` op, its equation parser, shape rule and gradient.

Equations use one letter per dimension, ``->`` for the output (implicit mode sorts the
labels that appear once) and ``...`` for broadcast dimensions. When the operand ranks
are known the equation is normalized at graph construction: ``...`` becomes explicit
labels (right-aligned, broadcast like NumPy), so the kernel and the gradient never deal
with ellipses. The gradient of operand ``i`` is another einsum of the output gradient
with the other operands, broadcast back over labels only that operand has and summed
over dimensions it broadcast (size 1).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, reduction_ops
from flowmesh.ops._builders import FLOATS_COMPLEX, INDEX_TYPES, check_dtype, make_tensor


def _split(equation: str) -> tuple[list[str], str | None]:
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
        if "->" in out:
            raise InvalidArgumentError(f"Einsum equation '{equation}' has more than one '->'")
    else:
        lhs, out = eq, None
    return lhs.split(","), out


def _check_labels(equation: str, terms: Sequence[str]) -> None:
    for term in terms:
        body = term.replace("...", "", 1)
        bad = [c for c in body if c not in string.ascii_letters]
        if bad or "." in body:
            raise InvalidArgumentError(
                f"Einsum equation '{equation}': invalid subscript '{term}'; use letters and at "
                "most one '...' per operand")


def normalize_equation(equation: str, ranks: Sequence[int | None]) -> str:
    """The equation with implicit output made explicit and ``...`` replaced by letters.

    Raises:
        InvalidArgumentError: wrong number of operands, bad subscripts, or a subscript whose
            length does not match its operand's rank.
    """
    inputs, output = _split(equation)
    if len(inputs) != len(ranks):
        raise InvalidArgumentError(f"Einsum equation '{equation}' has {len(inputs)} operand "
                                   f"subscripts but {len(ranks)} operands were given")
    _check_labels(equation, inputs + ([output] if output is not None else []))
    used = set("".join(inputs) + (output or ""))
    spare = [c for c in string.ascii_letters if c not in used]
    ellipsis_ranks = []
    for term, rank in zip(inputs, ranks):
        labels = len(term.replace("...", ""))
        if rank is None:
            if "..." in term:
                return equation if output is not None else _implicit(equation, inputs)
            ellipsis_ranks.append(0)
            continue
        if ("..." not in term and labels != rank) or ("..." in term and labels > rank):
            raise InvalidArgumentError(f"Einsum equation '{equation}': subscript '{term}' has "
                                       f"{labels} labels but its operand has rank {rank}")
        ellipsis_ranks.append(rank - labels if "..." in term else 0)
    width = max(ellipsis_ranks, default=0)
    batch = "".join(spare[:width])
    inputs = [t.replace("...", batch[width - n:]) for t, n in zip(inputs, ellipsis_ranks)]
    if output is None:
        counts = "".join(inputs)
        output = batch + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c not in batch))
    else:
        output = output.replace("...", batch)
    missing = [c for c in output if c not in "".join(inputs)]
    if missing or len(set(output)) != len(output):
        raise InvalidArgumentError(f"Einsum equation '{equation}': output labels {output!r} must be "
                                   "distinct and appear in some input")
    return ",".join(inputs) + "->" + output


def _implicit(equation: str, inputs: list[str]) -> str:
    counts = "".join(t.replace("...", "") for t in inputs)
    return equation + "->..." + "".join(sorted(c for c in set(counts) if counts.count(c) == 1))


def _einsum_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    equation = attrs["equation"]
    dtype = inputs[0].dtype
    for t in inputs[1:]:
        if t.dtype != dtype:
            raise TypeError(f"Einsum operands must share a dtype: {dtype.name} vs {t.dtype.name}")
    if "..." in equation or any(t.shape.rank is None for t in inputs):
        return [(dtype, unknown_shape())]
    terms, output = _split(equation)
    sizes: dict[str, int | None] = {}
    for term, t in zip(terms, inputs):
        for label, dim in zip(term, t.shape.as_list()):
            known = sizes.get(label)
            if known is None or known == 1:
                sizes[label] = dim if known is None or dim not in (None, 1) else known
            elif dim not in (None, 1, known):
                raise InvalidArgumentError(
                    f"Einsum equation '{equation}': label '{label}' has sizes {known} and {dim}")
    return [(dtype, TensorShape([sizes[c] for c in output or ""]))]


def _einsum_grad(op: Any, grad: Tensor) -> list:
    equation = op.attrs["equation"]
    if "..." in equation:
        raise LookupError(f"The gradient of Einsum '{op.name}' needs operands of known rank "
                          f"(equation '{equation}')")
    terms, output = _split(equation)
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        if len(set(term)) != len(term):
            raise LookupError(f"The gradient of Einsum '{op.name}' does not support repeated "
                              f"labels within one operand ('{term}' in '{equation}')")
        others = [t for j, t in enumerate(terms) if j != i]
        reachable = set(output or "").union(*others) if others else set(output or "")
        kept = "".join(c for c in term if c in reachable)
        operands = [grad] + [t for j, t in enumerate(op.inputs) if j != i]
        g = einsum(f"{','.join([output or ''] + others)}->{kept}", *operands)
        if kept != term:  # labels only this operand has: the gradient is constant along them
            g = array_ops.reshape(g, _expanded_shape(g, term, kept))
            g = reduction_ops.broadcast_to(g, array_ops.shape(x))
        grads.append(reduction_ops.reduce_to_shape_of(g, x))
    return grads


def _expanded_shape(g: Tensor, term: str, kept: str) -> Any:
    """``g``'s shape with 1s inserted for the labels of ``term`` missing from ``kept``."""

    g_shape = array_ops.shape(g)
    return array_ops.stack([g_shape[kept.index(c)] if c in kept else 1 for c in term])


register_op("Einsum", _einsum_shape, grad=_einsum_grad)


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """Tensor contraction in Einstein notation (``tf.einsum``).

    Args:
        equation: e.g. ``"ij,jk->ik"``, ``"bij,bjk->bik"``, ``"...ij,...jk"``, ``"ii->i"``.
        *inputs: the operands (one dtype).
        name: op name (keyword only).

    Returns:
        The contraction.

    Raises:
        InvalidArgumentError: malformed equation, subscript/rank mismatch or label sizes
            that disagree.
        TypeError: operands of different or non-float/int dtypes.
    """
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"einsum got unexpected keyword arguments {sorted(kwargs)}")
    if not isinstance(equation, str):
        raise TypeError(f"einsum equation must be a string, got {type(equation).__name__}")
    tensors = [convert_to_tensor(t) for t in inputs]
    if not tensors:
        raise InvalidArgumentError("einsum needs at least one operand")
    check_dtype("Einsum", tensors[0], FLOATS_COMPLEX + INDEX_TYPES, "inputs")
    normalized = normalize_equation(equation, [t.shape.rank for t in tensors])
    return make_tensor("Einsum", tensors, {"equation": normalized, "N": len(tensors)},
                       name=name or "einsum")
