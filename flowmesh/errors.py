"""The error hierarchy, mirroring TensorFlow's status codes.

Every runtime failure raised by flowmesh is an :class:`OpError` subclass. Messages
name the op, its node name, the input shapes and dtypes, and what was expected.

``InvalidArgumentError`` also subclasses :class:`ValueError` so that code written for
TensorFlow's graph-construction errors (``except ValueError``) keeps working.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class OpError(Exception):
    """Base class for errors raised while building or running a graph.

    Attributes:
        node_def: the name of the node that failed, or ``None``.
        op: the :class:`~flowmesh.core.graph.Operation` that failed, or ``None``.
        message: the message without the node suffix.
        error_code: the TensorFlow status code number.
    """

    error_code = 2

    def __init__(self, node_def: Any = None, op: Any = None, message: str = "", *args: Any):
        # Accept TensorFlow's (node_def, op, message) signature and a bare message.
        if message == "" and isinstance(node_def, str) and op is None:
            node_def, message = None, node_def
        self.node_def = node_def
        self.op = op
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # keep errors picklable for multiprocessing tests
        return (type(self), (self.node_def, None, self.message))


class CancelledError(OpError):
    """An operation or step was cancelled."""

    error_code = 1


class UnknownError(OpError):
    """An error that fits no other category."""

    error_code = 2


class InvalidArgumentError(OpError, ValueError):
    """An op received an invalid argument (bad shape, dtype, value or feed)."""

    error_code = 3


class DeadlineExceededError(OpError):
    """A deadline expired before the operation completed."""

    error_code = 4


class NotFoundError(OpError):
    """A requested entity (file, op type, variable, device) was not found."""

    error_code = 5


class AlreadyExistsError(OpError):
    """An entity that should be new already exists."""

    error_code = 6


class PermissionDeniedError(OpError):
    """The caller may not run the operation."""

    error_code = 7


class ResourceExhaustedError(OpError):
    """A resource (memory, message size, queue slot) ran out."""

    error_code = 8


class FailedPreconditionError(OpError):
    """The system is not in a state to run the op (e.g. an uninitialized variable)."""

    error_code = 9


class AbortedError(OpError):
    """The operation was aborted, typically by a concurrent failure; retrying may work."""

    error_code = 10


class OutOfRangeError(OpError):
    """Iteration ran past the end of its input (e.g. an exhausted Dataset)."""

    error_code = 11


class UnimplementedError(OpError):
    """The operation is not implemented or not supported."""

    error_code = 12


class InternalError(OpError):
    """An invariant of flowmesh itself was broken; please report it."""

    error_code = 13


class UnavailableError(OpError):
    """A task or service is currently unreachable; retrying later may work."""

    error_code = 14


class DataLossError(OpError):
    """Unrecoverable data loss or corruption (e.g. a truncated checkpoint)."""

    error_code = 15


class UnauthenticatedError(OpError):
    """The request lacks valid credentials (e.g. the cluster's secret)."""

    error_code = 16


_CODE_TO_CLASS: dict[int, type[OpError]] = {
    cls.error_code: cls
    for cls in (
        CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
        NotFoundError, AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError,
        FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError,
        InternalError, UnavailableError, DataLossError, UnauthenticatedError,
    )
}


def exception_type_from_error_code(code: int) -> type[OpError]:
    """Returns the :class:`OpError` subclass for a TensorFlow status code."""
    return _CODE_TO_CLASS.get(code, UnknownError)


def error_code_from_exception_type(cls: type[OpError]) -> int:
    """Returns the TensorFlow status code of an :class:`OpError` subclass."""
    return cls.error_code


# TensorFlow's status code constants (tf.errors.INVALID_ARGUMENT, ...).
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


# --- traceback filtering (tf.debugging.enable_traceback_filtering) ---------------------------
_FILTER_TRACEBACKS = [True]
_PACKAGE_DIR = __file__.rsplit("/", 1)[0] + "/"


def enable_traceback_filtering() -> None:
    """Errors raised by ``Session.run`` show only the frames outside flowmesh's own code
    (TensorFlow's default, ``tf.debugging.enable_traceback_filtering``)."""
    _FILTER_TRACEBACKS[0] = True


def disable_traceback_filtering() -> None:
    """Errors keep every frame, flowmesh's internals included."""
    _FILTER_TRACEBACKS[0] = False


def is_traceback_filtering_enabled() -> bool:
    """Whether :func:`enable_traceback_filtering` is in effect."""
    return _FILTER_TRACEBACKS[0]


def filter_traceback(tb: Any) -> Any:
    """``tb`` without the frames of flowmesh's own files (when filtering is enabled)."""
    if not _FILTER_TRACEBACKS[0]:
        return tb
    import types

    frames = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            frames.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    filtered = None
    for frame, lasti, lineno in reversed(frames):
        filtered = types.TracebackType(filtered, frame, lasti, lineno)
    return filtered


class _Status:
    """The status object of :func:`raise_exception_on_not_ok_status` (``code`` 0 is OK)."""

    def __init__(self) -> None:
        self.code = 0
        self.message = ""


@contextlib.contextmanager
def raise_exception_on_not_ok_status() -> Iterator[_Status]:
    """A status for a C API call (TensorFlow 1.x's SWIG wrappers set it); on exit, a status
    whose ``code`` is not OK (0) raises the matching :class:`OpError` with its ``message``."""
    status = _Status()
    yield status
    if status.code:
        raise exception_type_from_error_code(status.code)(None, None, status.message)
