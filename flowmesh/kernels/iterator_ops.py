"""Kernels of the iterator ops: an :class:`IteratorState` per iterator, in the resource
store of its device (so it lasts across ``Session.run`` steps, and every session of a
server sees the same iterator, as in TensorFlow).

``MakeIterator`` stops the running pipeline (cancelling and joining its threads) and starts
a new one; ``IteratorGetNext`` pulls the next element. The end of the data raises
``OutOfRangeError``; an error inside the pipeline (a failing ``map`` function...) is raised
by that ``IteratorGetNext`` and stops the pipeline's threads. Closing the session (the
store is cleared) or dropping the state also stops them.
"""

from __future__ import annotations

import itertools
import threading
import traceback
import weakref
from typing import Any

import numpy as np
import torch

from flowmesh.errors import (
    CancelledError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
)
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.function_program import FunctionProgram
from flowmesh.kernels.pipeline.base import DatasetDef, as_value
from flowmesh.kernels.pipeline.context import PipelineCancelled, PipelineContext
from flowmesh.kernels.pipeline.transforms import outermost_stage, pipeline_determinism

_CPU = ("CPU",)
_handles: weakref.WeakValueDictionary[str, IteratorState] = weakref.WeakValueDictionary()
_handle_ids = itertools.count()


class IteratorState:
    """One iterator: the running pipeline of its last initialisation."""

    def __init__(self, name: str):
        self.name = name
        self.lock = threading.Lock()
        self.ctx: PipelineContext | None = None
        self.elements: Any = None
        self.error: OpError | None = None
        self.finished = False
        self.started_once = False
        self.string_handle = f"flowmesh-iterator:{next(_handle_ids)}:{name}"
        _handles[self.string_handle] = self

    def start(self, dataset: DatasetDef) -> None:
        """Stops the running pipeline and starts one on ``dataset``."""
        if not isinstance(dataset, DatasetDef):
            raise InvalidArgumentError(f"Iterator '{self.name}' needs a dataset, got "
                                       f"{type(dataset).__name__}")
        with self.lock:
            self._stop()
            self.ctx = PipelineContext(pipeline_determinism(dataset), self.name)
            self.ctx.worker_root, self.ctx.worker_setting = outermost_stage(dataset)
            self.elements = dataset.iterate(self.ctx)
            self.error, self.finished, self.started_once = None, False, True

    def get_next(self) -> tuple:
        """The next element.

        Raises:
            FailedPreconditionError: never initialised.
            OutOfRangeError: the data is exhausted.
            OpError: the pipeline failed (the same error again on later calls).
        """
        with self.lock:
            if self.elements is None:
                raise FailedPreconditionError(
                    f"GetNext() failed because the iterator '{self.name}' has not been "
                    "initialized. Ensure that you have run the initializer operation for this "
                    "iterator before getting the next element.")
            if self.error is not None:
                raise self.error
            if self.finished:
                raise OutOfRangeError("End of sequence")
            try:
                return next(self.elements)
            except StopIteration:
                self.finished = True
                self._stop()
                raise OutOfRangeError("End of sequence") from None
            except PipelineCancelled:
                self.error = CancelledError(f"Iterator '{self.name}' was closed")
            except OpError as exc:
                self.error = exc
            except Exception as exc:  # noqa: BLE001 - a bug in a stage, reported with its trace
                trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
                self.error = InvalidArgumentError(
                    f"{type(exc).__name__}: {exc} (in the input pipeline of iterator "
                    f"'{self.name}')\n{trace}")
            self._stop()
            raise self.error

    def _stop(self) -> None:
        ctx, elements = self.ctx, self.elements
        if ctx is not None:
            ctx.cancel()
        if elements is not None:
            try:
                elements.close()
            except (ValueError, PipelineCancelled):  # already running in another thread / cancelled
                pass

    def release(self) -> None:
        """Stops the pipeline's threads (the session is closing: its store is cleared)."""
        ctx = self.ctx
        if ctx is not None:  # first, without the lock: wakes a GetNext blocked on the pipeline
            ctx.cancel()
        with self.lock:
            self._stop()
            self.elements = None

    def __del__(self) -> None:
        ctx = self.ctx
        if ctx is not None:
            ctx.cancel()


