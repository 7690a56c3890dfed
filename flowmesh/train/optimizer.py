"""``tf.train.Optimizer``: the base class of every optimizer.

Subclasses implement a few hooks, as in TensorFlow:

* ``_create_slots(var_list)`` - make per-variable state with :meth:`_zeros_slot` (slots
  are variables colocated with their primary variable, named ``<var>/<OptimizerName>``,
  so they live on the same parameter server);
* ``_prepare()`` - convert hyperparameters to tensors once per ``apply_gradients``;
* ``_apply_dense(grad, var)`` or ``_resource_apply_dense(grad, var)`` - the update op for a
  dense gradient;
* ``_apply_sparse(grad: IndexedSlices, var)`` or ``_resource_apply_sparse(values, var,
  indices)`` - the update for a sparse gradient whose indices are unique (the default
  ``_apply_sparse_duplicate_indices`` sums repeated indices first);
* ``_finish(update_ops, name)`` - e.g. advance Adam's beta powers.

The built-in optimizers emit one fused ``ResourceApply*`` op per variable (see
``flowmesh/ops/training_ops.py``) whose kernel updates the variable and its slots in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Graph, GraphKeys, Operation, Tensor, get_default_graph
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.ops import array_ops, cast_ops, control_flow_ops
from flowmesh.ops.gradients_impl import gradients as _gradients
from flowmesh.ops.segment_ops import unsorted_segment_sum
from flowmesh.ops.variables import Variable, trainable_variables

_VALID_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_GRADIENT_AGGREGATORS: list[Callable[[list[tuple[Any, Any]]], list[tuple[Any, Any]]]] = []


def register_gradient_aggregator(fn: Callable[[list[tuple[Any, Any]]], list[tuple[Any, Any]]]) -> None:
    """Runs ``fn(grads_and_vars) -> grads_and_vars`` at the start of every
    ``apply_gradients`` (once per function). ``flowmesh.distribute`` registers one that
    averages gradients across replicas inside ``strategy.run`` and changes nothing
    elsewhere, as TensorFlow's optimizer does in a replica context."""
    if fn not in _GRADIENT_AGGREGATORS:
        _GRADIENT_AGGREGATORS.append(fn)


