"""``tf.train.ProximalGradientDescentOptimizer`` and ``ProximalAdagradOptimizer`` (FOBOS with
L1/L2 regularization), as TensorFlow's ``ApplyProximalGradientDescent`` /
``ApplyProximalAdagrad`` compute them::

    prox = var - lr * grad                        (Adagrad: accum += grad^2, lr = lr / sqrt(accum))
    var  = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)

The updates are graph ops (reads, arithmetic, assignments); sparse gradients update only
the rows they touch (``scatter_update`` after summing repeated indices).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Operation, Tensor, control_dependencies
from flowmesh.ops import gather_ops, math_ops, state_ops
from flowmesh.ops.variables import Variable
from flowmesh.train.optimizer import Optimizer


def _prox(prox: Tensor, lr: Tensor, l1: Tensor, l2: Tensor) -> Tensor:
    shrunk = math_ops.sign(prox) * math_ops.maximum(math_ops.abs(prox) - lr * l1, 0.0)
    return shrunk / (1.0 + lr * l2)


class ProximalGradientDescentOptimizer(Optimizer):
    """Proximal gradient descent with ``l1_regularization_strength`` and
    ``l2_regularization_strength`` (both >= 0)."""

    def __init__(self, learning_rate: Any, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._lr, self._l1, self._l2 = learning_rate, l1_regularization_strength, l2_regularization_strength

    def _prepare(self) -> None:
        self._prepare_hyper(learning_rate=self._lr, l1_regularization_strength=self._l1,
                            l2_regularization_strength=self._l2)

    def _hypers(self, var: Variable) -> tuple[Tensor, Tensor, Tensor]:
        return (self._hyper("learning_rate", var), self._hyper("l1_regularization_strength", var),
                self._hyper("l2_regularization_strength", var))

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        lr, l1, l2 = self._hypers(var)
        new = _prox(var.read_value() - lr * grad, lr, l1, l2)
        return state_ops.assign(var, new, use_locking=self._use_locking).op

    def _apply_sparse(self, grad: Any, var: Variable) -> Operation:
        lr, l1, l2 = self._hypers(var)
        rows = gather_ops.gather(var.read_value(), grad.indices)
        new = _prox(rows - lr * grad.values, lr, l1, l2)
        return state_ops.scatter_update(var, grad.indices, new, use_locking=self._use_locking).op


class ProximalAdagradOptimizer(ProximalGradientDescentOptimizer):
    """Proximal Adagrad; one ``accumulator`` slot per variable starting at
    ``initial_accumulator_value`` (> 0).

    Raises:
        ValueError: ``initial_accumulator_value`` is not positive.
    """

    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0, l2_regularization_strength: float = 0.0,
                 use_locking: bool = False, name: str = "ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(learning_rate, l1_regularization_strength, l2_regularization_strength, use_locking, name)
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._filled_slot(v, self._initial, "accumulator", self._name)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        lr, l1, l2 = self._hypers(var)
        acc = state_ops.assign_add(self.get_slot(var, "accumulator"), grad * grad, use_locking=self._use_locking)
        with control_dependencies([acc]):
            step = lr * math_ops.rsqrt(acc)
            new = _prox(var.read_value() - step * grad, step, l1, l2)
            return state_ops.assign(var, new, use_locking=self._use_locking).op

    def _apply_sparse(self, grad: Any, var: Variable) -> Operation:
        lr, l1, l2 = self._hypers(var)
        slot = self.get_slot(var, "accumulator")
        acc_rows = gather_ops.gather(slot.read_value(), grad.indices) + grad.values * grad.values
        acc = state_ops.scatter_update(slot, grad.indices, acc_rows, use_locking=self._use_locking)
        with control_dependencies([acc]):
            step = lr * math_ops.rsqrt(acc_rows)
            rows = gather_ops.gather(var.read_value(), grad.indices)
            new = _prox(rows - step * grad.values, step, l1, l2)
            return state_ops.scatter_update(var, grad.indices, new, use_locking=self._use_locking).op