def _state(ctx: KernelContext) -> IteratorState:
    name = ctx.attr("shared_name") or ctx.op.name
    return ctx.device.resources.lookup_or_create(ctx.attr("container", ""), name,
                                                 lambda: IteratorState(name))


def _as_iterator(value: Any, op_type: str) -> IteratorState:
    if not isinstance(value, IteratorState):
        raise InvalidArgumentError(f"{op_type} expects an iterator handle, got {type(value).__name__}")
    return value


@kernel("IteratorV2", device_types=_CPU)
def _iterator(ctx: KernelContext):
    state = _state(ctx)
    return lambda: state


@kernel("OneShotIterator", device_types=_CPU, needs_step=True)
def _one_shot(ctx: KernelContext):
    """Starts the iterator the first time it runs: on its ``dataset_factory`` function
    (``data/dataset_factory.py``: built once) or else on its dataset input."""
    state = _state(ctx)
    factory = ctx.attr("dataset_factory", None)
    if factory is None:
        def one_shot(step: Any, dataset: DatasetDef) -> IteratorState:
            if not state.started_once:
                state.start(dataset)
            return state

        return one_shot
    program = FunctionProgram(ctx, factory, factory.outputs, "the dataset_factory")

    def one_shot_from_factory(step: Any) -> IteratorState:
        if not state.started_once:
            state.start(program(step, [])[0])
        return state

    return one_shot_from_factory


@kernel("MakeIterator", device_types=_CPU)
def _make_iterator(ctx: KernelContext):
    def make(dataset: DatasetDef, handle: Any) -> None:
        _as_iterator(handle, "MakeIterator").start(dataset)

    return make


@kernel("IteratorGetNext", device_types=_CPU)
def _get_next(ctx: KernelContext):
    count = len(ctx.op.outputs)

    def get_next(handle: Any) -> Any:
        element = _as_iterator(handle, "IteratorGetNext").get_next()
        if len(element) != count:
            raise InvalidArgumentError(
                f"IteratorGetNext: the dataset produced {len(element)} components, the iterator "
                f"expects {count}")
        return as_value(element[0]) if count == 1 else tuple(as_value(v) for v in element)

    return get_next


def _zeros(dtype: Any, shape: Any) -> Any:
    from flowmesh.core import dtypes
    from flowmesh.kernels.contract.convert import torch_dtype

    dims = [0 if d is None else d for d in shape.as_list()] if shape.rank is not None else [0]
    if dtype == dtypes.string:
        out = np.empty(dims, dtype=object)
        out.fill(b"")
        return out
    return torch.zeros(dims, dtype=torch_dtype(dtype))


@kernel("IteratorGetNextAsOptional", device_types=_CPU)
def _get_next_as_optional(ctx: KernelContext):
    """``(True, *element)``, or ``(False, *zeros)`` at the end of the data."""
    from flowmesh.core.shapes import as_shape

    specs = [(t, as_shape(s)) for t, s in zip(ctx.attr("output_types"), ctx.attr("output_shapes"))]

    def get_next(handle: Any) -> Any:
        try:
            element = _as_iterator(handle, "IteratorGetNextAsOptional").get_next()
        except OutOfRangeError:
            return (torch.tensor(False), *(_zeros(t, s) for t, s in specs))
        if len(element) != len(specs):
            raise InvalidArgumentError(f"IteratorGetNextAsOptional: the dataset produced {len(element)} components, "
                                       f"the iterator expects {len(specs)}")
        return (torch.tensor(True), *(as_value(v) for v in element))

    return get_next


@kernel("IteratorToStringHandle", device_types=_CPU)
def _to_string_handle(ctx: KernelContext):
    def to_string(handle: Any) -> Any:
        out = np.empty((), dtype=object)
        out[()] = _as_iterator(handle, "IteratorToStringHandle").string_handle.encode()
        return out

    return to_string


@kernel("IteratorFromStringHandleV2", device_types=_CPU)
def _from_string_handle(ctx: KernelContext):
    def from_string(handle: Any) -> IteratorState:
        key = handle[()] if isinstance(handle, np.ndarray) else handle
        key = key.decode() if isinstance(key, bytes) else str(key)
        state = _handles.get(key)
        if state is None:
            raise NotFoundError(f"No iterator with string handle {key!r} in this process (string "
                                "handles name iterators of the process that created them)")
        return state

    return from_string
