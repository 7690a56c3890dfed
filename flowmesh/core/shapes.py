"""Static tensor shapes: :class:`Dimension` and :class:`TensorShape`.

A shape may be unknown (``TensorShape(None)``, unknown rank) or have unknown
dimensions (``None``). Indexing a shape returns a :class:`Dimension`, as in
TensorFlow 1.x, which behaves like an ``int`` (or ``None``) in arithmetic and
comparisons and exposes ``.value``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flowmesh.errors import InvalidArgumentError

_V2_DIMENSIONS = [False]  # tf.enable_v2_tensorshape(): shape[i] gives int | None


def set_v2_dimensions(enabled: bool) -> None:
    """Whether indexing/iterating a ``TensorShape`` gives ints (``tf.enable_v2_tensorshape``)
    or ``Dimension`` objects (TensorFlow 1.x, the default)."""
    _V2_DIMENSIONS[0] = bool(enabled)


class Dimension:
    """One dimension of a shape; ``value`` is an ``int`` or ``None`` (unknown)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any):
        if isinstance(value, Dimension):
            value = value.value
        if value is None:
            self._value = None
            return
        if isinstance(value, float) and not value.is_integer():
            raise TypeError(f"Dimension value must be integer or None, got {value!r}")
        try:
            int_value = int(value.__index__() if hasattr(value, "__index__") else value)
        except (TypeError, ValueError):
            raise TypeError(f"Dimension value must be integer or None, got {value!r}") from None
        if int_value < 0:
            raise ValueError(f"Dimension {int_value} must be >= 0")
        self._value = int_value

    @property
    def value(self) -> int | None:
        return self._value

    def __repr__(self) -> str:
        return f"Dimension({self._value!r})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to an int")
        return self._value

    __index__ = __int__

    def __hash__(self) -> int:
        return hash(self._value)

    def __eq__(self, other: object) -> Any:
        try:
            other_value = as_dimension(other).value
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other_value is None:
            return None
        return self._value == other_value

    def __ne__(self, other: object) -> Any:
        equal = self.__eq__(other)
        return equal if equal is None or equal is NotImplemented else not equal

    def __bool__(self) -> bool:
        return bool(self._value)

    def is_compatible_with(self, other: Any) -> bool:
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")

    def merge_with(self, other: Any) -> Dimension:
        other = as_dimension(other)
        self.assert_is_compatible_with(other)
        return self if self._value is not None else other

    def _binary(self, other: Any, fn: Any) -> Dimension:
        try:
            other_value = as_dimension(other).value
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other_value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other_value))

    def __add__(self, other: Any) -> Dimension:
        return self._binary(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Dimension:
        return self._binary(other, lambda a, b: a - b)

    def __rsub__(self, other: Any) -> Dimension:
        return self._binary(other, lambda a, b: b - a)

    def __mul__(self, other: Any) -> Dimension:
        return self._binary(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Dimension:
        return self._binary(other, lambda a, b: a // b)

    def __mod__(self, other: Any) -> Dimension:
        return self._binary(other, lambda a, b: a % b)

    def _compare(self, other: Any, fn: Any) -> bool | None:
        other_value = as_dimension(other).value
        if self._value is None or other_value is None:
            return None
        return fn(self._value, other_value)

    def __lt__(self, other: Any) -> bool | None:
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other: Any) -> bool | None:
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other: Any) -> bool | None:
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other: Any) -> bool | None:
        return self._compare(other, lambda a, b: a >= b)

    def __reduce__(self):
        return (Dimension, (self._value,))


def as_dimension(value: Any) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(value: Any) -> int | None:
    """The ``int``/``None`` value of a Dimension or a plain value."""
    return value.value if isinstance(value, Dimension) else value


class TensorShape:
    """The static shape of a tensor, possibly partially known."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Any):
        if isinstance(dims, TensorShape):
            self._dims: tuple[int | None, ...] | None = dims._dims
        elif dims is None:
            self._dims = None
        elif isinstance(dims, (int, Dimension)) or hasattr(dims, "__index__"):
            self._dims = (as_dimension(dims).value,)
        else:
            self._dims = tuple(as_dimension(d).value for d in dims)

    # --- introspection -----------------------------------------------------------------
    @property
    def rank(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self) -> tuple[int | None, ...] | None:
        """The dims as a tuple of ints/None, or None when the rank is unknown."""
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        total = 1
        for d in self._dims:  # type: ignore[union-attr]
            total *= d  # type: ignore[operator]
        return total

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self) -> Iterator[Any]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        if _V2_DIMENSIONS[0]:
            return iter(self._dims)
        return iter([Dimension(d) for d in self._dims])

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            if isinstance(key, slice):
                return unknown_shape()
            return None if _V2_DIMENSIONS[0] else Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key] if _V2_DIMENSIONS[0] else Dimension(self._dims[key])

    # --- compatibility -----------------------------------------------------------------
    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise InvalidArgumentError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise InvalidArgumentError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def with_rank(self, rank: int) -> TensorShape:
        if self._dims is None:
            return TensorShape([None] * rank)
        if len(self._dims) != rank:
            raise InvalidArgumentError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) < rank:
            raise InvalidArgumentError(f"Shape {self} must have rank at least {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        self.with_rank(rank)

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def concatenate(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    # --- dunder ------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)!r})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"

    def __reduce__(self):
        return (TensorShape, (self._dims,))


def as_shape(shape: Any) -> TensorShape:
    """Converts a list/tuple/None/TensorShape to a TensorShape."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])


def format_dims(dims: Iterable[int | None] | None) -> str:
    """TensorFlow's ``[?,784]`` format for error messages."""
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """The NumPy broadcast of two static shapes.

    Raises:
        InvalidArgumentError: if the shapes cannot broadcast.
    """
    if a.rank is None or b.rank is None:
        return unknown_shape()
    x, y = a.as_list(), b.as_list()
    n = max(len(x), len(y))
    x = [1] * (n - len(x)) + x
    y = [1] * (n - len(y)) + y
    out: list[int | None] = []
    for dx, dy in zip(x, y):
        if dx == 1:
            out.append(dy)
        elif dy == 1:
            out.append(dx)
        elif dx is None and dy is None:
            out.append(None)
        elif dx is None or dy is None:
            out.append(dx if dx is not None else dy)
        elif dx == dy:
            out.append(dx)
        else:
            raise InvalidArgumentError(
                f"Incompatible shapes for broadcasting: {format_dims(a.as_list())} and "
                f"{format_dims(b.as_list())}"
            )
    return TensorShape(out)
