"""Keras optimizers written as update formulas of graph ops: ``Nadam`` and ``Adamax``
(tf-keras's legacy optimizers, the ones graph-mode Keras trains with), ``AdamW``, ``Lion``
and ``Adafactor`` (tf-keras's newer optimizers). Each is a ``tf.train`` optimizer whose
``_resource_apply_dense`` assigns the formula's new values; sparse gradients are applied
densely. The step ``t`` is the Keras optimizer's ``iterations + 1``."""

from __future__ import annotations

from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import get_default_graph
from flowmesh.ops import array_ops, cast_ops, control_flow_ops, math_ops, reduction_ops
from flowmesh.train.optimizer import Optimizer as TrainOptimizer


class FormulaOptimizer(TrainOptimizer):
    """A ``tf.train`` optimizer from ``slots`` (name -> shape function) and ``update(var,
    grad, slots, t) -> {slot or "var": new value}`` (the variable's new value under ``var``)."""

    slot_names: tuple[str, ...] = ()

    def __init__(self, keras_optimizer: Any, learning_rate: Any, name: str):
        super().__init__(False, name)
        self._keras, self._lr = keras_optimizer, learning_rate

    def _slot_shape(self, name: str, var: Any) -> list[int]:
        return var.shape.as_list()

    def _create_slots(self, var_list: list[Any]) -> None:
        from flowmesh.ops.array_ops import zeros

        for var in var_list:
            for name in self.slot_names:
                shape = self._slot_shape(name, var)
                self._get_or_make_slot_with_initializer(var, lambda s, dtype=None, **kw: zeros(s, dtype=dtype),
                                                        shape, var.dtype.base_dtype, name, self._name)

    def _step(self, var: Any) -> Any:
        return cast_ops.cast(self._keras.iterations, var.dtype.base_dtype) + 1.0

    def _resource_apply_dense(self, grad: Any, var: Any) -> Any:
        slots = {name: self.get_slot(var, name) for name in self.slot_names}
        lr = cast_ops.cast(convert_to_tensor(self._lr), var.dtype.base_dtype)
        new = self.update(var, grad, {k: v.read_value() for k, v in slots.items()}, self._step(var), lr)
        ops = [slots[k].assign(v) for k, v in new.items() if k != "var"]
        with get_default_graph().control_dependencies(ops):
            return control_flow_ops.group(var.assign(new["var"]), *ops)

    def _resource_apply_sparse(self, grad: Any, var: Any, indices: Any) -> Any:
        from flowmesh.ops.segment_ops import unsorted_segment_sum

        dense = unsorted_segment_sum(grad, indices, array_ops.shape(var)[0])
        return self._resource_apply_dense(dense, var)

    def update(self, var: Any, grad: Any, slots: dict[str, Any], t: Any, lr: Any) -> dict[str, Any]:
        raise NotImplementedError


class _Adamax(FormulaOptimizer):
    slot_names = ("m", "v")

    def update(self, var: Any, grad: Any, slots: dict[str, Any], t: Any, lr: Any) -> dict[str, Any]:
        k = self._keras
        m = k.beta_1 * slots["m"] + (1.0 - k.beta_1) * grad
        v = math_ops.maximum(k.beta_2 * slots["v"], math_ops.abs(grad))
        lr_t = lr / (1.0 - math_ops.pow(k.beta_1, t))
        return {"m": m, "v": v, "var": var.read_value() - lr_t * m / (v + k.epsilon)}


