"""Small TensorFlow 1.x training utilities: ``basic_train_loop``, ``checkpoints_iterator``,
``assert_global_step``, and names flowmesh cannot support (stand-ins naming why)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from flowmesh.checkpoint.state import wait_for_new_checkpoint
from flowmesh.core.graph import Tensor
from flowmesh.errors import AbortedError
from flowmesh.unsupported import unsupported

OBJECT_CHECKPOINTS = ("object-based checkpoints (tf.train.Checkpoint) are TensorFlow 2's object-tracking API; "
                      "flowmesh implements name-based tf.train.Saver checkpoints")
SDCA = "the SDCA solver ops (stochastic dual coordinate ascent for linear models) are not implemented"
QUANTIZE = "graph rewriting for quantized training is not implemented (no quantized dtypes in flowmesh)"


def basic_train_loop(supervisor: Any, train_step_fn: Callable[..., Any], args: Any = None, kwargs: Any = None,
                     master: str = "") -> None:
    """Runs ``train_step_fn(sess, *args, **kwargs)`` in ``supervisor.managed_session(master)``
    until the supervisor should stop; retries a session that raised ``AbortedError``."""
    args, kwargs = list(args or []), dict(kwargs or {})
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except AbortedError:
            should_retry = True


def checkpoints_iterator(checkpoint_dir: str, min_interval_secs: float = 0, timeout: float | None = None,
                         timeout_fn: Callable[[], bool] | None = None) -> Iterator[str]:
    """Yields each new checkpoint of ``checkpoint_dir`` as it appears, at most one per
    ``min_interval_secs``; stops after ``timeout`` seconds without one (unless ``timeout_fn``
    returns False, which keeps waiting)."""
    checkpoint = None
    while True:
        found = wait_for_new_checkpoint(checkpoint_dir, checkpoint, timeout=timeout)
        if found is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        start = time.monotonic()
        checkpoint = found
        yield checkpoint
        remaining = min_interval_secs - (time.monotonic() - start)
        if remaining > 0:
            time.sleep(remaining)


def assert_global_step(global_step_tensor: Any) -> None:
    """Raises TypeError unless ``global_step_tensor`` is a scalar integer variable or tensor."""
    if not (isinstance(global_step_tensor, Tensor) or hasattr(global_step_tensor, "initializer")):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.')
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {global_step_tensor.dtype}')
    shape = global_step_tensor.shape
    if shape.rank not in (None, 0) and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


Checkpoint = unsupported("train.Checkpoint", OBJECT_CHECKPOINTS)
CheckpointManager = unsupported("train.CheckpointManager", OBJECT_CHECKPOINTS)
CheckpointOptions = unsupported("train.CheckpointOptions", OBJECT_CHECKPOINTS)
sdca_fprint = unsupported("train.sdca_fprint", SDCA)
sdca_optimizer = unsupported("train.sdca_optimizer", SDCA)
sdca_shrink_l1 = unsupported("train.sdca_shrink_l1", SDCA)
do_quantize_training_on_graphdef = unsupported("train.do_quantize_training_on_graphdef", QUANTIZE)
