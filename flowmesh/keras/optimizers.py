"""``tf.keras.optimizers``: Keras's optimizer names and defaults on ``flowmesh.train``.

Each Keras optimizer keeps its learning rate in a variable (``<Name>/learning_rate``) and
counts steps in ``<Name>/iter``, so callbacks (``LearningRateScheduler``,
``ReduceLROnPlateau``) change the rate between steps with ``backend.set_value(opt.lr, v)``
and the graph is built once. The update math is TensorFlow's (``ResourceApply*`` ops);
Keras defaults differ from TensorFlow 1.x's (``epsilon=1e-7``; RMSprop starts its mean
square at 0). A ``tf.train.Optimizer`` passed to ``compile`` is used as is.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import get_default_graph
from flowmesh.train import adadelta, adagrad, adam, ftrl, gradient_descent, momentum, rmsprop
from flowmesh.train.optimizer import Optimizer as TrainOptimizer


class Optimizer:
    """Base class: ``get_updates(loss, params) -> train op``; ``lr`` is a variable."""

    _default_name = "Optimizer"

    def __init__(self, learning_rate: float = 0.001, name: str | None = None, decay: float = 0.0,
                 clipnorm: float | None = None, clipvalue: float | None = None, **kwargs: Any):
        if "lr" in kwargs:
            learning_rate = kwargs.pop("lr")
        if kwargs:
            raise TypeError(f"Unexpected keyword arguments for {type(self).__name__}: {sorted(kwargs)}")
        self._name = name or self._default_name
        self._initial_lr = float(learning_rate)
        self.decay = float(decay)
        self.clipnorm, self.clipvalue = clipnorm, clipvalue
        self._lr_var: Any = None
        self._iterations: Any = None

    def _variables(self) -> None:
        from flowmesh.ops import variables

        if self._lr_var is not None and self._lr_var.graph is get_default_graph():
            return
        graph = get_default_graph()
        with graph.name_scope(None), graph.name_scope(self._name):
            self._iterations = variables.Variable(0, name="iter", trainable=False, dtype=dtypes.int64)
            self._lr_var = variables.Variable(self._initial_lr, name="learning_rate", trainable=False,
                                              dtype=dtypes.float32)

    @property
    def lr(self) -> Any:
        """The learning-rate variable (created in the default graph on first use)."""
        self._variables()
        return self._lr_var

    learning_rate = lr

    @property
    def iterations(self) -> Any:
        self._variables()
        return self._iterations

    def _rate(self) -> Any:
        from flowmesh.ops import math_ops

        lr = self.lr
        if self.decay:
            steps = math_ops.cast(self.iterations, dtypes.float32)
            return lr * (1.0 / (1.0 + self.decay * steps))
        return lr

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        raise NotImplementedError

    def get_updates(self, loss: Any, params: list[Any]) -> Any:
        """The op applying one step to ``params`` for ``loss`` (and counting ``iterations``)."""
        from flowmesh.ops import clip_ops

        self._variables()
        graph = get_default_graph()
        with graph.name_scope("training"):
            opt = self.make_train_optimizer(self._rate())
            grads_and_vars = opt.compute_gradients(loss, var_list=params)
            grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
            if not grads_and_vars:
                raise ValueError("No gradients provided for any variable: the loss does not depend on "
                                 f"the model's trainable weights {[v.name for v in params]}")
            if self.clipnorm is not None:
                grads_and_vars = [(clip_ops.clip_by_norm(g, self.clipnorm), v) for g, v in grads_and_vars]
            if self.clipvalue is not None:
                grads_and_vars = [(clip_ops.clip_by_value(g, -self.clipvalue, self.clipvalue), v)
                                  for g, v in grads_and_vars]
            step = opt.apply_gradients(grads_and_vars, global_step=self._iterations)
            step = _apply_constraints(step, [v for _, v in grads_and_vars])
        self._train_opt, self._slot_params = opt, [v for _, v in grads_and_vars]  # for model files
        if getattr(self, "_pending_weights", None) is not None:  # state read by load_model,
            self._restore_pending_weights(self)  # which also set how to assign it
        return step

    def get_config(self) -> dict[str, Any]:
        return {"name": self._name, "learning_rate": self._initial_lr, "decay": self.decay}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Optimizer:
        return cls(**config)


def _apply_constraints(step: Any, params: list[Any]) -> Any:
    """The step, then each constrained variable projected by its ``constraint`` (as Keras's
    optimizers do after a variable's update)."""
    constrained = [v for v in params if getattr(v, "constraint", None) is not None]
    if not constrained:
        return step
    from flowmesh.core.graph import control_dependencies
    from flowmesh.ops.control_flow_ops import group

    with control_dependencies([step]):
        return group(*[v.assign(v.constraint(v)) for v in constrained], name="constraints")


class SGD(Optimizer):
    """Gradient descent with optional (Nesterov) momentum."""

    _default_name = "SGD"

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.0, nesterov: bool = False,
                 name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **kwargs)
        self.momentum, self.nesterov = float(momentum), nesterov

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        if self.momentum:
            return momentum.MomentumOptimizer(learning_rate, self.momentum, use_nesterov=self.nesterov,
                                              name=self._name)
        return gradient_descent.GradientDescentOptimizer(learning_rate, name=self._name)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """Adam (Keras defaults: ``epsilon=1e-7``)."""

    _default_name = "Adam"

    def __init__(self, learning_rate: float = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **kwargs)
        if amsgrad:
            raise NotImplementedError("Adam(amsgrad=True) is not supported by flowmesh; use amsgrad=False")
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        return adam.AdamOptimizer(learning_rate, self.beta_1, self.beta_2, self.epsilon, name=self._name)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class _KerasRMSProp(rmsprop.RMSPropOptimizer):
    def _create_slots(self, var_list: list[Any]) -> None:
        for v in var_list:
            self._zeros_slot(v, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)


