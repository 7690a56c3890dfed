"""The run-time object behind a ``TensorArray`` handle (TensorFlow's ``tensor_array.h``).

A ``TensorArrayV3`` kernel creates one :class:`TensorArrayState` per execution and returns
it as the handle value, so a TensorArray lives for one step (or one loop iteration when it
is created inside a ``While`` body) and is freed with the last reference to its handle.
Every rule below is TensorFlow 1.x's, with its messages:

* an element is written once (``Could not write to TensorArray index i because it has
  already been written to``), except in gradient arrays, which add the writes up;
* ``clear_after_read`` drops an element when it is read, so a second read fails;
* a fixed-size array refuses indices past its size, a ``dynamic_size`` one grows;
* with ``identical_element_shapes`` (``infer_shape=True``) the first write fixes the element
  shape and later writes must match it;
* reading an element never written returns zeros when the element shape is fully known
  (gradient arrays use the shape of the forward element), and fails otherwise.

Values are the runtime's own (torch tensors, NumPy object arrays for strings); they are
stored by reference and never modified (aggregation makes a new tensor).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError, UnimplementedError


class _Entry:
    __slots__ = ("value", "shape", "written", "read", "cleared")

    def __init__(self) -> None:
        self.value: Any = None
        self.shape: tuple[int, ...] | None = None
        self.written = False
        self.read = False
        self.cleared = False


class TensorArrayState:
    """One TensorArray's elements and flags.

    Args:
        name: the unique name errors use (``<tensor_array_name or op name>_<counter>``).
        size: the initial number of elements.
        element_shape: the known (possibly partial) element shape.
        identical_element_shapes: every element has the first written element's shape.
        dynamic_size: writes past the end grow the array.
        clear_after_read: an element can be read only once.
        zeros: ``zeros(shape)`` makes an element of zeros (unwritten reads).
        multiple_writes_aggregate: writes to a written element add (gradient arrays).
        is_grad: a gradient array (reads past its size give zeros).
    """

    def __init__(self, name: str, size: int, element_shape: TensorShape,
                 identical_element_shapes: bool, dynamic_size: bool, clear_after_read: bool,
                 zeros: Callable[[tuple[int, ...]], Any], multiple_writes_aggregate: bool = False,
                 is_grad: bool = False):
        self.name = name
        self.entries = [_Entry() for _ in range(size)]
        self._dims: tuple[int | None, ...] | None = None
        self.element_shape = element_shape
        self.identical_element_shapes = identical_element_shapes
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.zeros = zeros
        self.multiple_writes_aggregate = multiple_writes_aggregate
        self.is_grad = is_grad
        self.closed = False
        self.marked_size: int | None = None
        self.gradients_disallowed = False
        self.grads: dict[str, TensorArrayState] = {}
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<TensorArray {self.name} size={len(self.entries)}>"

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @element_shape.setter
    def element_shape(self, shape: TensorShape) -> None:
        self._element_shape = shape
        self._dims = None if shape.rank is None else tuple(shape.as_list())

    def _fits(self, shape: tuple[int, ...]) -> bool:
        """Whether a value shape is compatible with the element shape (per write: no
        TensorShape objects)."""
        dims = self._dims
        return dims is None or (len(dims) == len(shape) and
                                all(d is None or d == n for d, n in zip(dims, shape)))

    # --- checks ------------------------------------------------------------------------
    def _error(self, message: str) -> InvalidArgumentError:
        return InvalidArgumentError(f"TensorArray {self.name}: {message}")

    def _check_open(self) -> None:
        if self.closed:
            raise self._error("TensorArray has already been closed.")

    def size(self) -> int:
        """The current number of elements."""
        with self.lock:
            self._check_open()
            return len(self.entries)

    def set_element_shape(self, candidate: TensorShape) -> None:
        """Merges ``candidate`` into the element shape (gather/concat attrs)."""
        with self.lock:
            if not self.element_shape.is_compatible_with(candidate):
                raise self._error(
                    f"Incompatible shapes during merge: {_debug(self.element_shape)} vs. "
                    f"{_debug(candidate)}")
            self.element_shape = self.element_shape.merge_with(candidate)

    # --- writes ------------------------------------------------------------------------
    def write(self, index: int, value: Any) -> None:
        """Writes (or, in a gradient array, adds) ``value`` at ``index``."""
        with self.lock:
            self._write_locked(index, value)

    def write_many(self, indices: Sequence[int], values: Sequence[Any]) -> None:
        with self.lock:
            for index, value in zip(indices, values):
                self._write_locked(index, value)

    def _write_locked(self, index: int, value: Any) -> None:
        self._check_open()
        if index < 0 or (not self.dynamic_size and index >= len(self.entries)):
            raise self._error(f"Tried to write to index {index} but array is not resizeable "
                              f"and size is: {len(self.entries)}")
        while index >= len(self.entries):
            self.entries.append(_Entry())
        entry = self.entries[index]
        shape = tuple(value.shape)
        if not self._fits(shape):
            raise self._error(
                f"Could not write to TensorArray index {index} because the value shape is "
                f"{list(shape)} which is incompatible with the TensorArray's inferred element "
                f"shape: {_debug(self.element_shape)} (consider setting infer_shape=False).")
        if self.identical_element_shapes and (self._dims is None or None in self._dims):
            self.element_shape = TensorShape(list(shape))
        if entry.read:
            raise self._error(f"Could not write to TensorArray index {index} because it has "
                              "already been read.")
        if entry.written and not self.multiple_writes_aggregate:
            raise self._error(f"Could not write to TensorArray index {index} because it has "
                              "already been written to.")
        if entry.written:
            self._aggregate(index, entry, value, shape)
            return
        entry.value, entry.shape, entry.written = value, shape, True

    def _aggregate(self, index: int, entry: _Entry, value: Any, shape: tuple[int, ...]) -> None:
        if shape != entry.shape:
            raise self._error(
                f"Could not aggregate to TensorArray index {index} because the existing shape "
                f"is {list(entry.shape or ())} but the new input shape is {list(shape)}.")
        entry.value = value if entry.value is None else entry.value + value
        self.gradients_disallowed = True

    # --- reads -------------------------------------------------------------------------
    def read(self, index: int) -> Any:
        """The element at ``index`` (zeros for an unwritten one of known shape)."""
        with self.lock:
            return self._read_locked(index)

    def read_many(self, indices: Sequence[int]) -> list[Any]:
        with self.lock:
            return [self._read_locked(i) for i in indices]

    def _read_locked(self, index: int) -> Any:
        self._check_open()
        if index < 0 or (not self.is_grad and index >= len(self.entries)):
            raise InvalidArgumentError(f"Tried to read from index {index} but array size is: "
                                       f"{len(self.entries)}")
        if index >= len(self.entries) or not self.entries[index].written:
            self._fill_unwritten(index)
        entry = self.entries[index]
        if entry.cleared:
            raise self._error(
                f"Could not read index {index} twice because it was cleared after a previous "
                "read (perhaps try setting clear_after_read = false?).")
        if entry.value is None:
            entry.value = self.zeros(entry.shape or ())
        value = entry.value
        if self.clear_after_read:
            entry.value, entry.cleared = None, True
        entry.read = True
        return value

    def _fill_unwritten(self, index: int) -> None:
        if self.is_grad and index < len(self.entries) and self.entries[index].shape:
            shape = self.entries[index].shape
        elif not self.element_shape.is_fully_defined():
            raise self._error(
                f"Could not read from TensorArray index {index}.  Furthermore, the element "
                f"shape is not fully defined: {_debug(self.element_shape)}.  It is possible you "
                "are working with a resizeable TensorArray and stop_gradients is not allowing "
                "the gradients to be written.  If you set the full element_shape property on "
                "the forward TensorArray, the proper all-zeros tensor will be returned instead "
                "of incurring this error.")
        else:
            shape = tuple(self.element_shape.as_list())
        while index >= len(self.entries):
            self.entries.append(_Entry())
        entry = self.entries[index]
        entry.shape, entry.written, entry.value = shape, True, None

    # --- gradients ---------------------------------------------------------------------
    def gradient_array(self, source: str) -> TensorArrayState:
        """The gradient array for ``source`` (created once; sized as this array is now)."""
        with self.lock:
            self._check_open()
            if self.gradients_disallowed:
                raise self._error(
                    "Unable to create a gradients TensorArray. Perhaps you used the "
                    "multiple_writes_aggregate flag on a previous write?  Gradient calculation "
                    "is impossible when multiple writes are performed to the same index.")
            if self.marked_size is None:
                self.marked_size = len(self.entries)
            found = self.grads.get(source)
            if found is None:
                found = TensorArrayState(
                    f"{self.name}@{source}", self.marked_size, self.element_shape,
                    self.identical_element_shapes, dynamic_size=False, clear_after_read=True,
                    zeros=self.zeros, multiple_writes_aggregate=True, is_grad=True)
                for entry, forward in zip(found.entries, self.entries):
                    entry.shape = forward.shape
                self.grads[source] = found
            return found

    def close(self) -> None:
        """Frees the elements; later uses fail."""
        with self.lock:
            self._check_open()
            self.entries = []
            self.closed = True


def _debug(shape: TensorShape) -> str:
    """A partial shape as TensorFlow's ``PartialTensorShape::DebugString`` prints it."""
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def check_empty_shape(state: TensorArrayState, shape: TensorShape, what: str) -> None:
    """Zero elements are stacked/concatenated only with a fully defined element shape."""
    if not shape.is_fully_defined():
        raise UnimplementedError(
            f"TensorArray {state.name} has size zero, but element shape {_debug(shape)} is not "
            f"fully defined. Currently only static shapes are supported when {what} zero-size "
            "TensorArrays.")


__all__ = ["TensorArrayState", "check_empty_shape"]
