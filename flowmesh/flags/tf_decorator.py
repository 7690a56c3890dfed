"""``tf.flags.tf_decorator``: decorators that keep the wrapped function inspectable.

TensorFlow's ``tf.flags`` module imports its ``tf_decorator`` utility (to wrap absl's
``DEFINE_*`` functions), so ``tf.compat.v1.flags.tf_decorator`` is public API; flowmesh keeps
it with TensorFlow's semantics. ``make_decorator(target, wrapper)`` gives ``wrapper`` the
target's name, docstring and signature plus a :class:`TFDecorator` record that
:func:`unwrap` and :func:`rewrap` walk::

    def logged(target):
        def wrapper(*args, **kwargs):
            print("calling", target.__name__)
            return target(*args, **kwargs)
        return make_decorator(target, wrapper)

``Any`` and ``Dict`` are ``typing``'s, re-exported because TensorFlow's module exports them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Dict  # noqa: UP035 - Dict is re-exported, as TensorFlow's module does

__all__ = ["Any", "Dict", "TFDecorator", "fullargspec_to_signature", "make_decorator", "rewrap", "unwrap"]


def _default_values(fullargspec: inspect.FullArgSpec) -> dict[str, Any]:
    defaults: dict[str, Any] = {}
    if fullargspec.defaults:
        named = fullargspec.args[-len(fullargspec.defaults):]
        defaults.update(zip(named, fullargspec.defaults))
    if fullargspec.kwonlydefaults:
        defaults.update(fullargspec.kwonlydefaults)
    return defaults


def fullargspec_to_signature(fullargspec: inspect.FullArgSpec) -> inspect.Signature:
    """The :class:`inspect.Signature` that ``fullargspec`` describes (positional-or-keyword
    arguments, ``*varargs``, keyword-only arguments, ``**varkw``, with their defaults).

    Raises:
        TypeError: ``fullargspec`` is not an ``inspect.FullArgSpec``.
    """
    if not isinstance(fullargspec, inspect.FullArgSpec):
        raise TypeError(f"fullargspec_to_signature takes an inspect.FullArgSpec (from "
                        f"inspect.getfullargspec(f)), got {type(fullargspec).__name__}")
    defaults = _default_values(fullargspec)
    empty = inspect.Parameter.empty
    parameters = [inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                    default=defaults.get(arg, empty)) for arg in fullargspec.args]
    if fullargspec.varargs is not None:
        parameters.append(inspect.Parameter(fullargspec.varargs, inspect.Parameter.VAR_POSITIONAL))
    parameters += [inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, default=defaults.get(arg, empty))
                   for arg in fullargspec.kwonlyargs]
    if fullargspec.varkw is not None:
        parameters.append(inspect.Parameter(fullargspec.varkw, inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(parameters)


class TFDecorator:
    """The record of one decoration: the decorated target, the decorator's name, its doc
    and an optional argspec overriding the target's signature. Calling it calls the target;
    subclass it for a stateful decorator (``super().decorated_target(*args)``)."""

    def __init__(self, decorator_name: str, target: Any, decorator_doc: str = "",
                 decorator_argspec: inspect.FullArgSpec | None = None) -> None:
        self._decorated_target = target
        self._decorator_name = decorator_name
        self._decorator_doc = decorator_doc
        self._decorator_argspec = decorator_argspec
        if hasattr(target, "__name__"):
            self.__name__ = target.__name__
        if hasattr(target, "__qualname__"):
            self.__qualname__ = target.__qualname__
        self.__doc__ = decorator_doc or getattr(target, "__doc__", None) or ""
        if decorator_argspec:
            self.__signature__ = fullargspec_to_signature(decorator_argspec)
        elif callable(target):
            try:
                self.__signature__ = inspect.signature(target)
            except (TypeError, ValueError):  # builtins without a signature
                pass

    def __get__(self, instance: Any, owner: type | None) -> Any:
        return self._decorated_target.__get__(instance, owner)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._decorated_target(*args, **kwargs)

    @property
    def decorated_target(self) -> Any:
        """The callable this decorator wraps."""
        return self._decorated_target

    @decorated_target.setter
    def decorated_target(self, decorated_target: Any) -> None:
        self._decorated_target = decorated_target

    @property
    def decorator_name(self) -> str:
        """The decorator's name (by default the function that called ``make_decorator``)."""
        return self._decorator_name

    @property
    def decorator_doc(self) -> str:
        """The documentation of this application of the decorator."""
        return self._decorator_doc

    @property
    def decorator_argspec(self) -> inspect.FullArgSpec | None:
        """The argspec overriding the target's signature, or None."""
        return self._decorator_argspec


