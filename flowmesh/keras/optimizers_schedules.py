"""``tf.keras.optimizers.schedules``: learning rates as functions of the optimizer's step
(tf-keras's formulas), evaluated in the graph each step."""

from __future__ import annotations

import math
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.ops import cast_ops, math_ops


def _float(step: Any) -> Any:
    return cast_ops.cast(convert_to_tensor(step), "float32")


class LearningRateSchedule:
    """Base class: ``schedule(step) -> learning rate`` (a scalar tensor)."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError(f"Learning rate schedule {type(self).__name__} must override __call__")

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError(f"Learning rate schedule {type(self).__name__} must override get_config")

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LearningRateSchedule:
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial * decay_rate ** (step / decay_steps)`` (the exponent floored with ``staircase``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float, staircase: bool = False,
                 name: str | None = None):
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def __call__(self, step: Any) -> Any:
        p = _float(step) / float(self.decay_steps)
        if self.staircase:
            p = math_ops.floor(p)
        return self.initial_learning_rate * math_ops.pow(float(self.decay_rate), p)

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[i]`` for ``boundaries[i-1] < step <= boundaries[i]``."""

    def __init__(self, boundaries: list[Any], values: list[Any], name: str | None = None):
        if len(boundaries) != len(values) - 1:
            raise ValueError(f"The length of boundaries should be 1 less than the length of values. Received: "
                             f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of length "
                             f"{len(values)}.")
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step: Any) -> Any:
        from flowmesh.ops.select_ops import where

        step = _float(step)
        rate = convert_to_tensor(float(self.values[-1]))
        for boundary, value in reversed(list(zip(self.boundaries, self.values))):
            rate = where(math_ops.less_equal(step, float(boundary)), convert_to_tensor(float(value)), rate)
        return rate

    def get_config(self) -> dict[str, Any]:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - step / decay_steps) ** power + end`` (restarting with ``cycle``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, end_learning_rate: float = 0.0001,
                 power: float = 1.0, cycle: bool = False, name: str | None = None):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = end_learning_rate, power, cycle, name

    def __call__(self, step: Any) -> Any:
        from flowmesh.ops.select_ops import where

        step = _float(step)
        decay_steps = convert_to_tensor(float(self.decay_steps))
        if self.cycle:
            multiplier = where(math_ops.equal(step, 0.0), convert_to_tensor(1.0),
                               math_ops.ceil(step / float(self.decay_steps)))
            decay_steps = decay_steps * multiplier
        else:
            step = math_ops.minimum(step, decay_steps)
        p = step / decay_steps
        return (self.initial_learning_rate - self.end_learning_rate) * math_ops.pow(1.0 - p, float(self.power)) + \
            self.end_learning_rate

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(LearningRateSchedule):
    """``initial / (1 + decay_rate * step / decay_steps)`` (floored with ``staircase``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float, staircase: bool = False,
                 name: str | None = None):
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def __call__(self, step: Any) -> Any:
        p = _float(step) / float(self.decay_steps)
        if self.staircase:
            p = math_ops.floor(p)
        return self.initial_learning_rate / (1.0 + self.decay_rate * p)

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial`` (or, after ``warmup_steps`` of linear warmup, from
    ``warmup_target``) to ``alpha`` times it over ``decay_steps``."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0, name: str | None = None,
                 warmup_target: float | None = None, warmup_steps: int = 0):
        self.initial_learning_rate, self.decay_steps, self.alpha, self.name = \
            initial_learning_rate, decay_steps, alpha, name
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def _decay(self, step: Any, decay_from: float) -> Any:
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * (step / float(self.decay_steps))))
        return decay_from * ((1 - self.alpha) * cosine + self.alpha)

    def __call__(self, step: Any) -> Any:
        from flowmesh.ops.select_ops import where

        step = _float(step)
        if self.warmup_target is None:
            return self._decay(math_ops.minimum(step, float(self.decay_steps)), self.initial_learning_rate)
        step = math_ops.minimum(step, float(self.decay_steps + self.warmup_steps))
        warmup = (self.warmup_target - self.initial_learning_rate) * (step / float(max(self.warmup_steps, 1))) + \
            self.initial_learning_rate
        decayed = self._decay(step - float(self.warmup_steps), self.warmup_target)
        return where(math_ops.less(step, float(self.warmup_steps)), warmup, decayed)

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): periods grow by ``t_mul``, peaks by ``m_mul``."""

    def __init__(self, initial_learning_rate: float, first_decay_steps: int, t_mul: float = 2.0, m_mul: float = 1.0,
                 alpha: float = 0.0, name: str | None = None):
        self.initial_learning_rate, self.first_decay_steps = initial_learning_rate, first_decay_steps
        self.t_mul, self.m_mul, self.alpha, self.name = t_mul, m_mul, alpha, name

    def __call__(self, step: Any) -> Any:
        fraction = _float(step) / float(self.first_decay_steps)
        t_mul = float(self.t_mul)
        if t_mul == 1.0:
            restart = math_ops.floor(fraction)
            fraction = fraction - restart
        else:
            restart = math_ops.floor(math_ops.log(1.0 - fraction * (1.0 - t_mul)) / math.log(t_mul))
            done = (1.0 - math_ops.pow(t_mul, restart)) / (1.0 - t_mul)
            fraction = (fraction - done) / math_ops.pow(t_mul, restart)
        factor = math_ops.pow(float(self.m_mul), restart)
        cosine = 0.5 * factor * (1.0 + math_ops.cos(math.pi * fraction))
        return self.initial_learning_rate * ((1 - self.alpha) * cosine + self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate, "first_decay_steps": self.first_decay_steps,
                "t_mul": self.t_mul, "m_mul": self.m_mul, "alpha": self.alpha, "name": self.name}


_CLASSES = {cls.__name__: cls for cls in (ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay,
                                          InverseTimeDecay, CosineDecay, CosineDecayRestarts)}


def serialize(schedule: LearningRateSchedule) -> dict[str, Any]:
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config: dict[str, Any], custom_objects: dict | None = None) -> LearningRateSchedule:
    table = {**_CLASSES, **(custom_objects or {})}
    cls = table.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: {config['class_name']!r}. Valid: {sorted(_CLASSES)}")
    return cls.from_config(config.get("config", {}))


__all__ = ["CosineDecay", "CosineDecayRestarts", "ExponentialDecay", "InverseTimeDecay", "LearningRateSchedule",
           "PiecewiseConstantDecay", "PolynomialDecay", "deserialize", "serialize"]
