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

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core import dtypes
from flowmesh.core.graph import get_default_graph
from flowmesh.train import adadelta, adagrad, adam, ftrl, gradient_descent, momentum, rmsprop
from flowmesh.train.optimizer import Optimizer as TrainOptimizer

_fill_namespace(globals(), "keras.optimizers")


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
        from flowmesh.keras.optimizers_schedules import LearningRateSchedule, deserialize

        if isinstance(learning_rate, dict):
            learning_rate = deserialize(learning_rate)
        self._schedule = learning_rate if isinstance(learning_rate, LearningRateSchedule) else None
        self._initial_lr = float(learning_rate) if self._schedule is None else \
            float(getattr(learning_rate, "initial_learning_rate", 0.0))
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
        from flowmesh.ops import cast_ops

        lr = self.lr if self._schedule is None else self._schedule(self.iterations)
        if self.decay:
            steps = cast_ops.cast(self.iterations, dtypes.float32)
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
        from flowmesh.keras.optimizers_schedules import serialize

        rate = self._initial_lr if self._schedule is None else serialize(self._schedule)
        return {"name": self._name, "learning_rate": rate, "decay": self.decay}

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


class Adamax(Optimizer):
    """Adam with the infinity norm (Kingma & Ba, section 7)."""

    _default_name = "Adamax"

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        from flowmesh.keras.optimizers_more import _Adamax

        return _Adamax(self, learning_rate, self._name)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Nadam(Adamax):
    """Adam with Nesterov momentum (Dozat), with tf-keras's momentum schedule."""

    _default_name = "Nadam"

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        from flowmesh.keras.optimizers_more import _Nadam

        return _Nadam(self, learning_rate, self._name)


class _Decayed(Optimizer):
    """Decoupled weight decay (``var -= var * weight_decay * lr`` before the update), not
    for variables whose names contain one of ``exclude_from_weight_decay``'s strings."""

    def _init_decay(self, weight_decay: float | None) -> None:
        self.weight_decay = weight_decay
        self._excluded_names: list[str] = []
        self._excluded_vars: list[Any] = []

    def exclude_from_weight_decay(self, var_list: Any = None, var_names: Any = None) -> None:
        self._excluded_vars += list(var_list or [])
        self._excluded_names += list(var_names or [])

    def _excluded(self, var: Any) -> bool:
        return any(var is v for v in self._excluded_vars) or any(n in var.name for n in self._excluded_names)


class AdamW(_Decayed):
    """Adam with decoupled weight decay (Loshchilov & Hutter)."""

    _default_name = "AdamW"

    def __init__(self, learning_rate: Any = 0.001, weight_decay: float = 0.004, beta_1: float = 0.9,
                 beta_2: float = 0.999, epsilon: float = 1e-7, amsgrad: bool = False, name: str | None = None,
                 **kwargs: Any):
        super().__init__(learning_rate, name, **_plain_kwargs(kwargs))
        if amsgrad:
            raise NotImplementedError("AdamW(amsgrad=True) is not supported by flowmesh; use amsgrad=False")
        self._init_decay(weight_decay)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        from flowmesh.keras.optimizers_more import _AdamW

        return _AdamW(self, learning_rate, self._name)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "weight_decay": self.weight_decay, "beta_1": self.beta_1,
                "beta_2": self.beta_2, "epsilon": self.epsilon, "amsgrad": self.amsgrad}


class Lion(_Decayed):
    """The sign of an interpolated momentum (Chen et al., "Symbolic Discovery of
    Optimization Algorithms")."""

    _default_name = "Lion"

    def __init__(self, learning_rate: Any = 0.0001, beta_1: float = 0.9, beta_2: float = 0.99,
                 weight_decay: float | None = None, name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **_plain_kwargs(kwargs))
        self._init_decay(weight_decay)
        self.beta_1, self.beta_2 = beta_1, beta_2

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        from flowmesh.keras.optimizers_more import _Lion

        return _Lion(self, learning_rate, self._name)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "weight_decay": self.weight_decay}


class Adafactor(_Decayed):
    """Adafactor (Shazeer & Stern): factored second moments for matrices."""

    _default_name = "Adafactor"

    def __init__(self, learning_rate: Any = 0.001, beta_2_decay: float = -0.8, epsilon_1: float = 1e-30,
                 epsilon_2: float = 1e-3, clip_threshold: float = 1.0, relative_step: bool = True,
                 name: str | None = None, **kwargs: Any):
        super().__init__(learning_rate, name, **_plain_kwargs(kwargs))
        self._init_decay(None)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold, self.relative_step = clip_threshold, relative_step

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        from flowmesh.keras.optimizers_more import _Adafactor

        return _Adafactor(self, learning_rate, self._name)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1,
                "epsilon_2": self.epsilon_2, "clip_threshold": self.clip_threshold,
                "relative_step": self.relative_step}


_NEWER_DEFAULTS = {"use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None, "jit_compile": True,
                   "global_clipnorm": None, "is_legacy_optimizer": False}


def _plain_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The newer optimizers' arguments: ``clipnorm``/``clipvalue`` are taken, the others
    (``use_ema``, ``jit_compile``...) only at their defaults."""
    other = {k: v for k, v in kwargs.items() if k not in ("clipnorm", "clipvalue", "lr", "decay")}
    unsupported = sorted(k for k, v in other.items() if k not in _NEWER_DEFAULTS or v != _NEWER_DEFAULTS[k])
    if unsupported:
        raise NotImplementedError(f"flowmesh's Keras optimizers do not take {unsupported} (at other than their "
                                  "defaults)")
    return {k: v for k, v in kwargs.items() if k in ("clipnorm", "clipvalue", "lr", "decay")}


class TFOptimizer(Optimizer):
    """Wraps a ``tf.train.Optimizer`` given to ``compile`` (its own learning rate is used)."""

    def __init__(self, optimizer: TrainOptimizer):
        super().__init__(0.0, name=optimizer.get_name() if hasattr(optimizer, "get_name") else "TFOptimizer")
        self.optimizer = optimizer

    def make_train_optimizer(self, learning_rate: Any) -> TrainOptimizer:
        return self.optimizer


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad, "adadelta": Adadelta,
            "ftrl": Ftrl, "nadam": Nadam, "adamax": Adamax, "adamw": AdamW, "lion": Lion, "adafactor": Adafactor}


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
    Nadam, Adamax = Nadam, Adamax


