"""The ``RNNCell`` base class (``tf.nn.rnn_cell.RNNCell``) and ``LSTMStateTuple``.

A cell maps ``(inputs [batch, depth], state) -> (output, new_state)``. As in TensorFlow
1.x, a cell keeps the variable scope of its first call (``<outer scope>/<cell name>``, made
unique per graph) and reuses it on every later call, so ``static_rnn``'s repeated calls
and ``dynamic_rnn``'s loop body share one set of variables named as TensorFlow names them
(``rnn/basic_lstm_cell/kernel``), and TensorFlow checkpoints load.

Cells create their variables in ``build(input_shape)`` (:class:`LayerRNNCell`). Variables
cannot be created inside a ``tf.while_loop`` body, so ``dynamic_rnn`` first calls
:meth:`RNNCell.prebuild` outside the loop: it enters the scopes a call would enter and
builds, without computing anything. A user cell that creates variables in ``call`` (with
``tf.get_variable``) is prebuilt by one call on zeros whose results are never run.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.shapes import TensorShape, as_shape
from flowmesh.ops import _structure as nest
from flowmesh.ops import variable_scope as vs

_LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTuple):
    """``(c, h)``: the memory and the output state of an LSTM cell."""

    __slots__ = ()

    @property
    def dtype(self) -> dtypes.DType:
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent dtypes for internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _zeros(size: Any, batch_size: Any, dtype: dtypes.DType) -> Tensor:
    from flowmesh.ops import array_ops

    dims = as_shape(size).as_list() if not isinstance(size, int) else [size]
    static = batch_size if isinstance(batch_size, int) else None
    if static is not None:
        out = array_ops.zeros([static] + dims, dtype=dtype)
    else:
        batch = convert_to_tensor(batch_size, dtype=dtypes.int32)
        shape = array_ops.concat([array_ops.reshape(batch, [1]), dims], 0) if dims else \
            array_ops.reshape(batch, [1])
        out = array_ops.fill(shape, convert_to_tensor(0, dtype=dtype))
        out.set_shape(TensorShape([None] + dims))
    return out


def zero_state_tensors(state_size: Any, batch_size: Any, dtype: Any) -> Any:
    """Zeros in the structure of ``state_size`` (each ``[batch_size, size]``)."""
    dtype = dtypes.as_dtype(dtype)
    return nest.map_structure(lambda s: _zeros(s, batch_size, dtype), state_size)


def check_float(values: Any, who: str) -> None:
    """RNN cells compute sigmoid/tanh: their inputs and states must be floating point."""
    for t in nest.flatten(values):
        if isinstance(t, Tensor) and not t.dtype.is_floating:
            raise ValueError(
                f"{who}: RNN cells only support floating point inputs, but {t.name} has "
                f"dtype {t.dtype.name}; cast it with tf.cast(x, tf.float32)."
            )


class RNNCell:
    """Abstract RNN cell: subclasses define ``state_size``, ``output_size`` and
    ``call(inputs, state) -> (output, new_state)``.

    A subclass may create variables with ``tf.get_variable`` in ``call``; they live in the
    scope of the cell's first call, reused afterwards.
    """

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 _reuse: Any = None, **kwargs: Any):
        self.trainable = trainable
        self._base_name = name or _snake(type(self).__name__)
        self.name = self._base_name
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._reuse = _reuse
        self._scope: vs.VariableScope | None = None
        self.built = False
        self._trainable_weights: list[Any] = []
        self._non_trainable_weights: list[Any] = []

    # --- interface ------------------------------------------------------------------------
    @property
    def state_size(self) -> Any:
        """Size(s) of the state: an int, a TensorShape or a nested tuple of them."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self) -> Any:
        """Size of the output: an int or a TensorShape."""
        raise NotImplementedError("Abstract method")

    @property
    def dtype(self) -> dtypes.DType | None:
        return self._dtype

    def call(self, inputs: Tensor, state: Any) -> tuple[Any, Any]:
        raise NotImplementedError("Abstract method")

    def build(self, input_shape: TensorShape) -> None:
        """Creates the cell's variables (in the cell's variable scope)."""
        self.built = True

    # --- calling --------------------------------------------------------------------------
    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        """Runs the cell on ``inputs [batch, depth]`` from ``state``.

        Returns:
            ``(output, new_state)``.
        """
        inputs = nest.map_structure(convert_to_tensor, inputs)
        with self._enter(scope):
            if not self.built:
                self._build_checked(inputs, state)
            return self.call(inputs, state)

    def _enter(self, scope: Any) -> Any:
        """The variable scope of this cell (captured at the first call), as a context."""
        if self._scope is None:
            if self._reuse:
                with vs.variable_scope(scope if scope is not None else self._base_name) as captured:
                    self._scope = captured
            else:
                with vs.variable_scope(scope, default_name=self._base_name) as captured:
                    self._scope = captured
        reuse = True if self.built else self._reuse
        return _ScopeAndNames(self._scope, reuse, self._base_name)

    def _build_checked(self, inputs: Any, state: Any) -> None:
        check_float([inputs, state], f"{type(self).__name__} '{self.name}'")
        first = nest.flatten(inputs)[0]
        if self._dtype is None:
            self._dtype = first.dtype
        self._track_new_variables(lambda: self.build(first.shape))
        self.built = True

    def _track_new_variables(self, fn: Any) -> None:
        from flowmesh.core.graph import get_default_graph
        from flowmesh.core.graph_keys import GraphKeys

        graph = get_default_graph()
        while getattr(graph, "outer_graph", None) is not None:
            graph = graph.outer_graph
        before = set(id(v) for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
        fn()
        trainable = set(id(v) for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if id(v) not in before:
                (self._trainable_weights if id(v) in trainable else
                 self._non_trainable_weights).append(v)

    def prebuild(self, input_shape: TensorShape, dtype: dtypes.DType, batch_size: Any) -> None:
        """Creates the variables a call on ``[batch, *input_shape[1:]]`` inputs would create,
        computing nothing (``dynamic_rnn`` calls it before its loop)."""
        if self.built:
            return
        if type(self).build is RNNCell.build:
            # A cell that creates its variables in call(): trace one call whose ops never run.
            from flowmesh.ops import array_ops

            with name_scope("prebuild"):
                dummy = array_ops.zeros([1] + input_shape.as_list()[1:], dtype=dtype)
                self(dummy, self.zero_state(1, dtype))
            return
        with self._enter(None):
            self._dtype = self._dtype or dtype
            self._track_new_variables(lambda: self.build(input_shape))
            self.built = True

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zero-filled state(s) for a batch: ``[batch_size, s]`` for each size ``s`` of
        ``state_size``."""
        with name_scope(f"{type(self).__name__}ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtype)

    def get_initial_state(self, inputs: Any = None, batch_size: Any = None,
                          dtype: Any = None) -> Any:
        """``zero_state`` for the batch size and dtype of ``inputs`` (or the given ones)."""
        if inputs is not None:
            inputs = convert_to_tensor(inputs)
            static = inputs.shape.as_list()[0] if inputs.shape.rank else None
            batch_size = static if static is not None else _dynamic_dim(inputs, 0)
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError(
                f"batch_size and dtype cannot be None while constructing initial state: "
                f"batch_size={batch_size}, dtype={dtype}"
            )
        return self.zero_state(batch_size, dtype)

    # --- variables ------------------------------------------------------------------------
    def add_variable(self, name: str, shape: Any, initializer: Any = None, dtype: Any = None,
                     trainable: bool = True) -> Any:
        """``tf.get_variable(name, ...)`` in the cell's scope (call from ``build``)."""
        return vs.get_variable(name, shape=shape, dtype=dtype or self._dtype or dtypes.float32,
                               initializer=initializer, trainable=trainable and self.trainable)

    add_weight = add_variable

    @property
    def trainable_weights(self) -> list[Any]:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[Any]:
        extra = [] if self.trainable else list(self._trainable_weights)
        return extra + list(self._non_trainable_weights)

    @property
    def weights(self) -> list[Any]:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights
    trainable_variables = trainable_weights


class LayerRNNCell(RNNCell):
    """An :class:`RNNCell` whose variables are created by ``build`` (TensorFlow's
    ``LayerRNNCell``)."""


class _ScopeAndNames:
    """Enters a cell's variable scope (no extra name scope) and a name scope for its ops."""

    def __init__(self, scope: vs.VariableScope, reuse: Any, base_name: str):
        self._scope, self._reuse, self._base = scope, reuse, base_name
        self._stack: list[Any] = []

    def __enter__(self) -> vs.VariableScope:
        var_cm = vs.variable_scope(self._scope, reuse=self._reuse, auxiliary_name_scope=False)
        names_cm = name_scope(self._scope.name.rsplit("/", 1)[-1])
        self._stack = [var_cm, names_cm]
        entered = var_cm.__enter__()
        names_cm.__enter__()
        return entered

    def __exit__(self, *exc: Any) -> None:
        for cm in reversed(self._stack):
            cm.__exit__(*exc)


def _dynamic_dim(tensor: Tensor, axis: int) -> Tensor:
    from flowmesh.ops import array_ops

    return array_ops.shape(tensor, out_type=dtypes.int32)[axis]


def _snake(name: str) -> str:
    """TensorFlow's layer naming (``BasicLSTMCell`` -> ``basic_lstm_cell``)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def assert_like_rnncell(cell_name: str, cell: Any) -> None:
    """Raises TypeError unless ``cell`` has ``output_size``, ``state_size``, ``zero_state``
    and is callable."""
    missing = [attr for attr in ("output_size", "state_size", "zero_state")
               if not hasattr(cell, attr)]
    if not callable(cell):
        missing.append("__call__")
    if missing:
        raise TypeError(
            f"The argument {cell_name!r} ({cell}) is not an RNNCell: it lacks "
            f"{', '.join(missing)}. Pass a tf.nn.rnn_cell cell (e.g. BasicLSTMCell(128))."
        )
