"""``tf.train.ExponentialMovingAverage``: shadow variables that track moving averages.

``apply(var_list)`` creates, for each variable ``w``, a non-trainable shadow variable
``w/ExponentialMovingAverage`` (initialized to ``w``'s initial value, colocated with ``w``)
and returns one op updating every shadow::

    shadow -= (1 - decay) * (shadow - w)

With ``num_updates`` the decay is ``min(decay, (1 + num_updates) / (10 + num_updates))``.
``variables_to_restore()`` maps shadow names to variables so a ``Saver`` loads averages
into the model's variables for evaluation.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Operation, Tensor, add_to_collection, get_default_graph, name_scope
from flowmesh.ops import array_ops, cast_ops, control_flow_ops, math_ops, state_ops
from flowmesh.ops.variables import Variable, global_variables, moving_average_variables, trainable_variables

_FLOATS = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def _op_name(x: Any) -> str:
    return x.op.name


def _shadow(primary: Any, init: Any, suffix: str) -> Variable:
    """A non-trainable global variable ``<primary>/<suffix>`` colocated with ``primary``."""
    graph = get_default_graph()
    with graph.control_dependencies(None), graph.name_scope(None), \
            graph.colocate_with(primary.op):
        return Variable(init, trainable=False, name=f"{_op_name(primary)}/{suffix}",
                        dtype=primary.dtype.base_dtype,
                        validate_shape=primary.get_shape().is_fully_defined())


def _zero_debias(avg: Variable, value: Tensor, one_minus_decay: Tensor) -> Tensor:
    """TensorFlow's zero-debiased update: keep a biased average and a local step and set
    ``avg = biased / (1 - decay ** step)``."""
    biased = _shadow(avg, lambda: array_ops.zeros_like(avg.initial_value), "biased")
    local_step = _shadow(avg, lambda: array_ops.zeros([], avg.dtype.base_dtype), "local_step")
    update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
    update_step = local_step.assign_add(1.0)
    factor = 1.0 - math_ops.pow(1.0 - one_minus_decay, update_step)
    return state_ops.assign(avg, update_biased / factor)


def assign_moving_average(variable: Variable, value: Any, decay: Any, zero_debias: bool = True,
                          name: str | None = None) -> Tensor:
    """``variable -= (1 - decay) * (variable - value)`` (zero-debiased if asked)."""
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]):
        one_minus = convert_to_tensor(1.0 - convert_to_tensor(decay), name="decay")
        if one_minus.dtype != variable.dtype.base_dtype:
            one_minus = cast_ops.cast(one_minus, variable.dtype.base_dtype)
        value = convert_to_tensor(value)
        if zero_debias:
            return _zero_debias(variable, value, one_minus)
        return state_ops.assign_sub(variable, (variable - value) * one_minus)


class ExponentialMovingAverage:
    """Maintains moving averages of variables (or tensors) with exponential decay.

    Example:
        >>> ema = tf.train.ExponentialMovingAverage(decay=0.999, num_updates=global_step)
        >>> with tf.control_dependencies([train_step]):
        ...     train_op = ema.apply(tf.trainable_variables())
        >>> saver = tf.train.Saver(ema.variables_to_restore())   # evaluation with averages
    """

    def __init__(self, decay: float, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}
        self._debiased: set[Variable] = set()

    @property
    def name(self) -> str:
        return self._name

    def _create(self, var: Any) -> None:
        if var.dtype.base_dtype not in _FLOATS:
            raise TypeError(
                f"ExponentialMovingAverage.apply: {var.name} has dtype {var.dtype.name}; the "
                "variables must be half, bfloat16, float or double")
        if isinstance(var, Variable):
            avg = _shadow(var, var.initialized_value, self._name)
            add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
        else:
            avg = _shadow(var, lambda: array_ops.zeros_like(var), self._name)
            if self._zero_debias:
                self._debiased.add(avg)
        self._averages[var] = avg

    def apply(self, var_list: Any = None) -> Operation:
        """Creates the shadow variables (once per variable) and returns an op updating them.

        Args:
            var_list: variables or tensors of a floating dtype (default: the trainable
                variables).
        Returns:
            A grouped op running every moving-average update.
        Raises:
            TypeError: a variable of a non-floating dtype.
        """
        var_list = trainable_variables() if var_list is None else list(var_list)
        for var in var_list:
            if var not in self._averages:
                self._create(var)
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                n = cast_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + n) / (10.0 + n))
            updates = [assign_moving_average(self._averages[v], v, decay,
                                             self._averages[v] in self._debiased)
                       for v in var_list]
            return control_flow_ops.group(*updates, name=scope.rstrip("/") if scope else None)

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of ``var``, or None if ``apply`` never saw it."""
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        """The (checkpoint) name of ``var``'s shadow variable, also before ``apply``."""
        if var in self._averages:
            return self._averages[var].op.name
        return get_default_graph().unique_name(f"{_op_name(var)}/{self._name}",
                                               mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables: Any = None) -> dict[str, Any]:
        """``{name: variable}`` for a ``Saver`` that loads each average into its variable and
        every other global variable under its own name."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        chosen = list(dict.fromkeys(moving_avg_variables))
        name_map = {self.average_name(v): v for v in chosen}
        chosen_names = {v.name for v in chosen}
        for v in global_variables():
            if v.name not in chosen_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
