"""``tf.strings``: string tensors (NumPy object arrays of ``bytes`` at run time).

``join``, ``reduce_join``, ``length``, ``substr``, ``lower``/``upper``/``strip``,
``regex_full_match``/``regex_replace`` (Python ``re`` standing in for RE2 on the common
subset), ``to_number`` and ``as_string``. None of them is differentiable. Formatting and
errors follow TensorFlow (``as_string(3.5) == b'3.500000'``; a bad number raises
``StringToNumberOp could not correctly convert string: ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, broadcast_shapes, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import INDEX_TYPES, check_dtype, make_tensor


def _strings(value: Any, name: str) -> Tensor:
    t = convert_to_tensor(value, dtype=dtypes.string, name=name)
    return t


def _same(dtype: dtypes.DType):
    return lambda inputs, attrs: [(dtype, inputs[0].shape)]


def _join_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    shape = TensorShape([])
    for i, t in enumerate(inputs):
        if t.shape.rank == 0:
            continue  # scalars broadcast; other inputs must share one shape (as in TensorFlow)
        if shape.rank == 0:
            shape = t.shape
        elif not shape.is_compatible_with(t.shape):
            raise InvalidArgumentError(f"StringJoin inputs must be scalars or of one shape, got {shape} "
                                       f"and inputs[{i}] {t.shape}")
        else:
            shape = shape.merge_with(t.shape)
    return [(dtypes.string, shape)]


def _reduce_join_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    x = inputs[0]
    axes, keep = attrs["axis"], attrs["keep_dims"]
    if x.shape.rank is None:
        return [(dtypes.string, unknown_shape())]
    rank = x.shape.rank
    if axes is None:
        axes = list(range(rank))
    for a in axes:
        if not -rank <= a < max(rank, 1):
            raise InvalidArgumentError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
    norm = {a % max(rank, 1) for a in axes}
    dims = [1 if i in norm else d for i, d in enumerate(x.shape.as_list())] if keep else \
        [d for i, d in enumerate(x.shape.as_list()) if i not in norm]
    return [(dtypes.string, TensorShape(dims))]


register_op("StringJoin", _join_shape, not_differentiable=True)
register_op("ReduceJoin", _reduce_join_shape, not_differentiable=True)
register_op("StringLength", _same(dtypes.int32), not_differentiable=True)
register_op("Substr", lambda inputs, attrs: [(dtypes.string, broadcast_shapes(
    broadcast_shapes(inputs[0].shape, inputs[1].shape), inputs[2].shape))], not_differentiable=True)
register_op("StringLower", _same(dtypes.string), not_differentiable=True)
register_op("StringUpper", _same(dtypes.string), not_differentiable=True)
register_op("StringStrip", _same(dtypes.string), not_differentiable=True)
register_op("RegexFullMatch", _same(dtypes.bool), not_differentiable=True)
register_op("RegexReplace", _same(dtypes.string), not_differentiable=True)
register_op("StringToNumber", lambda inputs, attrs: [(attrs["out_type"], inputs[0].shape)],
            not_differentiable=True)
register_op("AsString", _same(dtypes.string), not_differentiable=True)


def join(inputs: Sequence[Any], separator: str = "", name: str | None = None) -> Tensor:
    """Elementwise concatenation of string tensors (of one shape, or scalars) with ``separator``."""
    tensors = [_strings(t, f"inputs_{i}") for i, t in enumerate(inputs)]
    if not tensors:
        raise ValueError("tf.strings.join needs at least one input")
    return make_tensor("StringJoin", tensors, {"separator": str(separator), "N": len(tensors)},
                       name=name or "StringJoin")


def reduce_join(inputs: Any, axis: Any = None, keep_dims: Any = None, separator: str = "",
                name: str | None = None, reduction_indices: Any = None, keepdims: Any = None) -> Tensor:
    """Joins the strings along ``axis`` (all axes when None), in order."""
    x = _strings(inputs, "inputs")
    axis = reduction_indices if axis is None else axis
    keep = bool(keepdims) if keepdims is not None else bool(keep_dims)
    axes = None if axis is None else ([int(axis)] if isinstance(axis, int) else [int(a) for a in axis])
    return make_tensor("ReduceJoin", [x], {"axis": axes, "keep_dims": keep, "separator": str(separator)},
                       name=name or "ReduceJoin")


def length(input: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:  # noqa: A002
    """The length of each string in bytes (``unit='BYTE'``) or characters (``'UTF8_CHAR'``)."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return make_tensor("StringLength", [_strings(input, "input")], {"unit": unit}, name=name or "StringLength")