def _has_tf_decorator(obj: Any) -> bool:
    return isinstance(getattr(obj, "_tf_decorator", None), TFDecorator)


def _copy_metadata(target: Any, decorator_func: Callable, decorator: TFDecorator) -> None:
    for attribute in ("__name__", "__qualname__", "__module__"):
        if hasattr(target, attribute):
            setattr(decorator_func, attribute, getattr(target, attribute))
    if hasattr(target, "__dict__"):  # entries the wrapper does not set itself
        for name, value in target.__dict__.items():
            decorator_func.__dict__.setdefault(name, value)
    if hasattr(target, "__doc__"):
        decorator_func.__doc__ = decorator.__doc__


def make_decorator(target: Any, decorator_func: Callable, decorator_name: str | None = None,
                   decorator_doc: str = "", decorator_argspec: inspect.FullArgSpec | None = None) -> Callable:
    """Returns ``decorator_func`` made to look like ``target``: its name, qualified name,
    module, docstring, attributes and signature (or ``decorator_argspec``'s), with
    ``__wrapped__`` and a :class:`TFDecorator` in ``_tf_decorator``.

    Args:
        target: the callable being wrapped.
        decorator_func: the wrapper; modified in place and returned.
        decorator_name: the decorator's name; default: the name of the calling function.
        decorator_doc: documentation of this application of the decorator.
        decorator_argspec: an ``inspect.FullArgSpec`` overriding the signature.

    Raises:
        TypeError: ``decorator_func`` is not callable.
    """
    if not callable(decorator_func):
        raise TypeError(f"make_decorator(target, decorator_func): decorator_func must be the wrapper "
                        f"function, got {type(decorator_func).__name__}")
    if decorator_name is None:
        caller = inspect.currentframe()
        decorator_name = caller.f_back.f_code.co_name if caller and caller.f_back else "<unknown>"
    decorator = TFDecorator(decorator_name, target, decorator_doc, decorator_argspec)
    decorator_func._tf_decorator = decorator
    _copy_metadata(target, decorator_func, decorator)
    decorator_func.__wrapped__ = target
    decorator_func.__original_wrapped__ = target  # lets callers see whether rewrap changed it
    if decorator_argspec:
        decorator_func.__signature__ = fullargspec_to_signature(decorator_argspec)
    elif callable(target):
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            return decorator_func
        bound_instance = _bound_instance(target)
        if bound_instance is not None and "self" in signature.parameters:  # present it as a method
            signature = inspect.Signature(list(signature.parameters.values())[1:])
            decorator_func.__self__ = bound_instance
        decorator_func.__signature__ = signature
    return decorator_func


def _bound_instance(target: Any) -> Any:
    decorators, _ = unwrap(target)
    for decorator in decorators:
        if inspect.ismethod(decorator.decorated_target):
            return decorator.decorated_target.__self__
    return None


def rewrap(decorator_func: Callable, previous_target: Any, new_target: Any) -> Callable:
    """Replaces ``previous_target`` by ``new_target`` inside a chain of ``make_decorator``
    wrappers (the innermost wrapper holding it is modified in place). The wrappers must call
    ``<wrapper>.__wrapped__`` rather than a captured target for the change to take effect.

    Returns:
        ``decorator_func``, or ``new_target`` when ``decorator_func`` is not a decorator.

    Raises:
        ValueError: ``decorator_func`` is not a decorator and is not ``previous_target``.
    """
    current: Any = decorator_func
    innermost = None
    record = None
    while _has_tf_decorator(current):
        innermost = current
        record = current._tf_decorator
        if record.decorated_target is previous_target:
            break
        current = record.decorated_target
    if innermost is None or record is None:
        if decorator_func is not previous_target:
            raise ValueError("rewrap: decorator_func is not a decorator, so previous_target must be "
                             "decorator_func itself (pass what tf_decorator.unwrap returned)")
        return new_target
    record.decorated_target = new_target
    holder = getattr(innermost, "__func__", innermost) if inspect.ismethod(innermost) else innermost
    holder.__wrapped__ = new_target
    return decorator_func


def unwrap(maybe_tf_decorator: Any) -> tuple[list[TFDecorator], Any]:
    """Returns the :class:`TFDecorator` records around a callable, outermost first, and the
    undecorated target at the end of the chain (``([], f)`` for an undecorated ``f``)."""
    decorators: list[TFDecorator] = []
    current = maybe_tf_decorator
    while True:
        if isinstance(current, TFDecorator):
            decorators.append(current)
        elif _has_tf_decorator(current):
            decorators.append(current._tf_decorator)
        else:
            break
        if not hasattr(decorators[-1], "decorated_target"):
            break
        current = decorators[-1].decorated_target
    return decorators, current