class _Nadam(FormulaOptimizer):
    """tf-keras's legacy Nadam: the momentum schedule's product lives in ``momentum_cache``."""

    slot_names = ("m", "v")

    def _create_slots(self, var_list: list[Any]) -> None:
        super()._create_slots(var_list)
        self._create_non_slot_variable(1.0, "momentum_cache", min(var_list, key=lambda v: v.name))

    def _prepare(self) -> None:
        k = self._keras
        cache = self._get_non_slot_variable("momentum_cache", get_default_graph())
        t = cast_ops.cast(k.iterations, "float32") + 1.0
        self._m_t = k.beta_1 * (1.0 - 0.5 * math_ops.pow(0.96, 0.004 * t))
        self._m_t_1 = k.beta_1 * (1.0 - 0.5 * math_ops.pow(0.96, 0.004 * (t + 1.0)))
        self._schedule_new = cache.assign(cache.read_value() * self._m_t)
        self._schedule_next = self._schedule_new * self._m_t_1

    def update(self, var: Any, grad: Any, slots: dict[str, Any], t: Any, lr: Any) -> dict[str, Any]:
        k = self._keras
        g_prime = grad / (1.0 - self._schedule_new)
        m = k.beta_1 * slots["m"] + (1.0 - k.beta_1) * grad
        m_prime = m / (1.0 - self._schedule_next)
        v = k.beta_2 * slots["v"] + (1.0 - k.beta_2) * math_ops.square(grad)
        v_prime = v / (1.0 - math_ops.pow(k.beta_2, t))
        m_bar = (1.0 - self._m_t) * g_prime + self._m_t_1 * m_prime
        return {"m": m, "v": v, "var": var.read_value() - lr * m_bar / (math_ops.sqrt(v_prime) + k.epsilon)}



class _AdamW(FormulaOptimizer):
    slot_names = ("m", "v")

    def update(self, var: Any, grad: Any, slots: dict[str, Any], t: Any, lr: Any) -> dict[str, Any]:
        k = self._keras
        value = var.read_value()
        if k.weight_decay and not k._excluded(var):
            value = value - value * k.weight_decay * lr
        m = slots["m"] + (grad - slots["m"]) * (1.0 - k.beta_1)
        v = slots["v"] + (math_ops.square(grad) - slots["v"]) * (1.0 - k.beta_2)
        alpha = lr * math_ops.sqrt(1.0 - math_ops.pow(k.beta_2, t)) / (1.0 - math_ops.pow(k.beta_1, t))
        return {"m": m, "v": v, "var": value - m * alpha / (math_ops.sqrt(v) + k.epsilon)}


class _Lion(FormulaOptimizer):
    slot_names = ("m",)

    def update(self, var: Any, grad: Any, slots: dict[str, Any], t: Any, lr: Any) -> dict[str, Any]:
        k = self._keras
        step = math_ops.sign(slots["m"] * k.beta_1 + grad * (1.0 - k.beta_1))
        value = var.read_value()
        if k.weight_decay and not k._excluded(var):
            value = value - value * k.weight_decay * lr
        return {"m": slots["m"] * k.beta_2 + grad * (1.0 - k.beta_2), "var": value - lr * step}


class _Adafactor(FormulaOptimizer):
    slot_names = ("r", "c", "v")

    def _slot_shape(self, name: str, var: Any) -> list[int]:
        shape = var.shape.as_list()
        if len(shape) < 2:
            return shape if name == "v" else [0]
        return {"r": shape[:-1], "c": shape[:-2] + shape[-1:], "v": shape}[name]

    def update(self, var: Any, grad: Any, slots: dict[str, Any], t: Any, lr: Any) -> dict[str, Any]:
        k = self._keras
        value = var.read_value()
        if k.relative_step:
            lr = math_ops.minimum(lr, math_ops.rsqrt(t))
        rho = math_ops.minimum(lr, math_ops.rsqrt(t))
        alpha = math_ops.maximum(k.epsilon_2, _rms(value)) * rho
        squared = math_ops.square(grad) + k.epsilon_1
        beta = 1.0 - math_ops.pow(t, k.beta_2_decay)
        new: dict[str, Any] = {"r": slots["r"], "c": slots["c"]}
        if var.shape.rank >= 2:
            new["r"] = beta * slots["r"] + (1.0 - beta) * reduction_ops.reduce_mean(squared, axis=-1)
            new["c"] = beta * slots["c"] + (1.0 - beta) * reduction_ops.reduce_mean(squared, axis=-2)
            row = new["r"] / reduction_ops.reduce_mean(new["r"], axis=-1, keepdims=True)
            new["v"] = array_ops.expand_dims(row, -1) * array_ops.expand_dims(new["c"], -2)
        else:
            new["v"] = beta * slots["v"] + (1.0 - beta) * squared
        u = grad * math_ops.rsqrt(new["v"])
        u_hat = u / math_ops.maximum(1.0, _rms(u) / k.clip_threshold)
        new["var"] = value - alpha * u_hat
        return new


def _rms(x: Any) -> Any:
    return math_ops.sqrt(reduction_ops.reduce_mean(math_ops.square(x)))