def substr(input: Any, pos: Any, len: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:  # noqa: A002
    """``input[pos:pos + len]`` per element (byte offsets).

    Raises:
        InvalidArgumentError: ``pos`` beyond the end of a string (at run time).
    """
    if unit != "BYTE":
        raise ValueError("only unit='BYTE' is supported by flowmesh's substr")
    x = _strings(input, "input")
    p = convert_to_tensor(pos, name="pos") if not isinstance(pos, Tensor) else pos
    n = convert_to_tensor(len, dtype=p.dtype, name="len") if not isinstance(len, Tensor) else len
    check_dtype("Substr", p, INDEX_TYPES, "pos")
    return make_tensor("Substr", [x, p, n], name=name or "Substr")


def _unary(op_type: str, default: str):
    def op_fn(input: Any, encoding: str = "", name: str | None = None) -> Tensor:  # noqa: A002
        return make_tensor(op_type, [_strings(input, "input")], name=name or default)

    op_fn.__name__ = op_fn.__qualname__ = default
    op_fn.__doc__ = f"Elementwise ``{op_type}`` of a string tensor."
    return op_fn


lower = _unary("StringLower", "lower")
upper = _unary("StringUpper", "upper")


def strip(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Removes leading and trailing whitespace."""
    return make_tensor("StringStrip", [_strings(input, "input")], name=name or "StringStrip")


def regex_full_match(input: Any, pattern: str, name: str | None = None) -> Tensor:  # noqa: A002
    """True where the whole string matches ``pattern``."""
    return make_tensor("RegexFullMatch", [_strings(input, "input")], {"pattern": str(pattern)},
                       name=name or "RegexFullMatch")


def regex_replace(input: Any, pattern: str, rewrite: str, replace_global: bool = True,  # noqa: A002
                  name: str | None = None) -> Tensor:
    """Replaces matches of ``pattern`` with ``rewrite`` (``\\1`` refers to groups)."""
    return make_tensor("RegexReplace", [_strings(input, "input")],
                       {"pattern": str(pattern), "rewrite": str(rewrite),
                        "replace_global": bool(replace_global)}, name=name or "RegexReplace")


def to_number(string_tensor: Any = None, out_type: Any = dtypes.float32, name: str | None = None,
              input: Any = None) -> Tensor:  # noqa: A002
    """Parses each string as a number of ``out_type`` (float32/64, int32/64).

    Raises:
        InvalidArgumentError: a string is not a number (at run time, naming the node).
    """
    string_tensor = input if string_tensor is None else string_tensor
    target = dtypes.as_dtype(out_type)
    if target not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(f"to_number out_type must be float32, float64, int32 or int64, got {target.name}")
    return make_tensor("StringToNumber", [_strings(string_tensor, "string_tensor")], {"out_type": target},
                       name=name or "StringToNumber")


def as_string(input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False,  # noqa: A002
              width: int = -1, fill: str = "", name: str | None = None) -> Tensor:
    """Formats numbers/bools as strings (floats as ``%f`` by default, like TensorFlow)."""
    x = convert_to_tensor(input, name="input")
    if x.dtype == dtypes.string:
        raise TypeError("as_string input must be numeric or bool, got string")
    attrs = {"precision": int(precision), "scientific": bool(scientific), "shortest": bool(shortest),
             "width": int(width), "fill": str(fill)}
    return make_tensor("AsString", [x], attrs, name=name or "AsString")


string_join = join
string_to_number = to_number


register_op("StringToHashBucketFast", _same(dtypes.int64), not_differentiable=True)


def string_to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> Tensor:  # noqa: A002
    """``Fingerprint64(s) % num_buckets`` per string (FarmHash, TensorFlow's buckets exactly)."""
    if int(num_buckets) < 1:
        raise InvalidArgumentError(f"string_to_hash_bucket_fast: num_buckets must be >= 1, got {num_buckets}")
    return make_tensor("StringToHashBucketFast", [_strings(input, "input")],
                       {"num_buckets": int(num_buckets)}, name=name or "StringToHashBucketFast")


to_hash_bucket_fast = string_to_hash_bucket_fast