class RMSprop(Optimizer):
    """RMSprop (Keras: the mean square starts at 0, ``epsilon=1e-7``)."""

    _default_name = "RMSprop"

    def __init__(self, learning_rate: float = 0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        return _KerasRMSProp(learning_rate, self.rho, self.momentum, self.epsilon, centered=self.centered,
                             name=self._name)


class Adagrad(Optimizer):
    _default_name = "Adagrad"

    def __init__(self, learning_rate: float = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        return adagrad.AdagradOptimizer(learning_rate, self.initial_accumulator_value, name=self._name)


class Adadelta(Optimizer):
    _default_name = "Adadelta"

    def __init__(self, learning_rate: float = 0.001, rho: float = 0.95, epsilon: float = 1e-7,
                 name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        return adadelta.AdadeltaOptimizer(learning_rate, self.rho, self.epsilon, name=self._name)


class Ftrl(Optimizer):
    _default_name = "Ftrl"

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        return ftrl.FtrlOptimizer(learning_rate, name=self._name)


class TFOptimizer(Optimizer):
    """Wraps a ``tf.train.Optimizer`` given to ``compile`` (its own learning rate is used)."""

    def __init__(self, optimizer: TrainOptimizer):
        super().__init__(0.0, name=optimizer.get_name() if hasattr(optimizer, "get_name") else "TFOptimizer")
        self.optimizer = optimizer

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        return self.optimizer


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad, "adadelta": Adadelta,
            "ftrl": Ftrl}


def get(identifier: Any) -> Optimizer:
    """A Keras optimizer from a name (``"adam"``), a Keras optimizer or a ``tf.train`` one.

    Raises:
        ValueError: an unknown name (the message lists the valid ones).
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, TrainOptimizer):
        return TFOptimizer(identifier)
    if isinstance(identifier, dict):
        return _lookup(identifier["class_name"].lower())(**identifier.get("config", {}))
    if isinstance(identifier, str):
        return _lookup(identifier.lower())()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


def _lookup(name: str) -> type:
    if name not in _BY_NAME:
        raise ValueError(f"Unknown optimizer: {name!r}. Valid names: {sorted(_BY_NAME)}")
    return _BY_NAME[name]


def serialize(optimizer: Optimizer) -> dict[str, Any]:
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config: dict[str, Any]) -> Optimizer:
    return get(config)


class legacy:  # noqa: N801 - TensorFlow's ``tf.keras.optimizers.legacy`` namespace
    """``tf.keras.optimizers.legacy``: the same classes (flowmesh's are graph-mode ones)."""

    SGD, Adam, RMSprop, Adagrad, Adadelta, Ftrl, Optimizer = SGD, Adam, RMSprop, Adagrad, Adadelta, Ftrl, Optimizer
