"""The state behind ``tf.keras.backend`` in graph mode: the Keras session, learning phase,
unique names and settings (``floatx``, ``epsilon``, ``image_data_format``); re-exported by
:mod:`flowmesh.keras.backend`.

Keras builds graphs in the default graph and runs them in one session per graph
(``get_session``), which initializes the variables Keras created that are not yet
initialized, as TensorFlow's Keras does. Under a ``ParameterServerStrategy`` the session
connects to this task's server and only the chief initializes the ps variables. ``learning_phase()`` is a boolean placeholder
with default ``False``; ``fit`` feeds ``True``.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.graph import Graph, get_default_graph
from flowmesh.ops import constant_op

_FLOATX = "float32"
_EPSILON = 1e-7
_IMAGE_DATA_FORMAT = "channels_last"

# Per graph: Keras session, learning phase placeholder, layer-name counters.
_SESSIONS: weakref.WeakKeyDictionary[Graph, Any] = weakref.WeakKeyDictionary()
_LEARNING_PHASES: weakref.WeakKeyDictionary[Graph, Any] = weakref.WeakKeyDictionary()
_NAME_COUNTS: weakref.WeakKeyDictionary[Graph, dict[str, int]] = weakref.WeakKeyDictionary()
_INITIALIZED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_CPU_DEVICES: weakref.WeakKeyDictionary[Graph, int] = weakref.WeakKeyDictionary()
_UIDS: weakref.WeakKeyDictionary[Graph, dict[str, int]] = weakref.WeakKeyDictionary()
_MANUAL_VAR_INIT = False


def floatx() -> str:
    """The default float type of Keras weights (``"float32"``)."""
    return _FLOATX


def set_floatx(value: str) -> None:
    global _FLOATX
    _FLOATX = dtypes.as_dtype(value).name


def epsilon() -> float:
    """The fuzz factor Keras adds to denominators (1e-7)."""
    return _EPSILON


def set_epsilon(value: float) -> None:
    global _EPSILON
    _EPSILON = float(value)


def image_data_format() -> str:
    return _IMAGE_DATA_FORMAT


def data_format_or_default(data_format: str | None) -> str:
    """``data_format``, or :func:`image_data_format` when it is None.

    Raises:
        ValueError: neither ``"channels_last"`` nor ``"channels_first"``.
    """
    fmt = data_format or image_data_format()
    if fmt not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {data_format}. Expected one of 'channels_first', 'channels_last'.")
    return fmt


def unique_object_name(base: str, graph: Graph | None = None, zero_based: bool = True) -> str:
    """``base``, ``base_1``, ``base_2``... counted per graph (Keras layer and model names)."""
    graph = graph or get_default_graph()
    counts = _NAME_COUNTS.setdefault(graph, {})
    n = counts.get(base, 0)
    counts[base] = n + 1
    if n == 0 and zero_based:
        return base
    return f"{base}_{n if zero_based else n + 1}"


def reset_uids() -> None:
    _NAME_COUNTS.pop(get_default_graph(), None)
    _UIDS.pop(get_default_graph(), None)


def get_uid(prefix: str = "") -> int:
    """1, 2, 3... for successive calls with ``prefix``, counted per graph."""
    counts = _UIDS.setdefault(get_default_graph(), {})
    counts[prefix] = counts.get(prefix, 0) + 1
    return counts[prefix]


def set_image_data_format(data_format: str) -> None:
    """Sets the default ``data_format`` of image layers (``channels_last``/``channels_first``)."""
    global _IMAGE_DATA_FORMAT
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {data_format}. Expected one of 'channels_first', 'channels_last'.")
    _IMAGE_DATA_FORMAT = str(data_format)


def manual_variable_initialization(value: bool) -> None:
    """``True``: the Keras session no longer initializes variables itself (the program
    runs ``tf.global_variables_initializer()``)."""
    global _MANUAL_VAR_INIT
    _MANUAL_VAR_INIT = bool(value)


def name_scope(name: str) -> Any:
    from flowmesh.core.graph import name_scope as scope

    return scope(name)


def learning_phase() -> Any:
    """The graph's boolean learning-phase placeholder (default False: inference)."""
    graph = get_default_graph()
    phase = _LEARNING_PHASES.get(graph)
    if phase is None:
        with graph.name_scope(None):
            phase = constant_op.placeholder_with_default(False, shape=[], name="keras_learning_phase")
        _LEARNING_PHASES[graph] = phase
    return phase


