"""Learning-rate schedules (``tf.train.exponential_decay`` and friends).

Each function builds a small graph computing the rate from ``global_step``, so the rate
changes as training advances; pass the result as an optimizer's ``learning_rate``. All
arithmetic is in the learning rate's dtype (float32 for Python numbers), as in TensorFlow.

*(flowmesh)* :func:`linear_scaling_warmup` implements the linear scaling rule with gradual
warmup of Goyal et al. (2017), "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph
from flowmesh.ops import array_ops, cast_ops, gather_ops, math_ops, select_ops
from flowmesh.ops.reduction_ops import reduce_sum


def _require_step(global_step: Any, fn: str) -> Any:
    if global_step is None:
        raise ValueError(f"global_step is required for {fn}.")
    return global_step


def _step_fraction(learning_rate: Any, global_step: Any, decay_steps: Any,
                   staircase: bool) -> tuple[Tensor, Tensor]:
    """(learning_rate tensor, global_step / decay_steps in its dtype, floored if staircase)."""
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    step = cast_ops.cast(global_step, lr.dtype)
    p = math_ops.truediv(step, cast_ops.cast(decay_steps, lr.dtype))
    if staircase:
        p = math_ops.floor(p)
    return lr, p


def exponential_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: str | None = None) -> Tensor:
    """``learning_rate * decay_rate ^ (global_step / decay_steps)``.

    Args:
        learning_rate: the initial rate (float or scalar tensor).
        global_step: the step counter (int or float scalar tensor / variable).
        decay_steps: steps per decay period (must be positive).
        decay_rate: the factor per period.
        staircase: decay at discrete intervals (integer division of the step).
        name: name of the result (default ``ExponentialDecay``).

    Returns:
        A scalar tensor of the learning rate's dtype.

    Raises:
        ValueError: ``global_step`` is None.
    """
    _require_step(global_step, "exponential_decay")
    with get_default_graph().name_scope(name or "ExponentialDecay") as scope:
        lr, p = _step_fraction(learning_rate, global_step, decay_steps, staircase)
        rate = cast_ops.cast(decay_rate, lr.dtype)
        return math_ops.multiply(lr, math_ops.pow(rate, p), name=scope)


def natural_exp_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: str | None = None) -> Tensor:
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)``.

    Args and Returns: as :func:`exponential_decay`.
    """
    _require_step(global_step, "natural_exp_decay")
    with get_default_graph().name_scope(name or "NaturalExpDecay") as scope:
        lr, p = _step_fraction(learning_rate, global_step, decay_steps, staircase)
        rate = cast_ops.cast(decay_rate, lr.dtype)
        return math_ops.multiply(lr, math_ops.exp(math_ops.negative(rate) * p), name=scope)


