"""Checkpoint checks of an Estimator: resume compatibility, the step of a checkpoint and
warm starting from another model's checkpoint."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Graph, GraphKeys
from flowmesh.errors import InvalidArgumentError


def checkpoint_step(path: str | None) -> int | None:
    """The ``global_step`` stored in checkpoint ``path`` (None without a checkpoint)."""
    if path is None:
        return None
    from flowmesh.train import load_variable

    return int(load_variable(path, "global_step"))


def check_compatible(path: str | None, graph: Graph, model_dir: str) -> None:
    """Raises when the model's global variables cannot be restored from checkpoint ``path``.

    Raises:
        InvalidArgumentError: listing the variables missing from the checkpoint and those
            whose shape or dtype differs (graph vs checkpoint), and how to fix it.
    """
    if path is None:
        return
    from flowmesh.train import list_variables

    stored = {name: tuple(shape) for name, shape in list_variables(path)}
    missing, shapes = [], []
    for var in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        name = var.op.name
        shape = tuple(var.shape.as_list())
        if name not in stored:
            missing.append(name)
        elif stored[name] != shape:
            shapes.append(f"{name}: model {list(shape)} vs checkpoint {list(stored[name])}")
    if missing or shapes:
        parts = []
        if missing:
            parts.append(f"variables of the model missing from the checkpoint: {sorted(missing)}")
        if shapes:
            parts.append("variables whose shape differs: " + "; ".join(shapes))
        raise InvalidArgumentError(
            f"model_dir {model_dir!r} holds a checkpoint ({os.path.basename(path)}) of a different "
            f"model: {'. '.join(parts)}. Use a new model_dir, or warm_start_from to reuse weights")


def warm_start_fn(source: str) -> Callable[[Any, Any], None]:
    """A Scaffold ``init_fn`` restoring every trainable variable found in ``source`` (a
    checkpoint prefix or a directory holding checkpoints)."""
    from flowmesh.ops.variables import trainable_variables
    from flowmesh.train import latest_checkpoint, list_variables
    from flowmesh.train.saver import Saver

    path = latest_checkpoint(source) if os.path.isdir(source) else source
    if path is None:
        raise InvalidArgumentError(f"warm_start_from {source!r} holds no checkpoint")
    stored = {name: tuple(shape) for name, shape in list_variables(path)}
    chosen = {v.op.name: v for v in trainable_variables()
              if stored.get(v.op.name) == tuple(v.shape.as_list())}
    if not chosen:
        raise InvalidArgumentError(f"warm_start_from {source!r}: no trainable variable of the model "
                                   "is in that checkpoint with the same shape")
    saver = Saver(chosen)

    def init_fn(scaffold: Any, session: Any) -> None:
        saver.restore(session, path)

    return init_fn
