"""Stateful Keras metrics in graph mode: ``update_state`` returns an op that accumulates
into the metric's variables, ``result()`` is a tensor of the value so far, ``reset_state()``
zeroes the variables in the Keras session (tf-keras's API).

Variables are made in the graph of the first ``update_state`` (one set per graph), named
as tf-keras names them (``total``, ``count``, ``true_positives``... at the top level, made
unique), and collected in ``LOCAL_VARIABLES`` (tf-keras puts them in no collection), so
``tf.local_variables_initializer()`` and the Keras session initialize them and no
``Saver`` checkpoints them.

``Model.compile(metrics=[...])`` evaluates a :class:`MeanMetricWrapper` per sample and
averages over the epoch (the same value as its stateful mean); other metrics (``AUC``,
``Precision``...) are updated each batch, reset at each epoch, validation and evaluation,
and reported at their accumulated value.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, control_dependencies, get_default_graph
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops.reduction_ops import reduce_sum


def snake(name: str) -> str:
    from flowmesh.keras.engine.base_layer import to_snake_case

    return to_snake_case(name)


class Metric:
    """Base class: subclasses make variables in ``build_state`` (called with the first
    update's ``y_pred``) and define ``update_state`` and ``result``."""

    stateful = True

    def __init__(self, name: str | None = None, dtype: Any = None, **kwargs: Any):
        self.name = name or snake(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype or "float32")
        self._graphs: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()

    @property
    def dtype(self) -> str:
        return self._dtype.name

    # --- variables -----------------------------------------------------------------------
    def add_weight(self, name: str, shape: Any = (), dtype: Any = None, initializer: str = "zeros") -> Any:
        """A local (non-trainable) variable of this metric in the default graph."""
        from flowmesh.ops.variables import Variable

        dtype = dtypes.as_dtype(dtype or self._dtype)
        value = np.zeros(shape, dtype.as_numpy_dtype) if initializer == "zeros" else \
            np.ones(shape, dtype.as_numpy_dtype)
        graph = get_default_graph()
        with graph.name_scope(None):
            variable = Variable(value, name=name, trainable=False, dtype=dtype,
                                collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])
        self._state().setdefault("__order__", []).append(variable)
        self._state()[name] = variable
        return variable

    def _state(self) -> dict[str, Any]:
        return self._graphs.setdefault(get_default_graph(), {})

    def _var(self, name: str) -> Any:
        return self._state()[name]

    def _ensure(self, y_pred: Any = None) -> None:
        if not self._state():
            self.build_state(y_pred)

    def build_state(self, y_pred: Any) -> None:
        """Makes the variables (override)."""

    @property
    def variables(self) -> list[Any]:
        return list(self._state().get("__order__", []))

    weights = variables

    # --- API -----------------------------------------------------------------------------
    def update_state(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def result(self) -> Any:
        raise NotImplementedError

    def reset_ops(self) -> list[Any]:
        """Ops setting the variables back to their initial values."""
        return [v.initializer for v in self.variables]

    def reset_state(self) -> None:
        """Zeroes the variables (in the Keras session)."""
        from flowmesh.keras import backend

        if self.variables:
            backend.get_session().run(self.reset_ops())

    reset_states = reset_state

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``update_state(...)`` then ``result()`` (the result reads after the update)."""
        update = self.update_state(*args, **kwargs)
        with control_dependencies([update]):
            return array_ops.identity(self.result())

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Metric:
        return cls(**config)


def _weights_like(sample_weight: Any, values: Any) -> Any:
    """Sample weights broadcast to ``values`` (trailing axes added or a trailing 1 removed)."""
    from flowmesh.keras.losses import match_rank

    weight = cast_ops.cast(convert_to_tensor(sample_weight), values.dtype)
    return match_rank(weight, values) * array_ops.ones_like(values)


class Reduce(Metric):
    """``Sum`` or weighted ``Mean`` of every value passed."""

    def __init__(self, reduction: str, name: str | None = None, dtype: Any = None):
        super().__init__(name=name, dtype=dtype)
        self.reduction = reduction

    def build_state(self, y_pred: Any) -> None:
        self.add_weight("total")
        if self.reduction != "sum":
            self.add_weight("count")

    def update_state(self, values: Any, sample_weight: Any = None) -> Any:
        from flowmesh.ops.control_flow_ops import group

        values = cast_ops.cast(convert_to_tensor(values), self._dtype)
        self._ensure(values)
        if sample_weight is not None:
            weight = _weights_like(sample_weight, values)
            values = values * weight
        updates = [self._var("total").assign_add(reduce_sum(values))]
        if self.reduction != "sum":
            count = reduce_sum(weight) if sample_weight is not None else \
                cast_ops.cast(array_ops.size(values), self._dtype)
            updates.append(self._var("count").assign_add(count))
        return group(*updates)

    def result(self) -> Any:
        self._ensure()
        if self.reduction == "sum":
            return array_ops.identity(self._var("total"))
        return math_ops.div_no_nan(self._var("total"), self._var("count"))


class Sum(Reduce):
    """The sum of the values (times their weights)."""

    def __init__(self, name: str = "sum", dtype: Any = None):
        super().__init__("sum", name=name, dtype=dtype)


class Mean(Reduce):
    """The weighted mean of the values."""

    def __init__(self, name: str = "mean", dtype: Any = None):
        super().__init__("mean", name=name, dtype=dtype)


class MeanTensor(Metric):
    """The element-wise weighted mean of tensors of one shape."""

    def __init__(self, name: str = "mean_tensor", dtype: Any = None, shape: Any = None):
        super().__init__(name=name, dtype=dtype)
        self._shape = None if shape is None else tuple(shape)

    def build_state(self, y_pred: Any) -> None:
        shape = self._shape or tuple(y_pred.shape.as_list())
        self.add_weight("total", shape)
        self.add_weight("count", shape)

    def update_state(self, values: Any, sample_weight: Any = None) -> Any:
        from flowmesh.ops.control_flow_ops import group

        values = cast_ops.cast(convert_to_tensor(values), self._dtype)
        self._ensure(values)
        weight = _weights_like(sample_weight, values) if sample_weight is not None else array_ops.ones_like(values)
        return group(self._var("total").assign_add(values * weight), self._var("count").assign_add(weight))

    def result(self) -> Any:
        self._ensure()
        return math_ops.div_no_nan(self._var("total"), self._var("count"))

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        if self._shape is not None:
            config["shape"] = self._shape
        return config


class MeanMetricWrapper(Mean):
    """The weighted mean of ``fn(y_true, y_pred, **kwargs)`` per sample. ``compile``
    evaluates :meth:`per_sample` and averages over the epoch itself."""

    fn: Any = None
    _default_name = "mean_metric_wrapper"

    def __init__(self, fn: Any = None, name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name=name or getattr(fn, "__name__", None) or self._default_name, dtype=dtype)
        self._fn = fn if fn is not None else type(self).fn
        self._fn_kwargs = kwargs

    def per_sample(self, y_true: Any, y_pred: Any) -> Any:
        return self._fn(y_true, y_pred, **self._fn_kwargs)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        values = self.per_sample(y_true, y_pred)
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> MeanMetricWrapper:
        if cls is MeanMetricWrapper:
            raise ValueError("A MeanMetricWrapper of a function is rebuilt from the function: "
                             "MeanMetricWrapper(fn, name=...)")
        return cls(**config)


def wrapper_class(class_name: str, fn: Any, default_name: str) -> type:
    """A :class:`MeanMetricWrapper` subclass named ``class_name`` for ``fn``."""

    def init(self: MeanMetricWrapper, name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        MeanMetricWrapper.__init__(self, fn, name=name or default_name, dtype=dtype, **kwargs)

    return type(class_name, (MeanMetricWrapper,), {"fn": staticmethod(fn), "__init__": init,
                                                   "__doc__": f"The mean of ``{fn.__name__}``."})
