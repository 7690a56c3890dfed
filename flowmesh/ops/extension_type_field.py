"""The typed fields of an ``ExtensionType``: which annotations are allowed, and converting
and checking a value against one (``tf.Tensor`` fields convert with ``convert_to_tensor``,
``Mapping`` fields become read-only, tuples are checked item by item).

Supported annotations, as TensorFlow's: ``int float str bool None``, ``tf.Tensor``,
``tf.RaggedTensor``, ``tf.SparseTensor``, other ExtensionTypes, ``tf.TensorShape``,
``tf.DType``, ``typing.Union``/``Optional``, ``typing.Tuple[X, ...]``/``tuple[X, Y]`` and
``typing.Mapping[K, V]``.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from dataclasses import dataclass
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape, as_shape

NO_DEFAULT = object()
_SCALARS = (int, float, str, bool)


@dataclass(frozen=True)
class Field:
    """One field: its name, annotation and default (``NO_DEFAULT`` when required)."""

    name: str
    annotation: Any
    default: Any = NO_DEFAULT


def check_annotation(annotation: Any, where: str) -> None:
    """Raises TypeError for an annotation an ExtensionType field cannot have."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or isinstance(annotation, types.UnionType):
        for arg in typing.get_args(annotation):
            check_annotation(arg, where)
    elif origin in (tuple, collections.abc.Mapping, typing.Mapping):
        for arg in typing.get_args(annotation):
            if arg is not Ellipsis:
                check_annotation(arg, where)
    elif not (annotation is None or annotation is type(None) or isinstance(annotation, type)):
        raise TypeError(f"Unsupported type annotation {annotation!r} for {where}: use int, float, str, bool, "
                        "None, tf.Tensor, tf.RaggedTensor, tf.SparseTensor, an ExtensionType, tf.TensorShape, "
                        "tf.DType, Union, Optional, Tuple or Mapping")


def convert_value(annotation: Any, value: Any, where: str) -> Any:
    """``value`` converted to and checked against ``annotation``.

    Raises:
        TypeError: the value does not fit, naming the field and what it expects.
    """
    origin = typing.get_origin(annotation)
    if origin is typing.Union or isinstance(annotation, types.UnionType):
        for arg in typing.get_args(annotation):
            try:
                return convert_value(arg, value, where)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"{where}: expected {annotation}, got {value!r}")
    if origin is tuple:
        return _convert_tuple(typing.get_args(annotation), value, where)
    if origin in (collections.abc.Mapping, typing.Mapping):
        if not isinstance(value, collections.abc.Mapping):
            raise TypeError(f"{where}: expected a Mapping, got {value!r}")
        key_type, value_type = typing.get_args(annotation) or (Any, Any)
        return types.MappingProxyType({convert_value(key_type, k, f"{where} key"):
                                       convert_value(value_type, v, f"{where}[{k!r}]") for k, v in value.items()})
    return _convert_leaf(annotation, value, where)


def _convert_tuple(args: tuple[Any, ...], value: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{where}: expected a tuple, got {value!r}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(convert_value(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if args and len(args) != len(value):
        raise TypeError(f"{where}: expected a tuple of {len(args)} values, got {value!r}")
    return tuple(convert_value(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value))) if args \
        else tuple(value)


def _convert_leaf(annotation: Any, value: Any, where: str) -> Any:
    if annotation is Any:
        return value
    if annotation is None or annotation is type(None):
        if value is not None:
            raise TypeError(f"{where}: expected None, got {value!r}")
        return None
    if annotation is Tensor:
        if isinstance(value, Tensor):
            return value
        if hasattr(value, "_type_spec") or hasattr(value, "_fetch_components"):
            raise TypeError(f"{where}: expected a tf.Tensor, got {type(value).__name__}")
        try:
            return convert_to_tensor(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{where}: expected a tf.Tensor (or a value convertible to one), got {value!r}: "
                            f"{exc}") from None
    if annotation is TensorShape:
        return as_shape(value)
    if annotation is dtypes.DType:
        return dtypes.as_dtype(value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation is int and isinstance(value, bool):
        raise TypeError(f"{where}: expected int, got bool {value!r}")
    if isinstance(value, annotation):
        return value
    raise TypeError(f"{where}: expected {getattr(annotation, '__name__', annotation)}, got "
                    f"{type(value).__name__} {value!r}")
