"""``tf.variable_scope`` and ``tf.get_variable``: named, shareable variables.

Variables created by ``get_variable`` are kept in a per-graph store keyed by their full
name. Within a scope with ``reuse=True`` they must exist; with ``reuse=False`` they
must not; with ``reuse=tf.AUTO_REUSE`` they are created on first use.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Graph, GraphKeys, get_default_graph
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops import init_ops
from flowmesh.ops.partitioned_variables import get_partitioned_variable
from flowmesh.ops.variables import Variable


class _ReuseMode:
    def __repr__(self) -> str:
        return "tf.AUTO_REUSE"


AUTO_REUSE = _ReuseMode()


class VariableScope:
    """A scope's defaults for ``get_variable`` (reuse, initializer, partitioner, ...)."""

    def __init__(self, reuse: Any, name: str = "", initializer: Any = None, regularizer: Any = None,
                 caching_device: Any = None, partitioner: Any = None, custom_getter: Any = None,
                 name_scope: str = "", dtype: Any = dtypes.float32, use_resource: Any = None,
                 constraint: Any = None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._constraint = constraint

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name_scope(self) -> str:
        return self._name_scope

    @property
    def reuse(self) -> Any:
        return self._reuse

    @property
    def initializer(self) -> Any:
        return self._initializer

    @property
    def regularizer(self) -> Any:
        return self._regularizer

    @property
    def partitioner(self) -> Any:
        return self._partitioner

    @property
    def custom_getter(self) -> Any:
        return self._custom_getter

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def caching_device(self) -> Any:
        return self._caching_device

    @property
    def use_resource(self) -> bool:
        return True

    def reuse_variables(self) -> None:
        """Makes every later ``get_variable`` in this scope reuse existing variables."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def set_regularizer(self, regularizer: Any) -> None:
        self._regularizer = regularizer

    def set_partitioner(self, partitioner: Any) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter: Any) -> None:
        self._custom_getter = custom_getter

    def set_dtype(self, dtype: Any) -> None:
        self._dtype = dtypes.as_dtype(dtype)

    def set_caching_device(self, caching_device: Any) -> None:
        self._caching_device = caching_device

    def get_variable(self, var_store: _VariableStore, name: str, **kwargs: Any) -> Any:
        full_name = f"{self._name}/{name}" if self._name else name
        for key, default in (("initializer", self._initializer), ("regularizer", self._regularizer),
                             ("partitioner", self._partitioner), ("caching_device", self._caching_device),
                             ("constraint", self._constraint)):
            if kwargs.get(key) is None:
                kwargs[key] = default
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = self._dtype
        reuse = kwargs.pop("reuse", None)
        reuse = self._reuse if reuse is None or reuse is False and self._reuse else reuse
        getter = var_store.get_variable
        custom = kwargs.pop("custom_getter", None)
        if self._custom_getter is not None:
            getter = _wrap_getter(self._custom_getter, getter)
        if custom is not None:
            getter = _wrap_getter(custom, getter)
        return getter(full_name, reuse=reuse, **kwargs)


def _wrap_getter(custom: Callable, inner: Callable) -> Callable:
    def getter(name: str, *args: Any, **kwargs: Any) -> Any:
        return custom(inner, name, *args, **kwargs)

    return getter


class _VariableStore:
    """All ``get_variable`` variables of one graph, by full name."""

    def __init__(self) -> None:
        self.vars: dict[str, Any] = {}
        self.scope_counts: dict[str, int] = {}

    def get_variable(self, name: str, shape: Any = None, dtype: Any = dtypes.float32,
                     initializer: Any = None, regularizer: Any = None, reuse: Any = None,
                     trainable: bool | None = None, collections: Any = None,
                     caching_device: Any = None, partitioner: Any = None,
                     validate_shape: bool = True, use_resource: Any = None,
                     constraint: Any = None, synchronization: Any = None,
                     aggregation: Any = None) -> Any:
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape) if shape is not None else None
        if partitioner is not None and shape is not None and shape.rank:
            return get_partitioned_variable(self, name, shape, dtype, initializer, regularizer,
                                            reuse, trainable, collections, partitioner,
                                            validate_shape, constraint)
        found = self.vars.get(name)
        if found is not None:
            if reuse is False or reuse is None:
                raise ValueError(
                    f"Variable {name} already exists, disallowed. Did you mean to set reuse=True "
                    "or reuse=tf.AUTO_REUSE in VarScope?"
                )
            if shape is not None and not shape.is_compatible_with(found.get_shape()):
                raise ValueError(
                    f"Trying to share variable {name}, but specified shape {shape} and found "
                    f"shape {found.get_shape()}."
                )
            if dtype != found.dtype:
                raise ValueError(
                    f"Trying to share variable {name}, but specified dtype {dtype.name} and found "
                    f"dtype {found.dtype.name}."
                )
            return found
        if reuse is True:
            raise ValueError(
                f"Variable {name} does not exist, or was not created with tf.get_variable(). Did "
                "you mean to set reuse=tf.AUTO_REUSE in VarScope?"
            )
        variable = self._create(name, shape, dtype, initializer, trainable, collections,
                                validate_shape, constraint)
        self.vars[name] = variable
        if regularizer is not None:
            graph = get_default_graph()
            with graph.colocate_with(variable.op), graph.name_scope(f"{name}/Regularizer/"):
                loss = regularizer(variable)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return variable

    def _create(self, name: str, shape: TensorShape | None, dtype: dtypes.DType, initializer: Any,
                trainable: bool | None, collections: Any, validate_shape: bool,
                constraint: Any) -> Variable:
        if initializer is None:
            if dtype.is_floating:
                initializer = init_ops.glorot_uniform_initializer()
            elif dtype.is_integer or dtype.is_bool or dtype == dtypes.string:
                initializer = init_ops.zeros_initializer()
            else:
                raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")
        if isinstance(initializer, type) and issubclass(initializer, init_ops.Initializer):
            initializer = initializer(dtype=dtype)
        if callable(initializer):
            if shape is None or not shape.is_fully_defined():
                raise ValueError(
                    f"Shape of a new variable ({name}) must be fully defined, but instead was {shape}."
                )
            dims = shape.as_list()
            initial_value: Any = lambda: initializer(dims, dtype=dtype)  # noqa: E731
            value_dtype: Any = dtype
        else:
            from flowmesh.core.convert import convert_to_tensor

            initial_value = convert_to_tensor(initializer, dtype=dtype)
            value_dtype = None
            if shape is not None and validate_shape and not initial_value.shape.is_compatible_with(shape):
                raise ValueError(
                    f"The initializer passed for {name} has shape {initial_value.shape}, which does "
                    f"not match the requested shape {shape}; pass shape=None or a matching value."
                )
        graph = get_default_graph()
        with graph.name_scope(None):
            return Variable(initial_value=initial_value, trainable=trainable, collections=collections,
                            validate_shape=validate_shape, name=name, dtype=value_dtype,
                            constraint=constraint)


# --- per-graph state -------------------------------------------------------------------------
_state = threading.local()


def _variable_graph(graph: Graph) -> Graph:
    """Function graphs (tf.cond branches, tf.while_loop bodies) share the variable store and
    the variable scopes of the graph they are built in."""
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return graph


def _store(graph: Graph) -> _VariableStore:
    graph = _variable_graph(graph)
    if graph._variable_store is None:
        graph._variable_store = _VariableStore()
    return graph._variable_store


def _scope_stack(graph: Graph) -> list[VariableScope]:
    graph = _variable_graph(graph)
    key = id(graph)
    stacks = getattr(_state, "stacks", None)
    if stacks is None:
        stacks = _state.stacks = {}
    stack = stacks.get(key)
    if stack is None or stack[0] is not getattr(graph, "_root_variable_scope", None):
        root = VariableScope(False)
        graph._root_variable_scope = root  # type: ignore[attr-defined]
        stack = stacks[key] = [root]
    return stack


def get_variable_scope() -> VariableScope:
    """The current :class:`VariableScope`."""
    return _scope_stack(get_default_graph())[-1]


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                 regularizer: Any = None, trainable: bool | None = None, collections: Any = None,
                 caching_device: Any = None, partitioner: Any = None, validate_shape: bool = True,
                 use_resource: Any = None, custom_getter: Any = None, constraint: Any = None,
                 synchronization: Any = None, aggregation: Any = None) -> Any:
    """Gets an existing variable or creates a new one, honouring the scope's ``reuse``.

    Raises:
        ValueError: reuse is False and the variable exists, reuse is True and it does not,
            or the requested shape/dtype differ from the existing variable's.
    """
    graph = get_default_graph()
    return get_variable_scope().get_variable(
        _store(graph), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections,
        caching_device=caching_device, partitioner=partitioner, validate_shape=validate_shape,
        custom_getter=custom_getter, constraint=constraint)


def get_local_variable(name: str, *args: Any, **kwargs: Any) -> Any:
    """Like :func:`get_variable`, but in ``LOCAL_VARIABLES`` and not trainable."""
    kwargs["collections"] = list(kwargs.get("collections") or []) + [GraphKeys.LOCAL_VARIABLES]
    kwargs["trainable"] = False
    return get_variable(name, *args, **kwargs)


@contextlib.contextmanager
def variable_scope(name_or_scope: Any = None, default_name: str | None = None, values: Any = None,
                   initializer: Any = None, regularizer: Any = None, caching_device: Any = None,
                   partitioner: Any = None, custom_getter: Any = None, reuse: Any = None,
                   dtype: Any = None, use_resource: Any = None, constraint: Any = None,
                   auxiliary_name_scope: bool = True) -> Iterator[VariableScope]:
    """Opens a variable scope (and a matching name scope).

    Example:
        >>> with tf.variable_scope("layer1"):
        ...     w = tf.get_variable("w", [784, 256])   # "layer1/w"
        >>> with tf.variable_scope("layer1", reuse=True):
        ...     same = tf.get_variable("w")
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None
    graph = get_default_graph()
    stack = _scope_stack(graph)
    parent = stack[-1]
    store = _store(graph)
    if isinstance(name_or_scope, VariableScope):
        full = name_or_scope.name
        name_scope_name = name_or_scope.original_name_scope
        source = name_or_scope
        new_reuse = True if (reuse is True or parent.reuse is True) else (reuse or name_or_scope.reuse)
    else:
        if name_or_scope is not None:
            base = name_or_scope
        else:
            base = _unique_scope_name(store, parent.name, default_name)
        full = f"{parent.name}/{base}" if parent.name else base
        name_scope_name = None
        source = parent
        new_reuse = True if (reuse is True or parent.reuse is True) else (reuse if reuse is not None else parent.reuse)
    scope_cm = contextlib.nullcontext("")
    if auxiliary_name_scope:
        if name_scope_name is not None:
            scope_cm = graph.name_scope(name_scope_name or None)
        else:
            scope_cm = graph.name_scope(full.rsplit("/", 1)[-1])
    with scope_cm as opened:
        scope = VariableScope(
            new_reuse, name=full,
            initializer=initializer if initializer is not None else source.initializer,
            regularizer=regularizer if regularizer is not None else source.regularizer,
            caching_device=caching_device if caching_device is not None else source.caching_device,
            partitioner=partitioner if partitioner is not None else source.partitioner,
            custom_getter=_chain_getters(source.custom_getter, custom_getter),
            name_scope=opened if isinstance(opened, str) and opened else (name_scope_name or f"{full}/"),
            dtype=dtype if dtype is not None else source.dtype,
            constraint=constraint if constraint is not None else source._constraint,
        )
        stack.append(scope)
        # TensorFlow's scope counting: entering counts an opening of `full`; leaving a scope
        # opened by name resets its sub-scopes' counts, leaving a re-entered scope object
        # restores the counts it found.
        store.scope_counts[full] = store.scope_counts.get(full, 0) + 1
        saved = dict(store.scope_counts) if isinstance(name_or_scope, VariableScope) else None
        try:
            yield scope
        finally:
            stack.pop()
            if saved is not None:
                store.scope_counts = saved
            else:
                prefix = f"{full}/"
                for key in store.scope_counts:
                    if key.startswith(prefix):
                        store.scope_counts[key] = 0


def _unique_scope_name(store: _VariableStore, parent: str, prefix: str) -> str:
    """``prefix`` or ``prefix_N``: the first not yet opened under ``parent`` (TensorFlow's
    ``_get_unique_variable_scope``)."""
    name = f"{parent}/{prefix}" if parent else prefix
    if store.scope_counts.get(name, 0) == 0:
        return prefix
    idx = 1
    while store.scope_counts.get(f"{name}_{idx}", 0) > 0:
        idx += 1
    return f"{prefix}_{idx}"


def _chain_getters(outer: Any, inner: Any) -> Any:
    if outer is None:
        return inner
    if inner is None:
        return outer

    def chained(getter: Callable, *args: Any, **kwargs: Any) -> Any:
        return inner(lambda *a, **k: outer(getter, *a, **k), *args, **kwargs)

    return chained


def variable_op_scope(values: Any, name_or_scope: Any, default_name: str | None = None, **kwargs: Any):
    """Deprecated alias of ``variable_scope(name_or_scope, default_name, values)``."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)


def no_regularizer(_: Any) -> None:
    return None


def create_partitioned_variables(shape: Any, slicing: list[int], initializer: Any, dtype: Any = dtypes.float32,
                                 trainable: bool = True, collections: Any = None, name: str | None = None,
                                 reuse: Any = None) -> list[Any]:
    """The parts of a new partitioned variable (``tf.create_partitioned_variables``).

    Returns:
        The list of part variables.
    """
    with variable_scope(name, "PartitionedVariable", reuse=reuse):
        variable = get_variable("part", shape=shape, dtype=dtype, initializer=initializer,
                                trainable=trainable, collections=collections,
                                partitioner=lambda **unused: list(slicing))
    return variable._get_variable_list()