def inverse_time_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False, name: str | None = None) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``.

    Args and Returns: as :func:`exponential_decay`.
    """
    _require_step(global_step, "inverse_time_decay")
    with get_default_graph().name_scope(name or "InverseTimeDecay") as scope:
        lr, p = _step_fraction(learning_rate, global_step, decay_steps, staircase)
        rate = cast_ops.cast(decay_rate, lr.dtype)
        denom = math_ops.add(cast_ops.cast(1.0, lr.dtype), rate * p)
        return math_ops.truediv(lr, denom, name=scope)


def polynomial_decay(learning_rate: Any, global_step: Any, decay_steps: Any,
                     end_learning_rate: Any = 0.0001, power: Any = 1.0, cycle: bool = False,
                     name: str | None = None) -> Tensor:
    """``(lr - end) * (1 - step / decay_steps) ^ power + end``, step capped at decay_steps.

    Args:
        learning_rate: the initial rate.
        global_step: the step counter.
        decay_steps: steps over which the rate goes from ``learning_rate`` to
            ``end_learning_rate``.
        end_learning_rate: the final rate.
        power: the polynomial's power (1.0: linear).
        cycle: instead of staying at the end rate, restart with ``decay_steps`` extended to
            the next multiple past ``global_step``.
        name: name of the result (default ``PolynomialDecay``).

    Returns:
        A scalar tensor of the learning rate's dtype.

    Raises:
        ValueError: ``global_step`` is None.
    """
    _require_step(global_step, "polynomial_decay")
    with get_default_graph().name_scope(name or "PolynomialDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        end = cast_ops.cast(end_learning_rate, dtype)
        step = cast_ops.cast(global_step, dtype)
        steps = cast_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = select_ops.where(math_ops.equal(step, 0.0), array_ops.ones_like(step),
                                        math_ops.ceil(step / steps))
            steps = steps * multiplier
        else:
            step = math_ops.minimum(step, steps)
        fraction = math_ops.truediv(step, steps)
        scale = math_ops.pow(1.0 - fraction, cast_ops.cast(power, dtype))
        return math_ops.add((lr - end) * scale, end, name=scope)


def cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, alpha: Any = 0.0,
                 name: str | None = None) -> Tensor:
    """``lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)``
    (Loshchilov & Hutter's SGDR without restarts).

    Args:
        learning_rate: the initial rate.
        global_step: the step counter.
        decay_steps: steps to decay over.
        alpha: the minimum rate as a fraction of ``learning_rate``.
        name: name of the result (default ``CosineDecay``).

    Returns:
        A scalar tensor of the learning rate's dtype.

    Raises:
        ValueError: ``global_step`` is None.
    """
    _require_step(global_step, "cosine_decay")
    with get_default_graph().name_scope(name or "CosineDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        steps = cast_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(cast_ops.cast(global_step, dtype), steps)
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * (step / steps)))
        alpha_t = cast_ops.cast(alpha, dtype)
        decayed = (1.0 - alpha_t) * cosine + alpha_t
        return math_ops.multiply(lr, decayed, name=scope)


def cosine_decay_restarts(learning_rate: Any, global_step: Any, first_decay_steps: Any,
                          t_mul: float = 2.0, m_mul: float = 1.0, alpha: Any = 0.0,
                          name: str | None = None) -> Tensor:
    """Cosine decay with warm restarts (SGDR): period ``i`` lasts
    ``first_decay_steps * t_mul^i`` steps and starts at ``learning_rate * m_mul^i``.

    Args:
        learning_rate: the initial rate.
        global_step: the step counter.
        first_decay_steps: length of the first period.
        t_mul: how much longer each period is than the previous one (a Python number).
        m_mul: how much lower each restart starts than the previous one.
        alpha: the minimum rate as a fraction of ``learning_rate``.
        name: name of the result (default ``SGDRDecay``).

    Returns:
        A scalar tensor of the learning rate's dtype.

    Raises:
        ValueError: ``global_step`` is None.
    """
    _require_step(global_step, "cosine_decay_restarts")
    with get_default_graph().name_scope(name or "SGDRDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        fraction = cast_ops.cast(global_step, dtype) / cast_ops.cast(first_decay_steps, dtype)
        if float(t_mul) == 1.0:
            restart = math_ops.floor(fraction)
            fraction = fraction - restart
        else:
            restart = math_ops.floor(
                math_ops.log(1.0 - fraction * (1.0 - float(t_mul))) / math.log(float(t_mul)))
            grown = math_ops.pow(cast_ops.cast(float(t_mul), dtype), restart)
            done = (1.0 - grown) / (1.0 - float(t_mul))
            fraction = (fraction - done) / grown
        m_fac = math_ops.pow(cast_ops.cast(float(m_mul), dtype), restart)
        cosine = 0.5 * m_fac * (1.0 + math_ops.cos(math.pi * fraction))
        alpha_t = cast_ops.cast(alpha, dtype)
        return math_ops.multiply(lr, (1.0 - alpha_t) * cosine + alpha_t, name=scope)


def linear_cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any,
                        num_periods: Any = 0.5, alpha: Any = 0.0, beta: Any = 0.001,
                        name: str | None = None) -> Tensor:
    """Linear cosine decay (Bello et al., 2017)::

        s = min(step, decay_steps)
        lr * ((alpha + (decay_steps - s) / decay_steps)
              * 0.5 * (1 + cos(pi * 2 * num_periods * s / decay_steps)) + beta)

    Args:
        learning_rate: the initial rate.
        global_step: the step counter.
        decay_steps: steps to decay over.
        num_periods: periods of the cosine part.
        alpha, beta: see the formula.
        name: name of the result (default ``LinearCosineDecay``).

    Returns:
        A scalar tensor of the learning rate's dtype.

    Raises:
        ValueError: ``global_step`` is None.
    """
    _require_step(global_step, "linear_cosine_decay")
    with get_default_graph().name_scope(name or "LinearCosineDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        steps = cast_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(cast_ops.cast(global_step, dtype), steps)
        linear = (steps - step) / steps
        fraction = 2.0 * cast_ops.cast(num_periods, dtype) * (step / steps)
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * fraction))
        decayed = (cast_ops.cast(alpha, dtype) + linear) * cosine + cast_ops.cast(beta, dtype)
        return math_ops.multiply(lr, decayed, name=scope)


def noisy_linear_cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any,
                              initial_variance: Any = 1.0, variance_decay: Any = 0.55,
                              num_periods: Any = 0.5, alpha: Any = 0.0, beta: Any = 0.001,
                              name: str | None = None) -> Tensor:
    """Linear cosine decay with Gaussian noise on the linear part (Bello et al., 2017)::

        s = min(step, decay_steps)
        eps ~ N(0, initial_variance / (1 + s) ** variance_decay)
        lr * ((alpha + (decay_steps - s) / decay_steps + eps)
              * 0.5 * (1 + cos(pi * 2 * num_periods * s / decay_steps)) + beta)

    The noise is a ``tf.random_normal`` draw per evaluation, following the graph- and
    op-level seed rules; its distribution is TensorFlow's, the drawn values are not
    (flowmesh's generator is not TensorFlow's Philox stream).

    Args:
        learning_rate: the initial rate.
        global_step: the step counter.
        decay_steps: steps to decay over.
        initial_variance: the noise variance at step 0.
        variance_decay: how fast the variance decays with the step.
        num_periods, alpha, beta: see :func:`linear_cosine_decay`.
        name: name of the result (default ``NoisyLinearCosineDecay``).

    Returns:
        A scalar tensor of the learning rate's dtype.

    Raises:
        ValueError: ``global_step`` is None.
    """
    from flowmesh.ops.random_ops import random_normal

    _require_step(global_step, "noisy_linear_cosine_decay")
    with get_default_graph().name_scope(name or "NoisyLinearCosineDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        steps = cast_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(cast_ops.cast(global_step, dtype), steps)
        linear = (steps - step) / steps
        variance = cast_ops.cast(initial_variance, dtype) / math_ops.pow(
            1.0 + step, cast_ops.cast(variance_decay, dtype))
        noisy = linear + random_normal([], stddev=math_ops.sqrt(variance), dtype=dtype)
        fraction = 2.0 * cast_ops.cast(num_periods, dtype) * (step / steps)
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * fraction))
        decayed = (cast_ops.cast(alpha, dtype) + noisy) * cosine + cast_ops.cast(beta, dtype)
        return math_ops.multiply(lr, decayed, name=scope)


def piecewise_constant(x: Any, boundaries: Sequence[Any], values: Sequence[Any],
                       name: str | None = None) -> Tensor:
    """``values[0]`` while ``x <= boundaries[0]``, ``values[i]`` while
    ``boundaries[i-1] < x <= boundaries[i]``, ``values[-1]`` after the last boundary.

    Args:
        x: a scalar tensor (typically the global step).
        boundaries: increasing boundaries (converted to ``x``'s dtype).
        values: one more value than boundaries, all of one dtype.
        name: name of the result (default ``PiecewiseConstant``).

    Returns:
        A scalar tensor of the values' dtype.

    Raises:
        ValueError: ``len(values) != len(boundaries) + 1``.
    """
    if len(values) != len(boundaries) + 1:
        raise ValueError(
            "The length of boundaries should be 1 less than the length of values "
            f"(got {len(boundaries)} boundaries and {len(values)} values)")
    with get_default_graph().name_scope(name or "PiecewiseConstant") as scope:
        x_t = convert_to_tensor(x)
        if not boundaries:
            return array_ops.identity(convert_to_tensor(values[0]), name=scope)
        bounds = [cast_ops.cast(convert_to_tensor(b), x_t.dtype) for b in boundaries]
        above = cast_ops.cast(math_ops.greater(x_t, array_ops.stack(bounds)), dtypes.int32)
        table = array_ops.stack([convert_to_tensor(v) for v in values])
        return gather_ops.gather(table, reduce_sum(above), name=scope)


def linear_scaling_warmup(base_lr: float, num_replicas: int, warmup_steps: int,
                          global_step: Any = None, name: str | None = None) -> Tensor:
    """*(flowmesh)* The linear scaling rule with gradual warmup (Goyal et al., 2017).

    With ``k = num_replicas`` workers each using the single-worker batch, the effective
    batch is ``k`` times larger, so the target rate is ``k * base_lr``. To avoid early
    instability the rate starts at ``base_lr`` and grows by a constant amount per step,
    reaching the target after ``warmup_steps`` steps::

        lr(t) = base_lr * (1 + (k - 1) * min(t, warmup_steps) / warmup_steps)

    and ``lr(t) = k * base_lr`` for ``t >= warmup_steps`` (or always, when
    ``warmup_steps == 0``).

    Args:
        base_lr: the learning rate tuned for one replica.
        num_replicas: number of data-parallel replicas ``k`` (>= 1).
        warmup_steps: steps of gradual warmup (>= 0); Goyal et al. use 5 epochs.
        global_step: the step counter (default: the graph's global step).
        name: name of the result (default ``LinearScalingWarmup``).

    Returns:
        A float32 scalar tensor.

    Raises:
        ValueError: bad ``num_replicas`` / ``warmup_steps``, or no global step exists.

    Example:
        >>> lr = tf.train.linear_scaling_warmup(0.1, hvd.size(), warmup_steps=500)
        >>> opt = tf.train.MomentumOptimizer(lr, 0.9)
    """
    if int(num_replicas) != num_replicas or num_replicas < 1:
        raise ValueError(f"num_replicas must be an integer >= 1, got {num_replicas!r}")
    if int(warmup_steps) != warmup_steps or warmup_steps < 0:
        raise ValueError(f"warmup_steps must be an integer >= 0, got {warmup_steps!r}")
    if global_step is None:
        from flowmesh.train.training_util import get_global_step

        global_step = get_global_step()
        if global_step is None:
            raise ValueError(
                "linear_scaling_warmup needs a global step: pass global_step or create one "
                "with tf.train.get_or_create_global_step() first.")
    target = float(base_lr) * int(num_replicas)
    with get_default_graph().name_scope(name or "LinearScalingWarmup") as scope:
        if warmup_steps == 0 or num_replicas == 1:
            return array_ops.identity(convert_to_tensor(target, dtype=dtypes.float32),
                                      name=scope)
        step = math_ops.minimum(cast_ops.cast(global_step, dtypes.float32), float(warmup_steps))
        increment = (target - float(base_lr)) / float(warmup_steps)
        return math_ops.add(step * increment, float(base_lr), name=scope)