def set_session(session: Any) -> None:
    """Makes ``session`` the Keras session of its graph."""
    _SESSIONS[session.graph] = session


def get_session() -> Any:
    """The default session if one is active, else the Keras session of the default graph
    (created on first use). Variables not yet initialized in it are initialized."""
    from flowmesh.runtime.session import Session, get_default_session

    session = get_default_session()
    graph = get_default_graph()
    if session is None or session.graph is not graph:
        session = _SESSIONS.get(graph)
        if session is None or getattr(session, "_closed", False):
            cluster = _cluster_strategy(graph)
            target = cluster.extended.session_target if cluster is not None else ""
            session = Session(target, graph=graph, config=_session_config(graph))
            _SESSIONS[graph] = session
    _initialize_variables(session)
    return session


def require_devices(devices: Any) -> None:
    """Records devices a strategy places replicas on, so the Keras session of the default
    graph is created with enough logical CPU devices (``/cpu:1`` needs two)."""
    from flowmesh.core.device_spec import DeviceSpec

    graph = get_default_graph()
    need = _CPU_DEVICES.get(graph, 1)
    for device in devices:
        spec = DeviceSpec.from_string(device)
        if (spec.device_type or "").upper() == "CPU" and spec.device_index is not None:
            need = max(need, int(spec.device_index) + 1)
    _CPU_DEVICES[graph] = need


def _session_config(graph: Graph) -> Any:
    need = _CPU_DEVICES.get(graph, 1)
    if need <= 1:
        return None
    from flowmesh.runtime.options import ConfigProto

    return ConfigProto(device_count={"CPU": need})


def _cluster_strategy(graph: Graph) -> Any:
    """The ParameterServerStrategy whose variables this graph's sessions reach through
    this task's server, else None."""
    from flowmesh.distribute.parameter_server_strategy import strategy_for_graph

    return strategy_for_graph(graph)


def _initialize_variables(session: Any) -> None:
    from flowmesh.ops import variables as variables_lib

    if _MANUAL_VAR_INIT:
        return
    variables = variables_lib.global_variables() + variables_lib.local_variables()
    done = _INITIALIZED.setdefault(session, set())
    candidates = [v for v in variables if v.name not in done]
    if not candidates:
        return
    flags = session.run([variables_lib.is_variable_initialized(v) for v in candidates])
    todo = [v for v, ok in zip(candidates, flags) if not ok]
    cluster = _cluster_strategy(session.graph)
    if todo and cluster is not None:
        cluster.extended.initialize_or_wait(session, todo)  # only the chief initializes ps variables
    elif todo:
        session.run(variables_lib.variables_initializer(todo))
    done.update(v.name for v in candidates)


def clear_session() -> None:
    """Forgets the Keras session, names and learning phase of the default graph and resets
    the default graph (as ``tf.keras.backend.clear_session``)."""
    from flowmesh.core.graph import reset_default_graph

    graph = get_default_graph()
    session = _SESSIONS.pop(graph, None)
    if session is not None:
        session.close()
    _LEARNING_PHASES.pop(graph, None)
    _NAME_COUNTS.pop(graph, None)
    reset_default_graph()


def get_value(x: Any) -> np.ndarray:
    """The current value of a variable (or tensor) from the Keras session."""
    return get_session().run(x)


def batch_get_value(tensors: list[Any]) -> list[np.ndarray]:
    return get_session().run(list(tensors)) if tensors else []


def set_value(x: Any, value: Any) -> None:
    batch_set_value([(x, value)])


def batch_set_value(pairs: list[tuple[Any, Any]]) -> None:
    """Assigns NumPy values to variables through cached assign ops fed by placeholders."""
    if not pairs:
        return
    session = get_session()
    ops, feeds = [], {}
    for variable, value in pairs:
        value = np.asarray(value, dtype=variable.dtype.as_numpy_dtype)
        if tuple(value.shape) != tuple(variable.shape.as_list()):
            raise ValueError(
                f"Cannot assign a value of shape {value.shape} to weight {variable.name} of shape "
                f"{variable.shape}."
            )
        placeholder, assign = _assign_op(variable)
        ops.append(assign)
        feeds[placeholder] = value
    session.run(ops, feed_dict=feeds)