class Optimizer:
    """Base class for optimizers (``tf.train.Optimizer``).

    Args:
        use_locking: serialize concurrent updates of one variable (its kernels take the
            variable's lock).
        name: the name scope of the ops ``apply_gradients`` creates and the suffix of slot
            variables.

    Raises:
        ValueError: ``name`` is empty.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict[Variable, Variable]] = {}
        self._non_slot_variables: dict[tuple[str, Any], Variable] = {}
        self._hyper_tensors: dict[str, Tensor] = {}

    def get_name(self) -> str:
        return self._name

    # --- public API -----------------------------------------------------------------------
    def minimize(self, loss: Any, global_step: Variable | None = None,
                 var_list: Sequence[Variable] | None = None, gate_gradients: int = GATE_OP,
                 aggregation_method: Any = None, colocate_gradients_with_ops: bool = False,
                 name: str | None = None, grad_loss: Tensor | None = None) -> Operation:
        """Adds ops that minimize ``loss`` by updating ``var_list``.

        Args:
            loss: the scalar to minimize (a Tensor, or a callable returning one).
            global_step: a variable incremented by one after the update, if given.
            var_list: variables to update (default: the trainable variables).
            gate_gradients: ``GATE_NONE``, ``GATE_OP`` or ``GATE_GRAPH``.
            aggregation_method: accepted for compatibility (gradients are summed with AddN).
            colocate_gradients_with_ops: place each gradient op with its forward op.
            name: name of the returned op.
            grad_loss: the gradient of ``loss`` to start from (default ones).

        Returns:
            The training Operation.

        Raises:
            ValueError: no variable receives a gradient from ``loss``.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not [g for g, _ in grads_and_vars if g is not None]:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                f"and loss {loss}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss: Any, var_list: Sequence[Variable] | None = None,
                          gate_gradients: int = GATE_OP, aggregation_method: Any = None,
                          colocate_gradients_with_ops: bool = False,
                          grad_loss: Tensor | None = None) -> list[tuple[Any, Variable]]:
        """Gradients of ``loss`` with respect to ``var_list``.

        Returns:
            ``[(gradient, variable), ...]``; a gradient is a Tensor, an IndexedSlices or
            None when the variable does not affect ``loss``.

        Raises:
            ValueError: bad ``gate_gradients``, or no variables to optimize.
            TypeError: ``loss`` is not floating point, or ``var_list`` holds a non-variable.
        """
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(
                f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                f"Optimizer.GATE_GRAPH. Not {gate_gradients}")
        if callable(loss):
            loss = loss()
        loss = convert_to_tensor(loss)
        _assert_valid_dtypes([loss])
        if var_list is None:
            var_list = trainable_variables() + get_default_graph().get_collection(
                GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        var_list = _expand_partitioned(list(var_list))
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError(f"Unsupported type in var_list: {type(v).__name__} ({v!r}); "
                                "pass tf.Variable objects.")
        grads = _gradients(loss, var_list, grad_ys=grad_loss,
                           colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = control_flow_ops.tuple(list(grads))
        pairs = list(zip(grads, var_list))
        _assert_valid_dtypes([v for g, v in pairs if g is not None])
        return pairs

    def apply_gradients(self, grads_and_vars: Sequence[tuple[Any, Variable]],
                        global_step: Variable | None = None, name: str | None = None) -> Operation:
        """Applies gradients; returns an op that also increments ``global_step`` if given.

        Args:
            grads_and_vars: ``(gradient, variable)`` pairs from :meth:`compute_gradients`.
            global_step: a variable to increment by one after the updates.
            name: the name of the returned op (default: the optimizer's name).

        Returns:
            The Operation applying every update.

        Raises:
            ValueError: no pair has a gradient, or a variable appears twice.
            TypeError: a gradient is not convertible to a Tensor or IndexedSlices.
        """
        for aggregate in _GRADIENT_AGGREGATORS:  # e.g. a tf.distribute cross-replica mean
            grads_and_vars = aggregate(list(grads_and_vars))
        live = _convert_gradients(grads_and_vars)
        graph = get_default_graph()
        var_list = [v for _, v in live]
        with graph.control_dependencies(None), graph.colocate_with(None):
            self._create_slots(var_list)
        update_ops = []
        with graph.name_scope(name or self._name) as scope_name:
            scope_name = scope_name.rstrip("/")
            self._prepare()
            for g, v in live:
                with graph.name_scope("update_" + v.op.name), graph.colocate_with(v.op):
                    if isinstance(g, IndexedSlices):
                        update_ops.append(_as_op(self._apply_sparse_duplicate_indices(g, v)))
                    else:
                        update_ops.append(_as_op(self._apply_dense(g, v)))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope_name)
            else:
                with graph.control_dependencies([self._finish(update_ops, "update")]):
                    with graph.colocate_with(global_step.op):
                        apply_updates = global_step.assign_add(
                            cast_ops.cast(1, global_step.dtype), name=scope_name).op
        train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
        if apply_updates not in train_ops:
            train_ops.append(apply_updates)
        return apply_updates

    # --- slots ----------------------------------------------------------------------------
    def get_slot_names(self) -> list[str]:
        """Names of the slots this optimizer creates (``["m", "v"]`` for Adam)."""
        return sorted(self._slots)

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot variable ``name`` of ``var``, or None."""
        slots = self._slots.get(name)
        return None if slots is None else slots.get(var)

    def variables(self) -> list[Variable]:
        """Every variable the optimizer created in the current graph (slots and non-slot
        state such as Adam's beta powers), sorted by name as in TensorFlow."""
        graph = get_default_graph()
        out = [v for slots in self._slots.values() for v in slots.values()]
        out += list(self._non_slot_variables.values())
        return sorted((v for v in out if v.graph is graph), key=lambda v: v.name)

    def _slot_dict(self, slot_name: str) -> dict[Variable, Variable]:
        return self._slots.setdefault(slot_name, {})

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        """A slot of zeros shaped like ``var``, colocated with it."""
        return self._get_or_make_slot_with_initializer(
            var, lambda shape, dtype: array_ops.zeros(shape, dtype), var.get_shape(), var.dtype,
            slot_name, op_name)

    def _filled_slot(self, var: Variable, value: float, slot_name: str, op_name: str) -> Variable:
        """A slot shaped like ``var`` filled with ``value`` (a ``Fill`` op, so a huge
        embedding's slot does not put a huge constant into the graph)."""
        def fill(shape: list[int], dtype: Any) -> Tensor:
            return array_ops.fill(shape, convert_to_tensor(value, dtype=dtype))

        return self._get_or_make_slot_with_initializer(
            var, fill, var.get_shape(), var.dtype, slot_name, op_name)

    def _get_or_make_slot(self, var: Variable, val: Any, slot_name: str, op_name: str) -> Variable:
        """A slot initialized from the tensor ``val``."""
        slots = self._slot_dict(slot_name)
        if var not in slots:
            slots[var] = self._make_slot(var, lambda: convert_to_tensor(val), op_name)
        return slots[var]

    def _get_or_make_slot_with_initializer(self, var: Variable, initializer: Any, shape: Any,
                                           dtype: Any, slot_name: str, op_name: str) -> Variable:
        """A slot initialized by ``initializer(shape, dtype)`` (an ``init_ops`` initializer
        or any callable with that signature)."""
        slots = self._slot_dict(slot_name)
        if var not in slots:
            if not var.get_shape().is_fully_defined():
                slots[var] = self._make_slot(
                    var, lambda: cast_ops.cast(array_ops.zeros_like(var.initial_value), var.dtype)
                    + initializer([], dtype), op_name)
            else:
                dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
                slots[var] = self._make_slot(var, lambda: initializer(dims, dtype), op_name)
        return slots[var]

    def _make_slot(self, var: Variable, init: Callable[[], Tensor], op_name: str) -> Variable:
        graph = get_default_graph()
        with graph.name_scope(None), graph.colocate_with(var.op):
            return Variable(init, trainable=False, name=f"{var.op.name}/{op_name}",
                            dtype=var.dtype, validate_shape=var.get_shape().is_fully_defined())

    def _create_non_slot_variable(self, initial_value: Any, name: str,
                                  colocate_with: Variable) -> Variable:
        """A variable not tied to one primary variable (Adam's ``beta1_power``)."""
        key = (name, colocate_with.graph)
        found = self._non_slot_variables.get(key)
        if found is None:
            graph = get_default_graph()
            with graph.control_dependencies(None), graph.name_scope(None), \
                    graph.colocate_with(colocate_with.op):
                found = Variable(initial_value, name=name, trainable=False)
            self._non_slot_variables[key] = found
        return found

    def _get_non_slot_variable(self, name: str, graph: Graph | None = None) -> Variable | None:
        graph = graph or get_default_graph()
        return self._non_slot_variables.get((name, graph))

    # --- hooks ----------------------------------------------------------------------------
    def _create_slots(self, var_list: list[Variable]) -> None:
        pass

    def _prepare(self) -> None:
        pass

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._resource_apply_dense(grad, var)

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        raise NotImplementedError(
            f"{type(self).__name__} must implement _apply_dense or _resource_apply_dense")

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Operation:
        """Sums the values of repeated indices, then calls :meth:`_apply_sparse`."""
        values, indices = _deduplicate(grad)
        return self._apply_sparse(IndexedSlices(values, indices, grad.dense_shape), var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Operation:
        return self._resource_apply_sparse(grad.values, var, grad.indices)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        raise NotImplementedError(
            f"{type(self).__name__} does not support sparse gradients (IndexedSlices) for "
            f"variable {var.op.name}: implement _apply_sparse or _resource_apply_sparse")

    def _finish(self, update_ops: list[Operation], name_scope: str) -> Operation:
        return control_flow_ops.group(*update_ops, name=name_scope)

    def _call_if_callable(self, value: Any) -> Any:
        return value() if callable(value) else value

    # --- hyperparameters ------------------------------------------------------------------
    def _prepare_hyper(self, **values: Any) -> None:
        """Converts hyperparameters (floats, callables, tensors) to tensors named after
        them, in the ``apply_gradients`` name scope (``Adam/learning_rate``)."""
        self._hyper_tensors = {name: hyperparameter(v, name) for name, v in values.items()}

    def _hyper(self, name: str, var: Variable) -> Tensor:
        """Hyperparameter ``name`` in ``var``'s dtype (a Cast only when they differ)."""
        return cast_ops.cast(self._hyper_tensors[name], var.dtype)


def _as_op(update: Any) -> Operation:
    return update if isinstance(update, Operation) else update.op


def _convert_gradients(grads_and_vars: Sequence[tuple[Any, Variable]]) -> list[tuple[Any, Variable]]:
    """The pairs that have a gradient, with gradients converted to Tensor/IndexedSlices."""
    pairs = list(grads_and_vars)
    if not pairs:
        raise ValueError("No variables provided.")
    live: list[tuple[Any, Variable]] = []
    seen: set[Variable] = set()
    for g, v in pairs:
        if g is not None and not isinstance(g, (Tensor, IndexedSlices)):
            try:
                g = convert_to_tensor(g)
            except (TypeError, ValueError):
                raise TypeError(
                    f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g!r}"
                ) from None
        if v in seen:
            raise ValueError(f"Duplicate variable {v.name} in grads_and_vars; sum its gradients "
                             "first.")
        seen.add(v)
        if g is not None:
            live.append((g, v))
    if not live:
        raise ValueError(
            f"No gradients provided for any variable: {[(str(g), str(v)) for g, v in pairs]}.")
    return live


def _assert_valid_dtypes(tensors: Sequence[Any]) -> None:
    for t in tensors:
        if t.dtype not in _VALID_DTYPES:
            raise TypeError(
                f"Invalid type {t.dtype.name} for {t.name}, expected: "
                f"[{', '.join(d.name for d in _VALID_DTYPES)}].")


def _deduplicate(grad: IndexedSlices) -> tuple[Tensor, Tensor]:
    """Sums the values of repeated indices (``tf.unique`` + ``unsorted_segment_sum``)."""
    from flowmesh.ops.manip_ops import unique

    unique_indices, positions = unique(grad.indices)
    summed = unsorted_segment_sum(grad.values, positions, array_ops.shape(unique_indices)[0])
    return summed, unique_indices


def _expand_partitioned(var_list: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in var_list:
        parts = getattr(v, "_get_variable_list", None)
        out.extend(parts() if parts is not None else [v])
    return out


def hyperparameter(value: Any, name: str) -> Tensor:
    """Converts a float / callable / tensor hyperparameter to a tensor.

    Python numbers become float32 constants (cast per variable dtype by the optimizers,
    as TensorFlow does); tensors keep their dtype.
    """
    if callable(value):
        value = value()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return convert_to_tensor(float(value), dtype=dtypes.float32, name=name)
    return convert_to_tensor(value, name=name)

