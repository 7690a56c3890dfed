"""TensorFlow 1.x's loss scaling (``tf.mixed_precision`` / ``tf.train.experimental``):
``FixedLossScale``, ``DynamicLossScale`` and ``MixedPrecisionLossScaleOptimizer``, which
multiplies the loss by the scale before differentiating, divides the gradients by it, and
(with a dynamic scale) skips the update and halves the scale when a gradient is not finite.

``enable_mixed_precision_graph_rewrite`` wraps the optimizer as TensorFlow does; the
float16 graph rewrite itself (Grappler's auto mixed precision) is not performed, so the
model computes in float32, as TensorFlow does on a machine without a GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.train.optimizer import Optimizer


class LossScale:
    """The base class: ``loss_scale()`` is the scale (a tensor), ``update(grads)`` returns
    ``(update op, should apply the gradients)``."""

    def __init__(self) -> None:
        self._weights: dict[str, Any] = {}

    def __call__(self) -> Tensor:
        raise NotImplementedError

    def update(self, grads: Sequence[Any]) -> tuple[Any, Any]:
        raise NotImplementedError

    def _add_weight(self, name: str, initial_value: Any, dtype: Any) -> Any:
        from flowmesh.ops.variables import Variable

        if name in self._weights:
            raise RuntimeError(f"Duplicate variables detected. {name}")
        variable = Variable(initial_value, name=name, dtype=dtype, trainable=False)
        self._weights[name] = variable
        return variable

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LossScale:
        return cls(**config)


class FixedLossScale(LossScale):
    """A constant scale.

    Raises:
        ValueError: ``loss_scale_value`` is not a Python number or is below 1.
    """

    def __init__(self, loss_scale_value: float):
        super().__init__()
        if not isinstance(loss_scale_value, (int, float)):
            raise ValueError("loss_scale_value must be a Python int or float.")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self) -> Tensor:
        return convert_to_tensor(self._loss_scale_value)

    def update(self, grads: Sequence[Any]) -> tuple[Any, Any]:
        from flowmesh.ops.control_flow_ops import no_op

        return no_op(), True

    def get_config(self) -> dict[str, Any]:
        return {"loss_scale_value": self._loss_scale_value}

    def __repr__(self) -> str:
        return f"FixedLossScale({self._loss_scale_value})"


def _all_finite(grads: Sequence[Any]) -> Tensor:
    from flowmesh.core.indexed_slices import IndexedSlices
    from flowmesh.ops import math_ops
    from flowmesh.ops.array_ops import stack
    from flowmesh.ops.reduction_ops import reduce_all

    checks = [reduce_all(math_ops.is_finite(g.values if isinstance(g, IndexedSlices) else g))
              for g in grads if g is not None]
    return reduce_all(stack(checks)) if checks else convert_to_tensor(True)


class DynamicLossScale(LossScale):
    """A scale that halves (``/ multiplier``, at least 1) when a gradient is not finite and
    doubles (``* multiplier``) after ``increment_period`` finite steps in a row; its
    variables are ``current_loss_scale`` (float32) and ``good_steps`` (int64)."""

    def __init__(self, initial_loss_scale: float = 2 ** 15, increment_period: int = 2000, multiplier: float = 2.0):
        super().__init__()
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current_loss_scale = self._add_weight("current_loss_scale", self._initial_loss_scale, dtypes.float32)
        self._num_good_steps = self._add_weight("good_steps", 0, dtypes.int64)

    @property
    def initial_loss_scale(self) -> float:
        return self._initial_loss_scale

    @property
    def increment_period(self) -> int:
        return self._increment_period

    @property
    def multiplier(self) -> float:
        return self._multiplier

    def __call__(self) -> Tensor:
        return self._current_loss_scale.read_value()

    def update(self, grads: Sequence[Any]) -> tuple[Any, Any]:
        from flowmesh.ops import math_ops
        from flowmesh.ops._structure import flatten
        from flowmesh.ops.cond import cond
        from flowmesh.ops.control_flow_ops import group, no_op

        is_finite = _all_finite(flatten(grads))
        scale, good = self._current_loss_scale, self._num_good_steps

        def increase() -> Any:
            new_scale = scale * self._multiplier
            grow = cond(math_ops.is_finite(new_scale), lambda: scale.assign(new_scale).op, no_op)
            return group(grow, good.assign(0))

        def if_finite() -> Any:
            return cond(good + 1 >= self._increment_period, increase, lambda: good.assign_add(1).op)

        def if_not_finite() -> Any:
            return group(good.assign(0), scale.assign(math_ops.maximum(scale / self._multiplier, 1.0)))

        return cond(is_finite, if_finite, if_not_finite), is_finite

    def get_config(self) -> dict[str, Any]:
        return {"initial_loss_scale": self._initial_loss_scale, "increment_period": self._increment_period,
                "multiplier": self._multiplier}

    def __repr__(self) -> str:
        return (f"DynamicLossScale(initial_loss_scale={self._initial_loss_scale}, increment_period="
                f"{self._increment_period}, multiplier={self._multiplier})")


def get(identifier: Any) -> LossScale | None:
    """A loss scale from a number (fixed), ``"dynamic"``, a ``LossScale`` or None.

    Raises:
        ValueError: anything else.
    """
    if isinstance(identifier, (int, float)):
        return FixedLossScale(identifier)
    if identifier == "dynamic":
        return DynamicLossScale()
    if isinstance(identifier, LossScale) or identifier is None:
        return identifier
    raise ValueError(f"Could not interpret loss scale identifier: {identifier}")


class MixedPrecisionLossScaleOptimizer(Optimizer):
    """Wraps ``opt`` with loss scaling (see the module docstring).

    Raises:
        ValueError: ``opt`` is not a ``tf.train.Optimizer`` or ``loss_scale`` is None.
    """

    def __init__(self, opt: Optimizer, loss_scale: Any):
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        super().__init__(opt._use_locking, opt.get_name())
        self._optimizer = opt
        self._loss_scale = get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    def compute_gradients(self, loss: Any, var_list: Any = None, gate_gradients: int = Optimizer.GATE_OP,
                          aggregation_method: Any = None, colocate_gradients_with_ops: bool = False,
                          grad_loss: Any = None) -> list[tuple[Any, Any]]:
        """``opt``'s gradients of ``loss * scale``, divided by the scale."""
        from flowmesh.core.indexed_slices import IndexedSlices
        from flowmesh.ops import math_ops

        scale = self._loss_scale()
        if callable(loss):
            inner = loss

            def loss() -> Any:
                value = inner()
                return value * math_ops.cast(scale, value.dtype)
        else:
            loss = loss * math_ops.cast(scale, loss.dtype)
        pairs = self._optimizer.compute_gradients(loss, var_list, gate_gradients, aggregation_method,
                                                  colocate_gradients_with_ops, grad_loss)
        reciprocal = 1 / scale
        out = []
        for g, v in pairs:
            if isinstance(g, IndexedSlices):
                g = IndexedSlices(g.values * reciprocal, g.indices, g.dense_shape)
            elif g is not None:
                g = g * reciprocal
            out.append((g, v))
        return out

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None, name: str | None = None) -> Operation:
        """``opt``'s update; with a dynamic scale, only when every gradient is finite, grouped
        with the scale's update."""
        from flowmesh.ops.cond import cond
        from flowmesh.ops.control_flow_ops import group, no_op

        if not isinstance(self._loss_scale, DynamicLossScale):
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        grads_and_vars = tuple(grads_and_vars)
        name = name if name is not None else self.get_name()
        update, should_apply = self._loss_scale.update([g for g, _ in grads_and_vars])
        apply = cond(should_apply, lambda: self._optimizer.apply_gradients(grads_and_vars, global_step,
                                                                           name + "-wrapped"), no_op)
        return group(apply, update, name=name)

    def variables(self) -> list[Any]:
        return self._optimizer.variables() + list(self._loss_scale._weights.values())


def enable_mixed_precision_graph_rewrite(opt: Any, loss_scale: Any = "dynamic") -> Any:
    """``opt`` wrapped in :class:`MixedPrecisionLossScaleOptimizer` (a flowmesh difference:
    the float16 rewrite of the graph is not performed, see the module docstring).

    Raises:
        ValueError: ``opt`` is not a ``tf.train.Optimizer``.
    """
    _REWRITE[0] = True
    return MixedPrecisionLossScaleOptimizer(opt, loss_scale)


def disable_mixed_precision_graph_rewrite() -> None:
    """Turns the setting :func:`enable_mixed_precision_graph_rewrite` recorded off."""
    _REWRITE[0] = False


_REWRITE = [False]
