"""An HDF5 model file's ``optimizer_weights`` group, in tf-keras's layout.

tf-keras (graph mode, its legacy optimizers) stores ``optimizer.get_weights()``: the step
count ``training/<Opt>/iter:0`` first, then each slot kind for every trainable weight
in the model's order (Adam: all ``m`` then all ``v``; SGD with momentum: ``momentum``;
RMSprop: ``rms``, then ``momentum`` if ``momentum > 0``, then ``mg`` if centered;
Adagrad: ``accumulator``), named ``training/<Opt>/<weight>/<slot>:0``.

flowmesh's Keras optimizers train with ``tf.train`` optimizers, whose state maps onto
that: Adam's ``m``/``v`` are the same, its ``beta1_power``/``beta2_power`` are
``beta**(iter + 1)``; SGD's TF1 momentum accumulator ``a`` is Keras's velocity
``-learning_rate * a``; RMSprop's and Adagrad's slots are the same. Other optimizers
save no state (a loaded model resumes with fresh optimizer state, with a warning).
Loading into a model whose train op does not exist yet keeps the values until ``fit``
builds it (``Optimizer._pending_weights``).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from flowmesh.keras import backend

logger = logging.getLogger("flowmesh.keras")


def _slot_kinds(optimizer: Any) -> list[str] | None:
    """tf-keras's slot names in its order, or None for optimizers without a mapping."""
    from flowmesh.keras import optimizers as opt

    kind = type(optimizer)
    if kind is opt.Adam:
        return ["m", "v"]
    if kind is opt.SGD:
        return ["momentum"] if optimizer.momentum else []
    if kind is opt.RMSprop:
        return ["rms"] + (["momentum"] if optimizer.momentum else []) + (["mg"] if optimizer.centered else [])
    if kind is opt.Adagrad:
        return ["accumulator"]
    return None


def _velocity_scale(optimizer: Any) -> float | None:
    """Keras's SGD velocity per unit of TF1's momentum accumulator (``-lr``)."""
    from flowmesh.keras import optimizers as opt

    if type(optimizer) is opt.SGD and optimizer.momentum:
        return -float(backend.get_value(optimizer.lr))
    return None


def save(group: Any, optimizer: Any) -> bool:
    """Writes ``optimizer``'s state to ``group`` (False when there is none to write)."""
    kinds = _slot_kinds(optimizer)
    train_opt = getattr(optimizer, "_train_opt", None)
    params = getattr(optimizer, "_slot_params", None)
    pending = getattr(optimizer, "_pending_weights", None)
    if train_opt is None and pending is not None:  # loaded, not trained since: write it back as read
        _write(group, [name for name, _ in pending], [value for _, value in pending])
        return True
    if kinds is None or train_opt is None or not params:
        if kinds is None and train_opt is not None:
            logger.warning("Optimizer %s has no tf-keras state layout: its state is not saved",
                           type(optimizer).__name__)
        return False
    prefix = f"training/{optimizer._name}"
    names = [f"{prefix}/iter:0"]
    tensors = [optimizer.iterations]
    for kind in kinds:
        for var in params:
            names.append(f"{prefix}/{var.op.name}/{kind}:0")
            tensors.append(train_opt.get_slot(var, kind))
    values = backend.batch_get_value(tensors)
    scale = _velocity_scale(optimizer)
    if scale is not None:
        values = [values[0]] + [v * scale for v in values[1:]]
    _write(group, names, values)
    return True


def _write(group: Any, names: list[str], values: list[Any]) -> None:
    group.attrs["weight_names"] = [n.encode("utf8") for n in names]
    for name, value in zip(names, values):
        dataset = group.create_dataset(name, np.shape(value), dtype=np.asarray(value).dtype)
        dataset[()] = value


def read(group: Any) -> list[tuple[str, np.ndarray]]:
    """``(name, value)`` of every saved optimizer weight, in the file's order."""
    names = [n.decode("utf8") if isinstance(n, bytes) else str(n) for n in group.attrs["weight_names"]]
    return [(n, np.asarray(group[n])) for n in names]


def restore(optimizer: Any) -> None:
    """Assigns the pending tf-keras-layout values to ``optimizer``'s state (called once
    its slots exist); a layout that does not fit is skipped with a warning, as tf-keras
    does."""
    pending = optimizer.__dict__.pop("_pending_weights", None)
    kinds = _slot_kinds(optimizer)
    params = getattr(optimizer, "_slot_params", None) or []
    if pending is None:
        return
    values = [value for _, value in pending]
    if kinds is None or len(values) != 1 + len(kinds) * len(params):
        logger.warning("Error in loading the saved optimizer state: %d values do not fit %s over %d weights; "
                       "the optimizer starts from a fresh state", len(values), type(optimizer).__name__,
                       len(params))
        return
    train_opt = optimizer._train_opt
    scale = _velocity_scale(optimizer)
    pairs: list[tuple[Any, Any]] = [(optimizer.iterations, values[0])]
    slots = iter(values[1:])
    for kind in kinds:
        for var in params:
            value = next(slots)
            pairs.append((train_opt.get_slot(var, kind), value / scale if scale else value))
    if kinds == ["m", "v"]:
        step = int(values[0]) + 1
        beta1_power, beta2_power = train_opt._get_beta_accumulators()
        pairs += [(beta1_power, optimizer.beta_1 ** step), (beta2_power, optimizer.beta_2 ** step)]
    backend.batch_set_value(pairs)