def _assign_op(variable: Any) -> tuple[Any, Any]:
    cached = getattr(variable, "_keras_assign", None)
    if cached is None:
        graph = variable.graph if hasattr(variable, "graph") else get_default_graph()
        with graph.as_default(), graph.name_scope(None):
            placeholder = constant_op.placeholder(variable.dtype, variable.shape,
                                                  name=variable.op.name.replace("/", "_") + "_value")
            cached = (placeholder, variable.assign(placeholder))
        variable._keras_assign = cached
    return cached


def int_shape(x: Any) -> tuple[int | None, ...] | None:
    """The static shape of ``x`` as a tuple (None for unknown dimensions)."""
    shape = x.shape if hasattr(x, "shape") else x.get_shape()
    if shape.rank is None:
        return None
    return tuple(shape.as_list())


def smart_cond(pred: Any, true_fn: Any, false_fn: Any, name: str | None = None) -> Any:
    """``true_fn()`` or ``false_fn()`` chosen now when ``pred`` is a Python bool or a
    constant, else a ``tf.cond`` on the boolean tensor."""
    from flowmesh.core.graph import Tensor
    from flowmesh.ops._builders import constant_value
    from flowmesh.ops.cond import cond

    if isinstance(pred, (bool, int, np.bool_)):
        return true_fn() if pred else false_fn()
    if isinstance(pred, Tensor):
        value = constant_value(pred) if pred.op.type == "Const" else None
        if value is not None:
            return true_fn() if bool(value) else false_fn()
        return cond(pred, true_fn, false_fn, name=name)
    return true_fn() if pred else false_fn()


def training_value(training: Any) -> Any:
    """``training`` if given, else the learning-phase placeholder."""
    return learning_phase() if training is None else training


def set_learning_phase(value: int | bool) -> None:
    """Fixes the learning phase of the default graph (1/True: training) for layers called
    afterwards with ``training=None``."""
    graph = get_default_graph()
    with graph.name_scope(None):
        _LEARNING_PHASES[graph] = constant_op.constant(bool(value), name="keras_learning_phase_fixed")


def variable(value: Any, dtype: Any = None, name: str | None = None, constraint: Any = None) -> Any:
    """A variable initialized to ``value`` (initialized by :func:`get_session`)."""
    from flowmesh.ops.variables import Variable

    value = np.asarray(value, dtype=dtypes.as_dtype(dtype or _FLOATX).as_numpy_dtype)
    return Variable(value, name=name, constraint=constraint)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Any:
    return constant_op.constant(value, dtype=dtypes.as_dtype(dtype or _FLOATX), shape=shape, name=name)


def placeholder(shape: Any = None, ndim: int | None = None, dtype: Any = None, name: str | None = None) -> Any:
    """A placeholder of ``shape`` (or ``ndim`` unknown dimensions)."""
    if shape is None and ndim is not None:
        shape = [None] * ndim
    return constant_op.placeholder(dtypes.as_dtype(dtype or _FLOATX), shape, name=name)


def eval(x: Any) -> np.ndarray:  # noqa: A001 - Keras's name
    return get_value(x)


def function(inputs: list[Any], outputs: Any, updates: Any = None, name: str | None = None, **kwargs: Any) -> Any:
    """A callable ``f(list_of_arrays) -> outputs`` that runs ``outputs`` (and ``updates``)
    in the Keras session, feeding ``inputs`` in order."""
    from flowmesh.ops.control_flow_ops import group

    inputs = list(inputs)
    single = not isinstance(outputs, (list, tuple))
    fetches = [outputs] if single else list(outputs)
    update_op = group(*updates) if updates else None

    def run(values: list[Any]) -> Any:
        if len(values) != len(inputs):
            raise ValueError(f"This function takes {len(inputs)} inputs, got {len(values)}")
        feed = dict(zip(inputs, values))
        results = get_session().run(fetches + ([update_op] if update_op is not None else []), feed)
        results = results[:len(fetches)]
        return results[0] if single else results

    return run




def backend() -> str:
    """The backend's name: ``"tensorflow"`` (flowmesh speaks TensorFlow's API)."""
    return "tensorflow"
