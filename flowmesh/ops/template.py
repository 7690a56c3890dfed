"""``tf.make_template``: a function whose variables are created on the first call and
shared by every later call (``get_variable`` under the template's variable scope, with
``reuse=True`` after the first call), as TensorFlow 1.x's ``Template``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import GraphKeys, get_collection
from flowmesh.ops.variable_scope import VariableScope, variable_scope


class Template:
    """A callable made by :func:`make_template`; see there."""

    def __init__(self, name: str, func: Callable[..., Any], create_scope_now: bool = False,
                 unique_name: str | None = None, custom_getter: Any = None):
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope: VariableScope | None = None
        self._variables_created = False
        if create_scope_now:
            with variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter) as vs:
                self._variable_scope = vs

    def _call_func(self, args: Any, kwargs: Any) -> Any:
        trainable_at_start = len(get_collection(GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        if self._variables_created:
            created = get_collection(GraphKeys.TRAINABLE_VARIABLES)[trainable_at_start:]
            if created:
                raise ValueError(
                    "Trainable variable created when calling a template after the first time, "
                    f"perhaps you used tf.Variable when you meant tf.get_variable: {created}")
        self._variables_created = True
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._variable_scope is not None:
            with variable_scope(self._variable_scope, reuse=self._variables_created or None):
                return self._call_func(args, kwargs)
        with variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            return self._call_func(args, kwargs)

    @property
    def name(self) -> str:
        return self._name

    @property
    def func(self) -> Callable[..., Any]:
        return self._func

    @property
    def variable_scope(self) -> VariableScope | None:
        return self._variable_scope

    @property
    def variable_scope_name(self) -> str | None:
        """The scope name with a trailing ``/`` (so it never matches a longer name)."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _collection(self, key: str) -> list[Any]:
        if self._variable_scope is None:
            return []
        return get_collection(key, self.variable_scope_name)

    @property
    def variables(self) -> list[Any]:
        return self.global_variables + self.local_variables

    @property
    def trainable_variables(self) -> list[Any]:
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self) -> list[Any]:
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self.global_variables if id(v) not in trainable]

    @property
    def global_variables(self) -> list[Any]:
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self) -> list[Any]:
        return self._collection(GraphKeys.LOCAL_VARIABLES)

    weights = trainable_variables


def make_template(name_: str, func_: Callable[..., Any], create_scope_now_: bool = False,
                  unique_name_: str | None = None, custom_getter_: Any = None, **kwargs: Any) -> Template:
    """Wraps ``func_`` (with ``kwargs`` bound) so that all calls share the variables the
    first call creates with ``tf.get_variable`` (``tf.make_template``).

    Args:
        name_: the variable scope name (made unique unless ``unique_name_`` is given).
        func_: the function; it must create variables with ``tf.get_variable``.
        create_scope_now_: open the variable scope now instead of at the first call.
        unique_name_: use this exact scope name.
        custom_getter_: a custom getter for the scope.
        **kwargs: keyword arguments bound to ``func_``.

    Raises:
        ValueError: (when called) a later call creates new trainable variables.
    """
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)
