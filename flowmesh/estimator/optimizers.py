"""Optimizers by name for the canned estimators: ``'Adagrad' 'Adam' 'Ftrl' 'RMSProp' 'SGD'``
(TensorFlow's names), an ``Optimizer`` instance, or a callable returning one."""

from __future__ import annotations

from typing import Any

from flowmesh.errors import InvalidArgumentError
from flowmesh.train.adagrad import AdagradOptimizer
from flowmesh.train.adam import AdamOptimizer
from flowmesh.train.ftrl import FtrlOptimizer
from flowmesh.train.gradient_descent import GradientDescentOptimizer
from flowmesh.train.optimizer import Optimizer
from flowmesh.train.rmsprop import RMSPropOptimizer

OPTIMIZERS = {"Adagrad": AdagradOptimizer, "Adam": AdamOptimizer, "Ftrl": FtrlOptimizer,
              "RMSProp": RMSPropOptimizer, "SGD": GradientDescentOptimizer}


def get_optimizer_instance(opt: Any, learning_rate: float | None = None) -> Optimizer:
    """An Optimizer from a name (needs ``learning_rate``), an instance, or a callable.

    Raises:
        InvalidArgumentError: an unknown name (lists the known ones) or a bad object.
    """
    if isinstance(opt, str):
        if opt not in OPTIMIZERS:
            raise InvalidArgumentError(f"unsupported optimizer name {opt!r}; use one of "
                                       f"{sorted(OPTIMIZERS)} or an Optimizer instance")
        if learning_rate is None:
            raise InvalidArgumentError(f"optimizer {opt!r} given by name needs a learning_rate")
        return OPTIMIZERS[opt](learning_rate=learning_rate)
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise InvalidArgumentError(f"optimizer must be a name, an Optimizer or a callable returning "
                                   f"one, got {opt!r}")
    return opt
