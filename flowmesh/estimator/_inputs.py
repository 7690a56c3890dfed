"""Calling ``input_fn`` and ``model_fn`` the way TensorFlow's Estimator does.

``input_fn`` returns ``(features, labels)``, ``features`` alone, or a ``tf.data`` dataset
yielding either. Graph inputs that can run out (datasets, queues) end evaluation and
prediction with ``OutOfRangeError``; constant inputs are one batch, used once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Operation, Tensor
from flowmesh.errors import InvalidArgumentError

_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")
# Op types whose output can run out, so evaluate/predict loop until OutOfRangeError.
_EXHAUSTIBLE = ("IteratorGetNext", "QueueDequeue", "QueueDequeueV2", "QueueDequeueMany",
                "QueueDequeueManyV2", "QueueDequeueUpTo", "QueueDequeueUpToV2", "ReaderRead",
                "ReaderReadV2", "PyFunc", "EagerPyFunc")


def fn_args(fn: Callable) -> tuple[str, ...]:
    """The parameter names of ``fn`` (functools.partial and bound methods included)."""
    return tuple(inspect.signature(fn).parameters)


def check_model_fn(model_fn: Any) -> None:
    """Raises when ``model_fn`` is not callable or takes unknown arguments."""
    if not callable(model_fn):
        raise InvalidArgumentError(f"model_fn must be callable, got {model_fn!r}")
    args = fn_args(model_fn)
    if "features" not in args:
        raise InvalidArgumentError(f"model_fn {getattr(model_fn, '__name__', model_fn)} must take a "
                                   f"'features' argument; it takes {list(args)}")
    unknown = [a for a in args if a not in _MODEL_FN_ARGS and a != "self"]
    if unknown:
        raise InvalidArgumentError(f"model_fn takes unknown arguments {unknown}; allowed are "
                                   f"{list(_MODEL_FN_ARGS)}")


def call_input_fn(input_fn: Callable, mode: str, config: Any, params: dict,
                  extra_init_ops: list) -> tuple[Any, Any]:
    """``(features, labels)`` from ``input_fn`` (labels None when it returns features only).

    A dataset result is read through a one-shot iterator in TRAIN, else through an
    initializable iterator whose initializer is added to ``extra_init_ops`` (run before
    every evaluation, so one eval graph serves many checkpoints).
    """
    result = _invoke_input_fn(input_fn, mode, config, params)
    if mode != "train" and hasattr(result, "make_initializable_iterator"):
        iterator = result.make_initializable_iterator()
        extra_init_ops.append(iterator.initializer)
        result = iterator.get_next()
    elif hasattr(result, "make_one_shot_iterator"):
        result = result.make_one_shot_iterator().get_next()
    return _split_result(result, mode)


def call_input_fn_per_replica(input_fn: Callable, config: Any, params: dict, replicas: int,
                              input_context: Any = None, mode: str = "train",
                              extra_init_ops: list | None = None) -> list[tuple[Any, Any]]:
    """Inputs for ``replicas`` in-graph replicas: ``input_fn`` is called once (with
    ``input_context`` if it takes one); a dataset result gives each replica its own next
    batch (``get_next`` once per replica, so the dataset's batch is the per-replica batch);
    tensors are given to every replica. Outside TRAIN the iterator is initializable and its
    initializer goes to ``extra_init_ops``."""
    result = _invoke_input_fn(input_fn, mode, config, params, input_context)
    if mode != "train" and hasattr(result, "make_initializable_iterator"):
        iterator = result.make_initializable_iterator()
        if extra_init_ops is not None:
            extra_init_ops.append(iterator.initializer)
        return [_split_result(iterator.get_next(), mode) for _ in range(replicas)]
    if hasattr(result, "make_one_shot_iterator"):
        iterator = result.make_one_shot_iterator()
        return [_split_result(iterator.get_next(), "train") for _ in range(replicas)]
    return [_split_result(result, "train")] * replicas


def _invoke_input_fn(input_fn: Callable, mode: str, config: Any, params: dict,
                     input_context: Any = None) -> Any:
    if not callable(input_fn):
        raise InvalidArgumentError(f"input_fn must be callable, got {input_fn!r}")
    kwargs: dict[str, Any] = {}
    args = fn_args(input_fn)
    if "input_context" in args:
        if input_context is None:
            from flowmesh.distribute.input_context import InputContext

            input_context = InputContext()
        kwargs["input_context"] = input_context
    if "mode" in args:
        kwargs["mode"] = mode
    if "params" in args:
        kwargs["params"] = params
    if "config" in args:
        kwargs["config"] = config
    return input_fn(**kwargs)


def _split_result(result: Any, mode: str) -> tuple[Any, Any]:
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise InvalidArgumentError(
                f"input_fn in mode {mode!r} returned {len(result)} items; return (features, labels) "
                "or features")
        return result[0], result[1]
    return result, None


def call_model_fn(model_fn: Callable, features: Any, labels: Any, mode: str, config: Any,
                  params: dict) -> Any:
    """``model_fn`` called with the subset of (features, labels, mode, params, config) it takes.

    Raises:
        InvalidArgumentError: labels were given but ``model_fn`` takes none (or the reverse
            in TRAIN), naming the mode.
    """
    args = fn_args(model_fn)
    kwargs: dict[str, Any] = {"features": features}
    if "labels" in args:
        kwargs["labels"] = labels
    elif labels is not None:
        raise InvalidArgumentError(f"input_fn returned labels in mode {mode!r} but model_fn takes "
                                   "no 'labels' argument")
    for name, value in (("mode", mode), ("params", params), ("config", config)):
        if name in args:
            kwargs[name] = value
    return model_fn(**kwargs)


def is_exhaustible(tensors: Any) -> bool:
    """True when the inputs feeding ``tensors`` can run out (iterators, queues, readers)."""
    stack = [x.op if isinstance(x, Tensor) else x for x in _flatten(tensors)
             if isinstance(x, (Tensor, Operation))]
    seen: set[Operation] = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type in _EXHAUSTIBLE:
            return True
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return False


def _flatten(x: Any) -> list:
    if isinstance(x, dict):
        return [v for value in x.values() for v in _flatten(value)]
    if isinstance(x, (list, tuple)):
        return [v for value in x for v in _flatten(value)]
    return [] if x is None else [x]
