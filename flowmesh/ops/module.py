"""``tf.Module``: a named container of variables and sub-modules.

``variables``/``trainable_variables``/``submodules`` walk the module's attributes (and the
lists, tuples and dicts in them) in sorted attribute order, as TensorFlow's; the module's
name scope is opened once at construction (so it is unique) and re-entered by
``name_scope`` and methods wrapped with ``Module.with_name_scope``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from flowmesh.core.graph import get_default_graph
from flowmesh.ops.variables import Variable

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _camel_to_snake(name: str) -> str:
    return re.sub(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))", r"_\1", name).lower()


def _leaves(value: Any, seen: set[int]) -> Iterator[Any]:
    if id(value) in seen:
        return
    if isinstance(value, dict):
        seen.add(id(value))
        for key in sorted(value, key=str):
            yield from _leaves(value[key], seen)
    elif isinstance(value, (list, tuple)):
        seen.add(id(value))
        for item in value:
            yield from _leaves(item, seen)
    else:
        yield value


class Module:
    """``tf.Module(name=None)``: subclass it and assign variables and sub-modules as
    attributes.

    Raises:
        ValueError: a ``name`` that is not a Python identifier.
    """

    def __init__(self, name: str | None = None):
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not _VALID_NAME.match(name):
            raise ValueError(f"'{name}' is not a valid module name. Module names must be valid Python "
                             "identifiers (e.g. a valid class name).")
        self._name = name
        with get_default_graph().name_scope(name) as scope:
            self._scope_name = scope

    @property
    def name(self) -> str:
        return self._name

    @property
    def name_scope(self) -> Any:
        """A context manager re-entering the module's name scope."""
        return get_default_graph().name_scope(self._scope_name)

    def _flatten(self, predicate: Callable[[Any], bool], recursive: bool = True) -> tuple[Any, ...]:
        found: list[Any] = []
        found_ids: set[int] = set()
        queue, visited = [self], {id(self)}
        while queue:
            module = queue.pop(0)
            submodules = []
            for key in sorted(vars(module)):
                for leaf in _leaves(vars(module)[key], set()):
                    if predicate(leaf) and id(leaf) not in found_ids:
                        found.append(leaf)
                        found_ids.add(id(leaf))
                    if isinstance(leaf, Module) and id(leaf) not in visited:
                        visited.add(id(leaf))
                        submodules.append(leaf)
            if recursive:
                queue.extend(submodules)
        return tuple(found)

    @property
    def variables(self) -> tuple[Any, ...]:
        """Every variable of this module and its sub-modules."""
        return self._flatten(_is_variable)

    @property
    def trainable_variables(self) -> tuple[Any, ...]:
        return self._flatten(lambda v: _is_variable(v) and v.trainable)

    @property
    def non_trainable_variables(self) -> tuple[Any, ...]:
        return self._flatten(lambda v: _is_variable(v) and not v.trainable)

    @property
    def submodules(self) -> tuple[Module, ...]:
        """Every module reachable from this one (not itself)."""
        return self._flatten(lambda m: isinstance(m, Module))

    @classmethod
    def with_name_scope(cls, method: Callable[..., Any]) -> Callable[..., Any]:
        """Decorates a method so it runs inside the module's name scope."""

        @functools.wraps(method)
        def wrapped(self: Module, *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        return wrapped

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self._name!r}>"


def _is_variable(value: Any) -> bool:
    return isinstance(value, Variable) or type(value).__name__ == "PartitionedVariable"
