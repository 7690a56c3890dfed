"""Type-based dispatch of TensorFlow APIs (``tf.experimental.dispatch_for_api`` and the
elementwise variants): user types (ExtensionTypes) can take over ``tf.math.add(x, y)``.

An API takes part when it is wrapped by :func:`add_dispatch_support` (flowmesh wraps the
elementwise ops of ``tf.math`` where it defines them, as TensorFlow's ``@dispatch``
decorators do). A wrapped API first asks the registry: a target registered for that API
whose parameter types match the call's arguments runs instead; otherwise the API runs.
With nothing registered the check is one dictionary lookup.

* ``dispatch_for_api(api, *signatures)``: ``target`` has ``api``'s parameters; a signature
  maps parameter names to types (from the target's annotations when none is given);
* ``dispatch_for_unary_elementwise_apis(x_type)``: ``handler(api_func, x)`` for every
  unary elementwise API;
* ``dispatch_for_binary_elementwise_apis(x_type, y_type)`` and the ``_assert_`` variant:
  ``handler(api_func, x, y)`` for every binary elementwise (assert) API;
* ``unregister_dispatch_for(target)``.

Types may be classes, ``typing.Union``/``Optional`` of them, or ``typing.List``/
``Iterable`` of them (for list parameters such as ``add_n``'s ``inputs``).
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

_API_TARGETS: dict[Any, list[tuple[Callable[..., Any], dict[str, Any]]]] = {}
_ELEMENTWISE: dict[str, list[tuple[Callable[..., Any], tuple[Any, ...]]]] = {
    "unary": [], "binary": [], "binary_assert": []}
_APIS_BY_KIND: dict[str, list[Callable[..., Any]]] = {"unary": [], "binary": [], "binary_assert": []}
_NOT_HANDLED = object()


def _matches(value: Any, annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Union:
        return any(_matches(value, arg) for arg in typing.get_args(annotation))
    if origin in (list, collections.abc.Sequence, collections.abc.Iterable):
        (item,) = typing.get_args(annotation) or (Any,)
        return isinstance(value, (list, tuple)) and bool(value) and all(_matches(v, item) for v in value)
    if annotation is Any:
        return True
    if annotation is None or annotation is type(None):
        return value is None
    return isinstance(value, annotation)


def _check_type(annotation: Any, where: str) -> None:
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin in (list, collections.abc.Sequence, collections.abc.Iterable):
        for arg in typing.get_args(annotation):
            _check_type(arg, where)
    elif not (isinstance(annotation, type) or annotation is None):
        raise TypeError(f"{where}: dispatch types must be classes, Union, Optional or List of them, "
                        f"got {annotation!r}")


def _api_key(api: Any) -> Any:
    return getattr(api, "_flowmesh_dispatch_api", None)


def add_dispatch_support(api: Callable[..., Any], kind: str | None = None) -> Callable[..., Any]:
    """``api`` wrapped so registered dispatch targets can take over its calls.

    Args:
        api: the API function.
        kind: ``"unary"``, ``"binary"`` or ``"binary_assert"`` to also take the elementwise
            handlers of that kind (the first one or two arguments are ``x`` and ``y``).
    """
    signature = inspect.signature(api)

    @functools.wraps(api)
    def dispatching(*args: Any, **kwargs: Any) -> Any:
        if _API_TARGETS.get(dispatching) or (kind is not None and _ELEMENTWISE[kind]):
            result = _dispatch(dispatching, signature, kind, args, kwargs)
            if result is not _NOT_HANDLED:
                return result
        return api(*args, **kwargs)

    dispatching._flowmesh_dispatch_api = dispatching  # type: ignore[attr-defined]
    if kind is not None:
        _APIS_BY_KIND[kind].append(dispatching)
    return dispatching


def _dispatch(api: Any, signature: inspect.Signature, kind: str | None, args: tuple, kwargs: dict) -> Any:
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return _NOT_HANDLED
    for target, types in _API_TARGETS.get(api, ()):
        if all(name in bound.arguments and _matches(bound.arguments[name], t) for name, t in types.items()):
            return target(*args, **kwargs)
    if kind is not None:
        values = list(bound.arguments.values())
        for handler, types in _ELEMENTWISE[kind]:
            if len(values) >= len(types) and all(_matches(v, t) for v, t in zip(values, types)):
                rest = dict(list(bound.arguments.items())[len(types):])  # e.g. name=: bound into api_func
                return handler(functools.partial(api, **rest) if rest else api, *values[:len(types)])
    return _NOT_HANDLED


def dispatch_for_api(api: Callable[..., Any], *signatures: dict[str, Any]) -> Callable[..., Any]:
    """A decorator registering ``target`` to handle calls of ``api`` whose arguments match
    one of ``signatures`` (``{parameter name: type}``), or the target's annotations.

    Raises:
        ValueError: ``api`` does not support dispatch, or the target's parameters differ.
        TypeError: a signature names an unsupported type.
    """
    key = _api_key(api)
    if key is None:
        raise ValueError(f"{getattr(api, '__name__', api)!r} does not support dispatch; flowmesh supports it "
                         "for the elementwise ops of tf.math (e.g. tf.math.add, tf.math.abs)")
    api_params = list(inspect.signature(api).parameters)

    def decorator(target: Callable[..., Any]) -> Callable[..., Any]:
        target_params = list(inspect.signature(target).parameters)
        if target_params != api_params:
            raise ValueError(f"Dispatch function's signature {target_params} does not match API's "
                             f"signature {api_params}.")
        found = list(signatures)
        if not found:
            hints = typing.get_type_hints(target)
            found = [{name: hints[name] for name in target_params if name in hints}]
            if not found[0]:
                raise ValueError("dispatch_for_api needs signatures or a target with type annotations")
        for signature in found:
            for name, annotation in signature.items():
                if name not in api_params:
                    raise ValueError(f"dispatch signature names {name!r}, which is not a parameter of the API "
                                     f"({api_params})")
                _check_type(annotation, f"dispatch_for_api({name})")
            _API_TARGETS.setdefault(key, []).append((target, dict(signature)))
        return target

    return decorator


def _elementwise_decorator(kind: str, types: tuple[Any, ...]) -> Callable[..., Any]:
    for t in types:
        _check_type(t, f"dispatch_for_{kind}_elementwise_apis")

    def decorator(handler: Callable[..., Any]) -> Callable[..., Any]:
        _ELEMENTWISE[kind].append((handler, types))
        return handler

    return decorator


def dispatch_for_unary_elementwise_apis(x_type: Any) -> Callable[..., Any]:
    """A decorator registering ``handler(api_func, x)`` for every unary elementwise API
    called with an ``x`` of ``x_type``."""
    return _elementwise_decorator("unary", (x_type,))


def dispatch_for_binary_elementwise_apis(x_type: Any, y_type: Any) -> Callable[..., Any]:
    """A decorator registering ``handler(api_func, x, y)`` for every binary elementwise API
    called with ``x`` of ``x_type`` and ``y`` of ``y_type``."""
    return _elementwise_decorator("binary", (x_type, y_type))


def dispatch_for_binary_elementwise_assert_apis(x_type: Any, y_type: Any) -> Callable[..., Any]:
    """A decorator registering ``handler(assert_func, x, y)`` for the binary elementwise
    assertions (``tf.debugging.assert_equal`` ...)."""
    return _elementwise_decorator("binary_assert", (x_type, y_type))


def unregister_dispatch_for(dispatch_target: Callable[..., Any]) -> None:
    """Removes every registration of ``dispatch_target``.

    Raises:
        ValueError: it was not registered.
    """
    found = False
    for key, targets in list(_API_TARGETS.items()):
        kept = [(t, s) for t, s in targets if t is not dispatch_target]
        found |= len(kept) != len(targets)
        _API_TARGETS[key] = kept
    for kind, handlers in _ELEMENTWISE.items():
        kept_handlers = [(h, s) for h, s in handlers if h is not dispatch_target]
        found |= len(kept_handlers) != len(handlers)
        _ELEMENTWISE[kind] = kept_handlers
    if not found:
        raise ValueError(f"Function {dispatch_target!r} was not registered using a `dispatch_for_*` decorator.")


def elementwise_apis(kind: str) -> tuple[Callable[..., Any], ...]:
    """The APIs that take the elementwise handlers of ``kind``."""
    return tuple(_APIS_BY_KIND[kind])


def unary_elementwise_api(api: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: ``api`` is a unary elementwise API (takes the unary handlers)."""
    return add_dispatch_support(api, "unary")


def binary_elementwise_api(api: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: ``api`` is a binary elementwise API (takes the binary handlers)."""
    return add_dispatch_support(api, "binary")


def binary_elementwise_assert_api(api: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: ``api`` is a binary elementwise assertion (takes the assert handlers)."""
    return add_dispatch_support(api, "binary_assert")
