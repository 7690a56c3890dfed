"""The dataset definition protocol and helpers on elements.

An *element* is a tuple of component values: torch tensors (numeric), NumPy object arrays
of ``bytes`` (strings) or :class:`DatasetDef` objects (a ``window``'s nested datasets).
Inside the pipeline a scalar string may also be a plain ``bytes`` object (file readers
produce them: no array per record); :func:`as_value` turns it into the 0-d array kernels
expect, at the pipeline's edges (function calls, ``IteratorGetNext``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError, OpError
from flowmesh.kernels.pipeline.context import PipelineContext, PipelineStep
from flowmesh.kernels.pipeline.ragged_value import RaggedValue
from flowmesh.kernels.pipeline.sparse_value import SparseValue

Element = tuple
Block = tuple  # of NumPy arrays, one per component, rows = elements (DatasetDef.blocks)


class DatasetDef:
    """One stage of a pipeline. Subclasses set ``name`` (the op's name, for errors) and
    implement :meth:`iterate`."""

    name = "dataset"

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        """A generator of this stage's elements for one pass (an epoch)."""
        raise NotImplementedError

    def blocks(self, ctx: PipelineContext) -> Iterator[Block] | None:
        """One pass many elements at a time: *blocks*, tuples with one NumPy array per
        component whose rows are the elements of :meth:`iterate`, in order. Only stages
        that can produce their elements in bulk implement it (file records, ``unbatch``
        of dense components, and ``repeat`` or ``shuffle`` over those), so that ``batch``
        cuts batches out of blocks instead of stacking one element at a time; ``None``
        (the default) elsewhere."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def string_vector(items: Sequence[bytes]) -> np.ndarray:
    """A 1-D object array holding ``items``."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def block_rows(block: Block) -> int:
    """The number of elements in a block."""
    return len(block[0])


def from_block(array: np.ndarray) -> Any:
    """A block's component (or rows of it) as an element component: strings stay object
    arrays, numbers become torch tensors sharing the array's memory."""
    return array if array.dtype == object else torch.from_numpy(array)


def to_block(value: Any) -> np.ndarray:
    """An element component with a first dimension as a block's NumPy array (no copy)."""
    return value.numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def as_value(value: Any) -> Any:
    """A component as kernels see it (``bytes`` -> a 0-d object array)."""
    if type(value) is bytes:
        out = np.empty((), dtype=object)
        out[()] = value
        return out
    return value


class Function:
    """A compiled function of a stage (``map``'s body, ``filter``'s predicate...).

    Args:
        program: a ``FunctionProgram`` (``program(step, inputs) -> outputs``).
        captured: the values of the tensors the function captured, appended to its
            arguments on every call.
    """

    __slots__ = ("program", "captured")

    def __init__(self, program: Any, captured: Sequence[Any]):
        self.program = program
        self.captured = list(captured)

    def __call__(self, step: PipelineStep, args: Sequence[Any]) -> list[Any]:
        return self.program(step, [*(as_value(a) for a in args), *self.captured])


class ElementDropped(Exception):  # noqa: N818 - a signal between a function and its stage
    """A function of a stage under ``ignore_errors`` failed on one element: the stage drops
    the element and goes on."""


class ErrorDroppingFunction(Function):
    """A :class:`Function` whose ``OpError`` on an element becomes :class:`ElementDropped`
    (``tf.data.experimental.ignore_errors``), logged as a warning when ``log_warning``."""

    __slots__ = ("stage", "log_warning")

    def __init__(self, program: Any, captured: Sequence[Any], stage: str, log_warning: bool):
        super().__init__(program, captured)
        self.stage = stage
        self.log_warning = log_warning

    def __call__(self, step: PipelineStep, args: Sequence[Any]) -> list[Any]:
        try:
            return super().__call__(step, args)
        except OpError as exc:
            if self.log_warning:
                from flowmesh import tf_logging

                tf_logging.warning("%s: ignoring an element whose function failed: %s", self.stage, exc.message)
            raise ElementDropped() from None


def stack(values: Sequence[Any], component: int, stage: str) -> Any:
    """Stacks one component of several elements along a new first dimension.

    Raises:
        InvalidArgumentError: the elements' shapes differ (naming the component and stage).
    """
    first = values[0]
    if isinstance(first, SparseValue):
        return SparseValue.stack(values, component, stage)
    if isinstance(first, RaggedValue):
        return RaggedValue.stack(values, component, stage)
    if type(first) is bytes or (isinstance(first, np.ndarray) and first.ndim == 0):
        return _stack_scalars(values, component, stage)
    for i, value in enumerate(values):
        if tuple(value.shape) != tuple(first.shape):
            raise InvalidArgumentError(
                f"Cannot batch tensors with different shapes in component {component}. First "
                f"element had shape {list(first.shape)} and element {i} had shape "
                f"{list(value.shape)} ({stage}; use padded_batch for variable-length "
                "elements)")
    if isinstance(first, torch.Tensor):
        return torch.stack(list(values))
    if isinstance(first, np.ndarray):
        return np.stack(values)
    raise InvalidArgumentError(f"{stage}: cannot batch component {component} holding "
                               f"{type(first).__name__} (nested datasets are not batchable)")


def _stack_scalars(values: Sequence[Any], component: int, stage: str) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    try:
        out[:] = [v if type(v) is bytes else v[()] for v in values]
    except (IndexError, TypeError):
        bad = next(i for i, v in enumerate(values) if getattr(v, "ndim", None) != 0)
        raise InvalidArgumentError(
            f"Cannot batch tensors with different shapes in component {component}. First "
            f"element had shape [] and element {bad} had shape {list(np.shape(values[bad]))} "
            f"({stage})") from None
    return out


def dim0(value: Any, component: int, stage: str) -> int:
    """The size of a component's first dimension.

    Raises:
        InvalidArgumentError: the component is a scalar.
    """
    shape = tuple(np.shape(value)) if type(value) is bytes else tuple(value.shape)
    if not shape:
        raise InvalidArgumentError(
            f"{stage}: component {component} is a scalar; slicing needs at least rank 1")
    return int(shape[0])


def slices_count(values: Sequence[Any], stage: str) -> int:
    """The common first dimension of ``values``.

    Raises:
        InvalidArgumentError: the first dimensions differ.
    """
    sizes = [dim0(v, i, stage) for i, v in enumerate(values)]
    if len(set(sizes)) > 1:
        raise InvalidArgumentError(
            f"{stage}: all components must have the same size in the 0th dimension, got "
            f"{sizes}")
    return sizes[0] if sizes else 0


def in_stage(exc: OpError, stage: str) -> OpError:
    """``exc`` with `` [[in <stage>]]`` appended to its message, same type."""
    try:
        return type(exc)(exc.node_def, exc.op, f"{exc.message}\n\t [[in {stage}]]")
    except TypeError:  # pragma: no cover - an OpError subclass with another constructor
        return exc
