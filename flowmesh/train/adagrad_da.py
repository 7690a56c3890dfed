"""``tf.train.AdagradDAOptimizer``: Adagrad dual averaging (Duchi et al., 2011), as
TensorFlow's ``ApplyAdagradDA`` / ``SparseApplyAdagradDA`` kernels compute it::

    g_acc  += grad                   gg_acc += grad * grad          T = global_step + 1
    var = -lr * sign(g_acc) * max(|g_acc| - l1 * T, 0) / (l2 * T * lr + sqrt(gg_acc))

(without L1, ``sign(g) * max(|g|, 0)`` is ``g`` exactly). The new value does not depend on
the old one: the variable is the solution of the regularized dual-averaging problem, so
the update is an assignment. Sparse gradients update only their rows.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Operation, Tensor, control_dependencies
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, state_ops
from flowmesh.ops.variables import Variable
from flowmesh.train.optimizer import Optimizer


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging, for sparse linear models with L1/L2 regularization.

    Args:
        learning_rate: float, scalar tensor or callable.
        global_step: the training step variable (``T - 1`` above); the update reads it, so pass
            the same variable to ``minimize``/``apply_gradients``.
        initial_gradient_squared_accumulator_value: start of the squared-gradient slot
            (must be positive).
        l1_regularization_strength, l2_regularization_strength: >= 0.
        use_locking: take the variable's lock while updating it.
        name: name scope and slot suffix (``w/AdagradDA``, ``w/AdagradDA_1``).

    Raises:
        ValueError: ``initial_gradient_squared_accumulator_value`` is not positive, or no
            ``global_step`` was given.
    """

    def __init__(self, learning_rate: Any, global_step: Any,
                 initial_gradient_squared_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0, l2_regularization_strength: float = 0.0,
                 use_locking: bool = False, name: str = "AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             f"{initial_gradient_squared_accumulator_value}")
        if global_step is None:
            raise ValueError("AdagradDAOptimizer needs global_step (the training step variable, "
                             "e.g. tf.train.get_or_create_global_step()).")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._global_step = global_step
        self._initial = initial_gradient_squared_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._filled_slot(v, self._initial, "gradient_squared_accumulator", self._name)

    def _prepare(self) -> None:
        self._prepare_hyper(learning_rate=self._learning_rate, l1_regularization_strength=self._l1,
                            l2_regularization_strength=self._l2)
        # Read once per step, before the updates (TensorFlow's _global_step_on_worker).
        self._step_on_worker = array_ops.identity(self._global_step) + 1

    def _dual_average(self, g_acc: Tensor, gg_acc: Tensor, var: Variable) -> Tensor:
        lr = self._hyper("learning_rate", var)
        l1 = self._hyper("l1_regularization_strength", var)
        l2 = self._hyper("l2_regularization_strength", var)
        step = cast_ops.cast(self._step_on_worker, var.dtype)
        shrunk = math_ops.sign(g_acc) * math_ops.maximum(math_ops.abs(g_acc) - l1 * step, 0.0)
        return -lr * shrunk / (l2 * step * lr + math_ops.sqrt(gg_acc))

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        lock = self._use_locking
        g_acc = state_ops.assign_add(self.get_slot(var, "gradient_accumulator"), grad,
                                     use_locking=lock)
        gg_acc = state_ops.assign_add(self.get_slot(var, "gradient_squared_accumulator"),
                                      grad * grad, use_locking=lock)
        with control_dependencies([g_acc, gg_acc]):
            return state_ops.assign(var, self._dual_average(g_acc, gg_acc, var),
                                    use_locking=lock).op

    def _apply_sparse(self, grad: Any, var: Variable) -> Operation:
        lock, indices = self._use_locking, grad.indices
        g_slot = self.get_slot(var, "gradient_accumulator")
        gg_slot = self.get_slot(var, "gradient_squared_accumulator")
        g_rows = gather_ops.gather(g_slot.read_value(), indices) + grad.values
        gg_rows = gather_ops.gather(gg_slot.read_value(), indices) + grad.values * grad.values
        updates = [state_ops.scatter_update(g_slot, indices, g_rows, use_locking=lock),
                   state_ops.scatter_update(gg_slot, indices, gg_rows, use_locking=lock)]
        with control_dependencies(updates):
            new = self._dual_average(g_rows, gg_rows, var)
            return state_ops.scatter_update(var, indices, new, use_locking=lock).op
