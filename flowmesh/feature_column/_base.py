"""The feature-column base classes and the per-call transformation cache.

A *dense* column turns features into a float ``[batch, n]`` tensor (``input_layer``); a
*categorical* column turns them into :class:`CategoricalIds`: ids ``[batch, n]`` (int64)
with a boolean mask of the present entries and optional weights. TensorFlow carries
categorical values as ``SparseTensor``s; flowmesh pads them densely and masks, treating
the same values as missing that TensorFlow drops when it converts a dense input to sparse
(``''`` for strings, ``-1`` for integers). A ``SparseTensor`` input (``VarLenFeature``) is
padded, and its own presence mask kept: every value it holds counts, as in TensorFlow.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops


class CategoricalIds(NamedTuple):
    """Ids ``[batch, n]`` (int64), ``mask`` of the present ones, optional float ``weights``.

    A present id may be -1 (out of vocabulary without OOV buckets): crosses hash it, as
    TensorFlow's do, while lookups (embedding, indicator, linear) skip it."""

    ids: Tensor
    mask: Tensor
    weights: Tensor | None = None


class FeatureColumn:
    """Base of every column: a ``name`` and the Example spec of the raw features it reads."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def parse_example_spec(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def parents(self) -> list[Any]:
        return []

    @property
    def is_sequence(self) -> bool:
        """True for sequence columns (``sequence_input_layer``'s, refused by ``input_layer``)."""
        return False

    @property
    def var_scope_name(self) -> str:
        """The variable scope ``input_layer``/``linear_model`` open for the column (its name;
        a shared embedding's collection name)."""
        return self.name

    def __lt__(self, other: FeatureColumn) -> bool:
        return self.name < other.name


class DenseColumn(FeatureColumn):
    """A column with a dense float representation of ``variable_shape`` per example."""

    @property
    def variable_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def get_dense_tensor(self, builder: Builder, trainable: bool = True) -> Tensor:
        raise NotImplementedError


class CategoricalColumn(FeatureColumn):
    """A column of ids in ``[0, num_buckets)``."""

    @property
    def num_buckets(self) -> int:
        raise NotImplementedError

    def get_ids(self, builder: Builder) -> CategoricalIds:
        raise NotImplementedError


def num_elements(shape: tuple[int, ...]) -> int:
    out = 1
    for d in shape:
        out *= int(d)
    return out


class Builder:
    """Reads raw features and caches each column's transformation for one model call
    (TensorFlow's ``_LazyBuilder``): a column used twice is transformed once."""

    def __init__(self, features: dict[Any, Any], mode: str = ""):
        if not isinstance(features, dict):
            raise TypeError(f"features must be a dict of feature name -> tensor, got {type(features).__name__}")
        self._features = features
        self._mode = mode
        self._cache: dict[Any, Any] = {}

    def raw(self, key: str, column: str) -> Tensor:
        """The feature ``key`` as a tensor of rank >= 2 (a rank-1 input becomes ``[batch, 1]``).

        Raises:
            InvalidArgumentError: ``key`` is not among the features (names the column).
        """
        if key not in self._features:
            where = f" in mode {self._mode}" if self._mode else ""
            raise InvalidArgumentError(
                f"feature column '{column}' needs the feature '{key}', which is missing from the "
                f"input features{where} (got keys {sorted(map(str, self._features))}); return it "
                "from the input_fn or remove the column")
        cached = self._cache.get(("raw", key))
        if cached is None:
            value = self._features[key]
            if _is_sparse(value):
                cached, self._cache[("mask", key)] = _sparse_to_padded(value)
            else:
                cached = _as_dense(value, key)
            if cached.shape.ndims == 1:
                cached = array_ops.reshape(cached, [-1, 1])
            self._cache[("raw", key)] = cached
        return cached

    def sparse_mask(self, key: str, column: str) -> Tensor | None:
        """Where the SparseTensor feature ``key`` has values (None for a dense feature)."""
        self.raw(key, column)
        return self._cache.get(("mask", key))

    def get(self, column: Any, make: Any) -> Any:
        """``make()`` once per column and call."""
        if column not in self._cache:
            self._cache[column] = make()
        return self._cache[column]


def _is_sparse(value: Any) -> bool:
    return all(hasattr(value, a) for a in ("indices", "values", "dense_shape"))


def _sparse_to_padded(value: Any) -> tuple[Tensor, Tensor]:
    """A SparseTensor as ``[batch, n]`` values (padded with ``''``/``-1``/0) and the mask of
    its present entries (TensorFlow keeps every value of a sparse input)."""
    from flowmesh.core.sparse_tensor import SparseTensor
    from flowmesh.ops.sparse_ops import to_dense

    sp = value if isinstance(value, SparseTensor) else SparseTensor.from_value(value)
    dtype = sp.values.dtype
    pad: Any = b"" if dtype == dtypes.string else (-1 if dtype.is_integer else 0)
    dense = to_dense(sp, default_value=pad)
    present = SparseTensor(sp.indices, array_ops.fill(array_ops.shape(sp.indices)[:1], True), sp.dense_shape)
    return dense, to_dense(present, default_value=False)


def _as_dense(value: Any, key: str) -> Tensor:
    t = convert_to_tensor(value)
    if t.shape.ndims == 0:
        raise InvalidArgumentError(f"feature '{key}' must have a batch dimension, got a scalar")
    return t


def expand_last(x: Tensor) -> Tensor:
    """``x`` with a trailing dimension of 1 (a reshape, so string tensors work too)."""
    return array_ops.reshape(x, array_ops.concat([array_ops.shape(x), [1]], 0))


def present_mask(values: Tensor) -> Tensor:
    """True where ``values`` holds a value (not ``''`` / ``-1``, TensorFlow's ignore values)."""
    if values.dtype == dtypes.string:
        return math_ops.not_equal(values, "")
    return math_ops.not_equal(values, cast_ops.cast(-1, values.dtype))


def categorical_input(builder: Builder, key: str, column: str, dtype: Any) -> tuple[Tensor, Tensor]:
    """The raw feature ``key`` as ``[batch, n]`` values and presence mask, checked against
    the column's ``dtype`` (string vs integer)."""
    x = builder.raw(key, column)
    want_string = dtypes.as_dtype(dtype) == dtypes.string
    if (x.dtype == dtypes.string) != want_string:
        raise InvalidArgumentError(
            f"feature column '{column}' expects feature '{key}' of dtype "
            f"{dtypes.as_dtype(dtype).name}, got {x.dtype.name}")
    if x.shape.ndims != 2:
        x = array_ops.reshape(x, [array_ops.shape(x)[0], -1])
    if not want_string and x.dtype != dtypes.int64:
        x = cast_ops.cast(x, dtypes.int64)
    mask = builder.sparse_mask(key, column)
    if mask is not None:
        return x, array_ops.reshape(mask, array_ops.shape(x))
    return x, present_mask(x)
