"""``tf.train.AdamOptimizer`` (Kingma & Ba), with TensorFlow's update formula::

    lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)
    m    = beta1 * m + (1 - beta1) * g
    v    = beta2 * v + (1 - beta2) * g * g
    var -= lr_t * m / (sqrt(v) + epsilon)

``beta1^t`` and ``beta2^t`` live in two non-slot variables, ``beta1_power`` and
``beta2_power``, colocated with the first variable by name (so every worker puts them on
the same parameter server) and advanced once per step after all updates. Sparse
gradients follow TensorFlow's ``_apply_sparse``: the moments decay on every row and the
gradient rows are added in, fused in one kernel.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Graph, Operation, Tensor, get_default_graph
from flowmesh.core.indexed_slices import IndexedSlices
from flowmesh.ops import cast_ops, control_flow_ops, math_ops
from flowmesh.ops.training_ops import apply_op
from flowmesh.ops.variables import Variable
from flowmesh.train.optimizer import Optimizer


class AdamOptimizer(Optimizer):
    """Adam; slots ``m`` and ``v`` per variable.

    Args:
        learning_rate: float, scalar tensor or callable.
        beta1: decay of the first-moment estimate.
        beta2: decay of the second-moment estimate.
        epsilon: added to ``sqrt(v)`` (TensorFlow's "epsilon hat").
        use_locking: take the variable's lock while updating it.
        name: name scope of the update ops and suffix of the slots (``w/Adam``, ``w/Adam_1``).

    Example:
        >>> train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    """

    def __init__(self, learning_rate: Any = 0.001, beta1: Any = 0.9, beta2: Any = 0.999,
                 epsilon: Any = 1e-08, use_locking: bool = False, name: str = "Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self, graph: Graph | None = None) -> tuple[Variable, Variable]:
        graph = graph or get_default_graph()
        beta1_power = self._get_non_slot_variable("beta1_power", graph)
        beta2_power = self._get_non_slot_variable("beta2_power", graph)
        assert beta1_power is not None and beta2_power is not None
        return beta1_power, beta2_power

    def _create_slots(self, var_list: list[Variable]) -> None:
        first_var = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._call_if_callable(self._beta1), "beta1_power",
                                       first_var)
        self._create_non_slot_variable(self._call_if_callable(self._beta2), "beta2_power",
                                       first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self) -> None:
        self._prepare_hyper(learning_rate=self._lr, beta1=self._beta1, beta2=self._beta2,
                            epsilon=self._epsilon)

    def _inputs(self, var: Variable) -> list[Tensor]:
        beta1_power, beta2_power = self._get_beta_accumulators(var.graph)
        return [var.handle, self.get_slot(var, "m").handle, self.get_slot(var, "v").handle,
                cast_ops.cast(beta1_power.value(), var.dtype),
                cast_ops.cast(beta2_power.value(), var.dtype),
                self._hyper("learning_rate", var), self._hyper("beta1", var),
                self._hyper("beta2", var), self._hyper("epsilon", var)]

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return apply_op("ResourceApplyAdam", self._inputs(var) + [grad],
                        {"use_locking": self._use_locking})

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Operation:
        return apply_op("ResourceSparseApplyAdam",
                        self._inputs(var) + [grad.values, grad.indices],
                        {"use_locking": self._use_locking})

    def _finish(self, update_ops: list[Operation], name_scope: str) -> Operation:
        graph = get_default_graph()
        beta1_power, beta2_power = self._get_beta_accumulators(graph)
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            update_beta1 = beta1_power.assign(
                math_ops.multiply(beta1_power.value(), self._hyper_tensors["beta1"]),
                use_locking=self._use_locking)
            update_beta2 = beta2_power.assign(
                math_ops.multiply(beta2_power.value(), self._hyper_tensors["beta2"]),
                use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)
