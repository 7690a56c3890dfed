"""``tf.Session`` and ``tf.InteractiveSession``.

The session front end is the same for every target: it flattens fetch structures,
validates and converts feeds, and turns results into NumPy values. The backend runs the
step: :class:`LocalBackend` for ``target=''`` (this process's devices, its own
variables), or the distributed backend for ``grpc://host:port`` targets.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import to_numpy as python_to_numpy
from flowmesh.core.default_session import get_default_session, session_stack  # noqa: F401 - tf.get_default_session
from flowmesh.core.graph import Graph, Operation, Tensor, get_default_graph
from flowmesh.core.shapes import format_dims
from flowmesh.errors import InvalidArgumentError, OpError, filter_traceback
from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.kernel_cache import KernelCache
from flowmesh.kernels.contract.step import StepContext
from flowmesh.runtime import host_memory, placer
from flowmesh.runtime.cpu_policy import CpuPolicy
from flowmesh.runtime.device import DeviceSet, local_devices
from flowmesh.runtime.options import ConfigProto, RunMetadata, RunOptions, get_log_device_placement
from flowmesh.runtime.partition import partition_graph_def
from flowmesh.runtime.plan import StepPlan
from flowmesh.runtime.run_cache import RunCache, fits
from flowmesh.runtime.timeline import step_stats_from_trace


class LocalBackend:
    """Runs steps on this process's devices; owns the session's variables."""

    def __init__(self, graph: Graph, config: ConfigProto):
        self.graph = graph
        self.config = config
        self.devices = DeviceSet(local_devices(
            device_count=config.device_count,
            visible_device_list=config.gpu_options.visible_device_list,
        ))
        self._pinned: dict[Operation, Any] = {}  # stateful op -> device, for every step
        self.kernels = KernelCache(session_state=self)
        self._plans: dict[Any, StepPlan] = {}
        self._plans_lock = threading.Lock()
        self.cpu = CpuPolicy(config.intra_op_parallelism_threads)
        self._logged: set[Operation] = set()
        host_memory.keep_freed_memory()

    def plan_for(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor],
                 targets: Sequence[Operation]) -> StepPlan:
        key = (tuple(fetches), tuple(feeds), tuple(targets))
        plan = self._plans.get(key)
        if plan is None:
            with self._plans_lock:
                plan = self._plans.get(key)
                if plan is None:
                    log = self._log_placement if self.config.log_device_placement else None
                    plan = StepPlan(
                        fetches, feeds, targets, self.devices, self.kernels,
                        allow_soft_placement=self.config.allow_soft_placement,
                        log_device_placement=log, pinned=self._pinned,
                    )
                    self._plans[key] = plan
        return plan

    def _log_placement(self, placement: dict[Operation, Any]) -> None:
        placer.log_placement(placement, self._logged)

    def run(self, fetches: Sequence[Tensor], feeds: Sequence[Tensor], feed_values: Sequence[Any],
            targets: Sequence[Operation], step: StepContext) -> list[Any]:
        plan = self.plan_for(fetches, feeds, targets)
        if step.partition_graphs is not None:  # RunOptions(output_partition_graphs=True)
            step.partition_graphs.extend(partition_graph_def(p) for p in plan.partitions)
        return self.cpu.run(plan, lambda: plan.run(feed_values, step))

    def close(self) -> None:
        for device in self.devices:
            device.resources.clear()
        self._plans.clear()
        self.cpu.close()


# --- session targets ---------------------------------------------------------------------------
_TARGETS: dict[str, tuple[Callable[..., Any], Callable[..., None]]] = {}


def register_session_target(scheme: str, backend: Callable[..., Any],
                            reset: Callable[..., None]) -> None:
    """Registers the backend of targets ``scheme...`` (e.g. ``"grpc://"``).

    Args:
        scheme: the target prefix the backend serves.
        backend: ``backend(target, graph, config)`` -> a session backend.
        reset: ``reset(target, containers)`` for ``Session.reset``.
    """
    _TARGETS[scheme] = (backend, reset)


def _target_handler(target: str) -> tuple[Callable[..., Any], Callable[..., None]] | None:
    if not isinstance(target, str):
        return None
    return next((h for scheme, h in _TARGETS.items() if target.startswith(scheme)), None)


def _make_backend(target: str, graph: Graph, config: ConfigProto) -> Any:
    if target in ("", "local", None):
        return LocalBackend(graph, config)
    handler = _target_handler(target)
    if handler is not None:
        return handler[0](target, graph, config)
    raise InvalidArgumentError(
        None, None,
        f"Unsupported session target {target!r}: use '' for a local session or "
        "'grpc://host:port' (e.g. server.target) for a distributed one"
        + ("" if _TARGETS else " (import flowmesh.distributed.client to register grpc://)") + ".",
    )


class BaseSession:
    """Shared implementation of :class:`Session` and :class:`InteractiveSession`."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None):
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(graph).__name__}")
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config if config is not None else ConfigProto(
            log_device_placement=get_log_device_placement())
        self._target = target
        self._closed = False
        self._backend = _make_backend(target, self._graph, self._config)
        self._default_stack: list[Any] = []
        self._run_cache = RunCache(self._graph)

    # --- properties ----------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self) -> Any:
        """The session's graph as TensorFlow's ``GraphDef`` protobuf."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    # --- running -------------------------------------------------------------------------
    def run(self, fetches: Any, feed_dict: dict | None = None,
            options: RunOptions | None = None, run_metadata: RunMetadata | None = None) -> Any:
        """Runs the ops and evaluates the tensors in ``fetches``.

        Args:
            fetches: a graph element, a name, or a nested list/tuple/namedtuple/dict of them.
            feed_dict: maps tensors (or their names) to values overriding them this step.
            options: ``RunOptions`` (``timeout_in_ms``, ``trace_level``).
            run_metadata: filled with per-op timings when ``trace_level=FULL_TRACE``.

        Returns:
            The fetched values as NumPy arrays/scalars in the structure of ``fetches``
            (``None`` for operations).

        Raises:
            RuntimeError: if the session is closed.
            InvalidArgumentError: a feed has the wrong shape or dtype, or a placeholder the
                fetches need was not fed.
            OpError: a kernel failed; the message names the node.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        mapper = self._run_cache.mapper(fetches)
        feed_tensors, feed_values = self._prepare_feeds(feed_dict)
        try:
            values = self._run_flat(mapper.tensors, feed_tensors, feed_values, mapper.targets,
                                    options, run_metadata)
        except OpError as exc:  # tf.debugging.enable_traceback_filtering: hide flowmesh's frames
            raise exc.with_traceback(filter_traceback(exc.__traceback__)) from exc.__cause__
        return mapper.build_results(
            [to_numpy(v, t.dtype) for v, t in zip(values, mapper.tensors)]
        )

    def _run_flat(self, fetches: list[Tensor], feeds: list[Tensor], feed_values: list[Any],
                  targets: list[Operation], options: RunOptions | None,
                  run_metadata: RunMetadata | None) -> list[Any]:
        timeout = None
        if options is not None and options.timeout_in_ms > 0:
            timeout = options.timeout_in_ms / 1000.0
        elif self._config.operation_timeout_in_ms > 0:
            timeout = self._config.operation_timeout_in_ms / 1000.0
        tracing = options is not None and options.trace_level > 0
        step = StepContext(timeout=timeout, trace=[] if tracing else None)
        if options is not None and options.output_partition_graphs:
            step.partition_graphs = []
        values = self._backend.run(fetches, feeds, feed_values, targets, step)
        if tracing and run_metadata is not None:
            _fill_run_metadata(run_metadata, step.trace or [])
            run_metadata.step_stats.dev_stats.extend(step.remote_stats)  # other tasks
        if run_metadata is not None and step.partition_graphs is not None:
            run_metadata.partition_graphs.extend(step.partition_graphs)
        return values

    def _prepare_feeds(self, feed_dict: dict | None) -> tuple[list[Tensor], list[Any]]:
        if not feed_dict:
            return [], []
        layout = self._run_cache.feed_layout(feed_dict, self._resolve_feed_key)
        if layout is not None:  # cached key order; arrays of the right dtype/shape pass as is
            values = list(feed_dict.values())
            feedable = self._graph.is_feedable
            return layout.tensors, [
                values[i] if fits(values[i], numpy_dtype, dims) and feedable(t)
                else self._check_feed(t, values[i])
                for i, t, numpy_dtype, dims in layout.slots
            ]
        pairs: list[tuple[Tensor, Any]] = []
        for key, value in feed_dict.items():
            for tensor, subvalue in _expand_feed(key, value, self._graph):
                pairs.append((tensor, self._check_feed(tensor, subvalue)))
        pairs.sort(key=lambda p: (p[0].op._id, p[0].value_index))
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def _resolve_feed_key(self, key: Any) -> Tensor:
        return self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)

    def _check_feed(self, tensor: Tensor, value: Any) -> Any:
        if isinstance(value, Tensor):
            raise TypeError(
                "The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                f"For reference, the tensor object was {value} which was passed to the feed "
                f"with key {tensor}."
            )
        if not self._graph.is_feedable(tensor):
            raise ValueError(f"Tensor {tensor.name} may not be fed.")
        dtype = tensor.dtype
        if dtype == dtypes.resource:
            raise TypeError(f"Tensor {tensor.name} is a resource handle and cannot be fed.")
        if _is_torch_tensor(value):
            array = value
            shape = tuple(value.shape)
        else:
            try:
                if dtype == dtypes.string:
                    array = python_to_numpy(value, dtypes.string)
                elif isinstance(value, np.ndarray) and value.dtype == dtype.as_numpy_dtype:
                    array = value
                else:
                    array = np.asarray(value, dtype=dtype.as_numpy_dtype)
            except OverflowError:  # TensorFlow's words for an integer its type cannot hold
                raise TypeError(
                    f"Type of feed value {_short(value)} with type {type(value)} is not "
                    f"compatible with Tensor type {dtype.as_numpy_dtype} (feeding "
                    f"'{tensor.name}'). Try explicitly setting the type of the feed tensor to a "
                    "larger type (e.g. int64).") from None
            except (TypeError, ValueError) as exc:
                raise InvalidArgumentError(
                    tensor.op.name, tensor.op,
                    f"Cannot feed value {_short(value)} to Tensor '{tensor.name}' with dtype "
                    f"{dtype.name}: {exc}",
                ) from None
            shape = array.shape
        if not tensor.shape.is_compatible_with(shape):
            raise InvalidArgumentError(
                tensor.op.name, tensor.op,
                f"Cannot feed value of shape {tuple(shape)} for Tensor '{tensor.name}', which "
                f"has shape {format_dims(tensor.shape.as_list())}",
            )
        return array

    def make_callable(self, fetches: Any, feed_list: Sequence[Any] | None = None,
                      accept_options: bool = False) -> Any:
        """Returns ``fn(*feed_values)`` running ``fetches`` (TensorFlow's fast path)."""
        feed_list = list(feed_list or [])

        def call(*args: Any, **kwargs: Any) -> Any:
            if len(args) != len(feed_list):
                raise TypeError(f"Expected {len(feed_list)} feed values, got {len(args)}")
            return self.run(fetches, feed_dict=dict(zip(feed_list, args)), **kwargs)

        return call

    # --- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Frees the session's resources (for a local session, its variables)."""
        if not self._closed:
            self._closed = True
            self._backend.close()

    def __enter__(self) -> BaseSession:
        self._default_context = self.as_default()
        self._default_context.__enter__()
        self._graph_context = self._graph.as_default() if self._graph is not get_default_graph() else None
        if self._graph_context is not None:
            self._graph_context.__enter__()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._graph_context is not None:
            self._graph_context.__exit__(exc_type, exc, tb)
        self._default_context.__exit__(exc_type, exc, tb)
        self.close()

    @contextlib.contextmanager
    def as_default(self) -> Iterator[BaseSession]:
        """Makes this the default session for ``Tensor.eval`` and ``Operation.run``."""
        stack = session_stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.remove(self)

    def list_devices(self) -> list[Any]:
        """The devices of this session: ``DeviceAttributes`` with ``name``, ``device_type``,
        ``memory_limit_bytes``, ``incarnation`` (as ``tf.Session.list_devices``)."""
        devices: DeviceSet | None = getattr(self._backend, "devices", None)
        return [d.attributes() for d in devices] if devices is not None else []

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class Session(BaseSession):
    """``tf.Session(target='', graph=None, config=None)``.

    Example:
        >>> with tf.Session() as sess:
        ...     print(sess.run(tf.matmul(a, b)))
    """

    @staticmethod
    def reset(target: str, containers: Sequence[str] | None = None, config: Any = None) -> None:
        """Clears the resource containers (variables) of a server."""
        handler = _target_handler(target)
        if handler is not None:
            handler[1](target, containers)


class InteractiveSession(BaseSession):
    """A session that installs itself as the default session on construction."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None):
        super().__init__(target, graph, config)
        session_stack().append(self)
        self._installed = True

    def close(self) -> None:
        super().close()
        if getattr(self, "_installed", False):
            self._installed = False
            stack = session_stack()
            if self in stack:
                stack.remove(self)


# --- helpers ---------------------------------------------------------------------------------
def _expand_feed(key: Any, value: Any, graph: Graph) -> list[tuple[Tensor, Any]]:
    components = getattr(key, "_feed_components", None)
    if components is not None:  # composite tensors feed each component
        return [pair for k, v in components(value) for pair in _expand_feed(k, v, graph)]
    try:
        element = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
    except (TypeError, KeyError, ValueError) as exc:
        raise TypeError(f"Cannot interpret feed_dict key {key!r} as a Tensor: {exc}") from None
    return [(element, value)]


def _is_torch_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "shape")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def _fill_run_metadata(run_metadata: RunMetadata, trace: list[Any]) -> None:
    run_metadata.step_stats.dev_stats.extend(step_stats_from_trace(trace).dev_stats)
