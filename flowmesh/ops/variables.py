"""``tf.Variable``: state that persists across ``Session.run`` calls.

Graph layout for ``tf.Variable(init, name="w")`` (as in TensorFlow 1.x):

* ``w`` (``VarHandleOp``) - the variable itself; ``v.name == "w:0"``;
* ``w/Assign`` - the initializer, writing ``w/initial_value``;
* ``w/read`` - the snapshot used wherever the variable is used as a tensor.

Gradients with respect to a variable flow through its handle, so every read counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor, register_tensor_conversion_function
from flowmesh.core.deprecation import deprecated
from flowmesh.core.graph import (
    GraphKeys,
    Operation,
    Tensor,
    get_default_graph,
)
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.ops import array_ops, gather_ops, math_ops, operators
from flowmesh.ops import resource_variable_ops as rv
from flowmesh.ops.cond import cond
from flowmesh.ops.constant_op import constant
from flowmesh.ops.control_flow_ops import group, no_op
from flowmesh.ops.state_ops import count_up_to
from flowmesh.ops.variable_creator import VariableMeta


class Variable(metaclass=VariableMeta):
    """A mutable tensor living on a device, shared by every step of a session.

    Construction goes through the active ``tf.variable_creator_scope`` creators, if any.

    Args:
        initial_value: a Tensor, a Python/NumPy value, or a callable returning one.
        trainable: add to ``TRAINABLE_VARIABLES`` (default True).
        collections: collections to add to (default ``[GLOBAL_VARIABLES]``).
        validate_shape: require later assignments to keep the initial shape.
        name: the variable's name (made unique).
        dtype: convert the initial value to this dtype.
        shape: the variable's static shape (default: the initial value's).
    """

    _creator_root = True  # tf.Variable(...) itself is intercepted, not its subclasses

    def __init__(self, initial_value: Any = None, trainable: bool | None = None,
                 collections: Any = None, validate_shape: bool = True,
                 caching_device: Any = None, name: str | None = None, variable_def: Any = None,
                 dtype: Any = None, expected_shape: Any = None, import_scope: Any = None,
                 constraint: Callable | None = None, use_resource: Any = None,
                 synchronization: Any = None, aggregation: Any = None, shape: Any = None):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        trainable = True if trainable is None else bool(trainable)
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = trainable
        self._constraint = constraint
        self._save_slice_info: Any = None
        self._caching_device = caching_device
        graph = get_default_graph()
        self._graph = graph
        init_from_fn = callable(initial_value)
        with graph.name_scope(name or "Variable") as scope:
            handle_name = scope[:-1]
            if init_from_fn:
                declared = dtypes.as_dtype(dtype) if dtype is not None else None
                # Computed where the variable lives (TensorFlow's loc:@<name> colocation).
                with graph._colocate_with_group(handle_name), graph.name_scope("Initializer"):
                    value = convert_to_tensor(initial_value(), dtype=declared, name="initial_value")
            else:
                value = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            var_shape = as_shape(shape) if shape is not None else (
                value.shape if validate_shape else unknown_shape())
            if validate_shape and not var_shape.is_compatible_with(value.shape):
                raise ValueError(f"Initial value shape {value.shape} does not match shape {var_shape}")
            if validate_shape and not var_shape.is_fully_defined() and shape is None:
                raise ValueError(
                    f"initial_value must have a fully defined shape when validate_shape=True, "
                    f"got {value.shape} for variable '{handle_name}'. Pass validate_shape=False "
                    "or a shape."
                )
            handle = rv.var_handle_op(value.dtype, var_shape, shared_name=handle_name, name=scope)
            with graph.colocate_with(handle.op):
                self._initializer_value = rv.assign_variable_op(
                    handle, value, validate_shape=validate_shape, name="Assign")
                self._snapshot = rv.read_variable_op(handle, value.dtype, name="read")
        self._handle = handle
        self._initial_value = value
        self._dtype = value.dtype
        self._shape = var_shape
        graph.add_to_collections(collections, self)

    # --- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def op(self) -> Operation:
        return self._handle.op

    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def device(self) -> str:
        return self._handle.op.device

    @property
    def graph(self) -> Any:
        return self._graph

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self) -> Callable | None:
        return self._constraint

    @property
    def initializer(self) -> Operation:
        return self._initializer_value.op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    def initialized_value(self) -> Tensor:
        """The value after initialization (runs the initializer first if needed)."""

        return cond(
            self.is_variable_initialized(), self.read_value, lambda: self._initial_value)

    def is_variable_initialized(self) -> Tensor:
        return rv.var_is_initialized_op(self._handle)

    # --- reading ---------------------------------------------------------------------------
    def value(self) -> Tensor:
        """The snapshot tensor ``<name>/read`` used when the variable is used as a tensor."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A fresh read of the variable (sees assignments it has a control dependency on)."""
        with self._graph.name_scope("Read"):
            return rv.read_variable_op(self._handle, self._dtype)

    def sparse_read(self, indices: Any, name: str | None = None) -> Tensor:
        """Rows ``indices``, gathered on the variable's device."""
        with self._graph.colocate_with(self._handle.op):
            return rv.resource_gather(self._handle, indices, self._dtype, name=name or "Gather")

    def _as_graph_element(self) -> Tensor:
        return self._snapshot

    def eval(self, session: Any = None) -> Any:
        """The variable's current value in ``session`` (default: the default session)."""
        return self._snapshot.eval(session=session)

    # --- writing ---------------------------------------------------------------------------
    def _colocated(self, fn: Callable[[], Tensor]) -> Tensor:
        with self._graph.colocate_with(self._handle.op):
            return fn()

    def assign(self, value: Any, use_locking: bool | None = None, name: str | None = None,
               read_value: bool = True) -> Any:
        """Writes ``value``; returns the new value (or the op when ``read_value=False``)."""
        out = self._colocated(lambda: rv.assign_variable_op(self._handle, value, name=name or "Assign"))
        return out if read_value else out.op

    def assign_add(self, delta: Any, use_locking: bool | None = None, name: str | None = None,
                   read_value: bool = True) -> Any:
        out = self._colocated(lambda: rv.assign_add_variable_op(self._handle, delta, name=name or "AssignAdd"))
        return out if read_value else out.op

    def assign_sub(self, delta: Any, use_locking: bool | None = None, name: str | None = None,
                   read_value: bool = True) -> Any:
        out = self._colocated(lambda: rv.assign_sub_variable_op(self._handle, delta, name=name or "AssignSub"))
        return out if read_value else out.op

    def _scatter(self, op_type: str, sparse_delta: IndexedSlices, name: str | None) -> Tensor:
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r}")
        return self._colocated(lambda: rv.resource_scatter(
            op_type, self._handle, sparse_delta.indices, sparse_delta.values, name=name))

    def scatter_update(self, sparse_delta: IndexedSlices, use_locking: bool = False,
                       name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterUpdate", sparse_delta, name)

    def scatter_add(self, sparse_delta: IndexedSlices, use_locking: bool = False,
                    name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterAdd", sparse_delta, name)

    def scatter_sub(self, sparse_delta: IndexedSlices, use_locking: bool = False,
                    name: str | None = None) -> Tensor:
        return self._scatter("ResourceScatterSub", sparse_delta, name)

    def load(self, value: Any, session: Any = None) -> None:
        """Writes ``value`` into the variable in ``session`` without adding ops."""
        from flowmesh.core.default_session import get_default_session_or_raise

        (session or get_default_session_or_raise()).run(
            self._initializer_value, feed_dict={self._initial_value: value})

    def count_up_to(self, limit: int) -> Tensor:
        return count_up_to(self, limit)

    # --- misc ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}_ref>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError("Using a tf.Variable as a Python `bool` is not allowed in graph mode.")

    def __iter__(self) -> Any:
        return iter(self._snapshot)

    def __reduce__(self):
        raise TypeError("Variables cannot be pickled; save them with tf.train.Saver.")

    @property
    def _shared_name(self) -> str:
        return self._handle.op.attrs["shared_name"]


RefVariable = Variable
ResourceVariable = Variable
VariableV1 = Variable

operators.install(Variable)
# Variables compare by identity, not elementwise.
Variable.__eq__ = lambda self, other: self is other  # type: ignore[method-assign]
Variable.__ne__ = lambda self, other: self is not other  # type: ignore[method-assign]
Variable.__hash__ = lambda self: id(self)  # type: ignore[method-assign]


def _variable_to_tensor(value: Variable, dtype: Any, name: str | None) -> Tensor:
    return value.value()


register_tensor_conversion_function(Variable, _variable_to_tensor)


# --- collections helpers ----------------------------------------------------------------------
def global_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables() -> list[Variable]:
    return global_variables()


def local_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list: list[Variable], name: str = "init") -> Operation:
    """An op running the initializers of ``var_list``."""

    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


def global_variables_initializer() -> Operation:
    """An op initializing every global variable (``tf.global_variables_initializer``)."""
    return variables_initializer(global_variables())


@deprecated("2017-03-02", "Use `tf.global_variables_initializer` instead.")
def initialize_all_variables() -> Operation:
    """Deprecated: ``global_variables_initializer``."""
    return global_variables_initializer()


def local_variables_initializer() -> Operation:
    """An op initializing every local variable."""
    return variables_initializer(local_variables(), name="init")


def is_variable_initialized(variable: Variable) -> Tensor:
    return variable.is_variable_initialized()


def assert_variables_initialized(var_list: list[Variable] | None = None) -> Tensor | None:
    """``tf.assert_variables_initialized``: as in TensorFlow, the rank of each variable of
    ``var_list`` (default: global and local variables), read so that running it raises
    ``FailedPreconditionError`` naming the first uninitialized one; one rank for a single
    variable, a stacked vector for several, ``None`` for none."""

    var_list = global_variables() + local_variables() if var_list is None else list(var_list)
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        with var._graph.colocate_with(var.handle.op):
            ranks.append(array_ops.rank(var.read_value()))
    return ranks[0] if len(ranks) == 1 else array_ops.stack(ranks)


def report_uninitialized_variables(var_list: list[Variable] | None = None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """A 1-D string tensor with the names of the uninitialized variables in ``var_list``."""

    var_list = global_variables() + local_variables() if var_list is None else list(var_list)
    graph = get_default_graph()
    with graph.name_scope(name):
        if not var_list:
            return constant([], dtype=dtypes.string)
        flags = array_ops.stack([
            math_ops.logical_not(v.is_variable_initialized()) for v in var_list
        ])
        names = constant([v.op.name for v in var_list], dtype=dtypes.string)
        return gather_ops.boolean_mask(names, flags)
