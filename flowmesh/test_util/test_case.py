"""``tf.test.TestCase``: ``unittest.TestCase`` with TensorFlow 1.x's graph-mode helpers.

Each test starts with a fresh default graph, NumPy's and Python's generators seeded and the
graph-level seed set (TensorFlow's ``DEFAULT_GRAPH_SEED``, 87654321); ``session()`` /
``cached_session()`` open a session on it and make it the default; ``evaluate`` runs
tensors (nested structures too) there; ``assertAllClose`` and the other array assertions
take tensors, NumPy arrays and nested lists/tuples/dicts alike.

Example:
    >>> class SquareTest(tf.test.TestCase):
    ...     def testSquare(self):
    ...         with self.cached_session():
    ...             self.assertAllEqual(tf.square([2, 3]), [4, 9])
    >>> if __name__ == "__main__": tf.test.main()
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import tempfile
import unittest
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.default_session import get_default_session
from flowmesh.core.graph import Graph, Operation, Tensor, get_default_graph, reset_default_graph
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.errors import OpError
from flowmesh.ops.random_ops import set_random_seed
from flowmesh.runtime.session import Session

DEFAULT_GRAPH_SEED = 87654321
_TEMP_DIR: list[str] = []


def get_temp_dir() -> str:
    """A temporary directory of this process (made on first use), as ``tf.test.get_temp_dir``."""
    if not _TEMP_DIR:
        _TEMP_DIR.append(tempfile.mkdtemp(prefix="flowmesh_test_"))
    return _TEMP_DIR[0]


def _is_graph_value(value: Any) -> bool:
    return isinstance(value, (Tensor, Operation, SparseTensor)) or hasattr(value, "initializer") and hasattr(
        value, "read_value")


def _contains_graph_values(value: Any) -> bool:
    if _is_graph_value(value):
        return True
    if isinstance(value, dict):
        return any(_contains_graph_values(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_contains_graph_values(v) for v in value)
    return False


class TestCase(unittest.TestCase):
    """Base class for tests of graph-mode programs (``tf.test.TestCase``)."""

    def __init__(self, methodName: str = "runTest") -> None:  # noqa: N803 - unittest's name
        super().__init__(methodName)
        self._cached_session: Session | None = None
        self._temp_dir: str | None = None

    def setUp(self) -> None:  # noqa: N802 - unittest's name
        self._clear_cached_session()
        random.seed(DEFAULT_GRAPH_SEED)
        np.random.seed(DEFAULT_GRAPH_SEED)
        reset_default_graph()
        set_random_seed(DEFAULT_GRAPH_SEED)

    def tearDown(self) -> None:  # noqa: N802 - unittest's name
        self._clear_cached_session()

    def _clear_cached_session(self) -> None:
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    def get_temp_dir(self) -> str:
        """A temporary directory for this test (unique per test method)."""
        if self._temp_dir is None:
            self._temp_dir = tempfile.mkdtemp(prefix=re.sub(r"\W", "_", self.id())[-60:] + "_", dir=get_temp_dir())
        return self._temp_dir

    def create_tempdir(self) -> str:
        """A fresh temporary directory under :meth:`get_temp_dir`."""
        return tempfile.mkdtemp(dir=self.get_temp_dir())

    def create_tempfile(self, file_path: str | None = None, content: str | bytes | None = None) -> str:
        """A temporary file (with ``content``) under :meth:`get_temp_dir`; returns its path."""
        path = os.path.join(self.create_tempdir(), file_path or "tempfile")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb" if isinstance(content, bytes) else "w") as f:
            if content is not None:
                f.write(content)
        return path

    # --- sessions -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, graph: Graph | None = None, config: Any = None, use_gpu: bool = True,
                force_gpu: bool = False) -> Iterator[Session]:
        """A new session on ``graph`` (the default graph), made the default for the block.
        ``use_gpu``/``force_gpu`` are accepted; placement follows the graph's devices."""
        graph = graph or get_default_graph()
        with graph.as_default(), Session(graph=graph, config=config) as sess, sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph: Graph | None = None, config: Any = None, use_gpu: bool = True,
                       force_gpu: bool = False) -> Iterator[Session]:
        """The test's one session (made on first use), made the default for the block."""
        graph = graph or get_default_graph()
        if self._cached_session is None or self._cached_session.graph is not graph:
            self._clear_cached_session()
            self._cached_session = Session(graph=graph, config=config)
        with graph.as_default(), self._cached_session.as_default():
            yield self._cached_session

    test_session = cached_session

    def evaluate(self, tensors: Any) -> Any:
        """``tensors`` (a tensor, op or nested structure) run in the default session (or the
        cached one)."""
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as cached:
            return cached.run(tensors)

    def _value(self, value: Any) -> Any:
        """``value`` with its graph values (tensors, variables) replaced by theirs."""
        if not _contains_graph_values(value):
            return value
        if _is_graph_value(value):
            return self.evaluate(value)
        if isinstance(value, dict):
            return {k: self._value(v) for k, v in value.items()}
        return type(value)(self._value(v) for v in value) if isinstance(value, tuple) and not hasattr(
            value, "_fields") else [self._value(v) for v in value]

    # --- array assertions ---------------------------------------------------------------------
    def _nd(self, value: Any) -> np.ndarray:
        value = self._value(value)
        return value if isinstance(value, np.ndarray) else np.array(value)

    def assertAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6,  # noqa: N802
                       msg: str | None = None) -> None:
        """Equal within ``atol + rtol * |b|`` elementwise; nested lists/tuples/dicts compare
        item by item."""
        a, b = self._value(a), self._value(b)
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, msg)
            self.assertIsInstance(b, dict, msg)
            self.assertEqual(sorted(a), sorted(b), msg)
            for key in a:
                self.assertAllClose(a[key], b[key], rtol, atol, msg=f"{msg or ''} [key {key!r}]")
            return
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and not _is_numeric(a) and \
                not _is_numeric(b):
            self.assertEqual(len(a), len(b), msg)
            for i, (x, y) in enumerate(zip(a, b)):
                self.assertAllClose(x, y, rtol, atol, msg=f"{msg or ''} [index {i}]")
            return
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        self.assertEqual(a_arr.shape, b_arr.shape, f"{msg or ''} shape mismatch")
        np.testing.assert_allclose(a_arr, b_arr, rtol=rtol, atol=atol, err_msg=msg or "", equal_nan=True)

    def assertAllCloseAccordingToType(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6,  # noqa: N802
                                      float_rtol: float = 1e-6, float_atol: float = 1e-6,
                                      half_rtol: float = 1e-3, half_atol: float = 1e-3,
                                      bfloat16_rtol: float = 1e-2, bfloat16_atol: float = 1e-2,
                                      msg: str | None = None) -> None:
        """:meth:`assertAllClose` with tolerances widened for float32/16/bfloat16 values."""
        a, b = self._nd(a), self._nd(b)
        kinds = {a.dtype, b.dtype}
        if np.float32 in kinds or np.complex64 in kinds:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.float16 in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if dtypes.bfloat16.as_numpy_dtype in kinds:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a.astype(np.float64) if a.dtype.kind == "V" else a,
                            b.astype(np.float64) if b.dtype.kind == "V" else b, rtol, atol, msg)

    def assertNotAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6,  # noqa: N802
                          msg: str | None = None) -> None:
        try:
            self.assertAllClose(a, b, rtol, atol, msg)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are close at all elements")

    def assertAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:  # noqa: N802
        """Same shape and equal elements."""
        a, b = self._nd(a), self._nd(b)
        self.assertEqual(a.shape, b.shape, f"{msg or ''} shape mismatch: {a.shape} vs {b.shape}")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNotAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:  # noqa: N802
        try:
            self.assertAllEqual(a, b, msg)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are equal at all elements")

    def _compare_all(self, a: Any, comparison: Any, bound: Any, what: str) -> None:
        array = self._nd(a)
        if not np.all(comparison(array, bound)):
            raise AssertionError(f"not every element is {what} {bound}: {array}")

    def assertAllGreater(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._compare_all(a, np.greater, comparison_target, ">")

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._compare_all(a, np.greater_equal, comparison_target, ">=")

    def assertAllLess(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._compare_all(a, np.less, comparison_target, "<")

    def assertAllLessEqual(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._compare_all(a, np.less_equal, comparison_target, "<=")

    def assertAllInRange(self, target: Any, lower_bound: Any, upper_bound: Any, open_lower_bound: bool = False,  # noqa: N802
                         open_upper_bound: bool = False) -> None:
        """Every element within the bounds (closed unless told otherwise)."""
        self._compare_all(target, np.greater if open_lower_bound else np.greater_equal, lower_bound, "above")
        self._compare_all(target, np.less if open_upper_bound else np.less_equal, upper_bound, "below")

    def assertAllInSet(self, target: Any, expected_set: Any) -> None:  # noqa: N802
        values = set(self._nd(target).reshape(-1).tolist())
        extra = values - set(expected_set)
        if extra:
            raise AssertionError(f"{sorted(extra)} not in {set(expected_set)}")

    def assertArrayNear(self, farray1: Any, farray2: Any, err: float, msg: str | None = None) -> None:  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for x, y in zip(farray1, farray2):
            self.assertNear(float(x), float(y), err, msg)

    def assertNear(self, f1: float, f2: float, err: float, msg: str | None = None) -> None:  # noqa: N802
        if not (f1 == f2 or abs(f1 - f2) <= err):
            raise AssertionError(f"{f1} != {f2} +/- {err}{' : ' + msg if msg else ''}")

    def assertNDArrayNear(self, ndarray1: Any, ndarray2: Any, err: float,  # noqa: N802
                          msg: str | None = None) -> None:
        self.assertTrue(np.allclose(self._nd(ndarray1), self._nd(ndarray2), atol=err), msg)

    def assertShapeEqual(self, input_a: Any, input_b: Any, msg: str | None = None) -> None:  # noqa: N802
        """A NumPy array's shape equals a tensor's static shape."""
        if not isinstance(input_b, Tensor):
            raise TypeError("input_b must be a Tensor")
        self.assertEqual(list(np.shape(input_a)), input_b.shape.as_list(), msg)

    def assertDTypeEqual(self, target: Any, expected_dtype: Any) -> None:  # noqa: N802
        array = self._nd(target)
        self.assertEqual(array.dtype, dtypes.as_dtype(expected_dtype).as_numpy_dtype)

    def assertDeviceEqual(self, device1: Any, device2: Any, msg: str | None = None) -> None:  # noqa: N802
        from flowmesh.core.device_spec import DeviceSpec

        def canonical(d: Any) -> str:
            return DeviceSpec.from_string(d or "").to_string() if isinstance(d, str) or d is None else d.to_string()
        self.assertEqual(canonical(device1), canonical(device2), msg)

    def assertStartsWith(self, actual: str, expected_start: str, msg: str | None = None) -> None:  # noqa: N802
        if not actual.startswith(expected_start):
            raise AssertionError(msg or f"{actual!r} does not start with {expected_start!r}")

    def assertItemsEqual(self, first: Any, second: Any, msg: str | None = None) -> None:  # noqa: N802
        self.assertCountEqual(first, second, msg)

    def assertProtoEquals(self, expected_message_maybe_ascii: Any, message: Any,  # noqa: N802
                          msg: str | None = None) -> None:
        """Equal protocol buffer messages (the expected one may be text format)."""
        from google.protobuf import text_format

        expected = expected_message_maybe_ascii
        if isinstance(expected, str):
            expected = text_format.Parse(expected, type(message)())
        self.assertEqual(text_format.MessageToString(expected), text_format.MessageToString(message), msg)

    # --- errors -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type: Any,  # noqa: N802
                                       expected_err_re_or_predicate: Any) -> Iterator[None]:
        """The block raises ``exception_type`` whose message matches the regular expression
        (or satisfies the predicate)."""
        if callable(expected_err_re_or_predicate):
            predicate: Callable[[BaseException], bool] = expected_err_re_or_predicate
        else:
            pattern = expected_err_re_or_predicate

            def predicate(e: BaseException) -> bool:
                return re.search(pattern, str(e) + " " + str(getattr(e, "message", ""))) is not None
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e).__name__}: {e} does not match "
                                     f"{expected_err_re_or_predicate!r}") from e
        else:
            raise AssertionError(f"{exception_type} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate: Any) -> Any:  # noqa: N802
        """The block raises a ``tf.errors.OpError`` matching the pattern."""
        return self.assertRaisesWithPredicateMatch(OpError, expected_err_re_or_predicate)


def _is_numeric(value: Any) -> bool:
    try:
        return np.asarray(value).dtype.kind in "biufcV"
    except (ValueError, TypeError):
        return False
