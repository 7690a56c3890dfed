"""The standard cells of ``tf.nn.rnn_cell``: ``BasicRNNCell``, ``BasicLSTMCell``,
``LSTMCell`` and ``GRUCell``, with TensorFlow's math, variable names and initializers.

======================  ====================================  ==============================
cell                    variables (in the cell's scope)       state
======================  ====================================  ==============================
BasicRNNCell            kernel [d+n, n], bias [n]             h
BasicLSTMCell           kernel [d+n, 4n], bias [4n]           LSTMStateTuple(c, h) or [c|h]
LSTMCell                kernel [d+p, 4n], bias [4n],          LSTMStateTuple(c, m) or [c|m]
                        w_{f,i,o}_diag [n] (peepholes),       (p = num_proj or n)
                        projection/kernel [n, p]
GRUCell                 gates/{kernel [d+n, 2n], bias [2n]},  h
                        candidate/{kernel [d+n, n], bias [n]}
======================  ====================================  ==============================

LSTM gates are ordered ``i, j, f, o`` in the kernel's columns (input gate, candidate,
forget gate, output gate); ``forget_bias`` is added to ``f`` before its sigmoid. The GRU
applies its reset gate to the state *before* the candidate's matmul.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, clip_ops, linalg_ops, manip_ops, math_ops, nn_ops
from flowmesh.ops.init_ops import Constant, Zeros
from flowmesh.rnn.cell_base import LayerRNNCell, LSTMStateTuple


def _activation(value: Any) -> Any:
    if value is None:
        return math_ops.tanh
    if isinstance(value, str):
        from flowmesh.ops import nn_impl

        table = {"tanh": math_ops.tanh, "sigmoid": math_ops.sigmoid, "relu": nn_ops.relu,
                 "elu": nn_impl.elu, "softsign": nn_impl.softsign, "linear": lambda x: x}
        if value not in table:
            raise ValueError(f"Unknown activation {value!r}; use one of {sorted(table)} or a callable")
        return table[value]
    if not callable(value):
        raise TypeError(f"activation must be callable or a name, got {value!r}")
    return value


def _input_depth(cell: LayerRNNCell, input_shape: TensorShape) -> int:
    shape = TensorShape(input_shape)
    if shape.rank != 2 or shape.as_list()[-1] is None:
        raise InvalidArgumentError(
            f"{type(cell).__name__} '{cell.name}' expects inputs of shape [batch, depth] with a "
            f"known depth, got {shape}. Give the input a static last dimension (set_shape)."
        )
    return int(shape.as_list()[-1])


def _linear(inputs: Tensor, state: Tensor, kernel: Any, bias: Any) -> Tensor:
    return nn_ops.bias_add(linalg_ops.matmul(array_ops.concat([inputs, state], 1), kernel), bias)


class BasicRNNCell(LayerRNNCell):
    """``output = new_state = activation(W [inputs, state] + b)``."""

    def __init__(self, num_units: int, activation: Any = None, reuse: Any = None,
                 name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_shape: TensorShape) -> None:
        depth = _input_depth(self, input_shape)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units], initializer=Zeros())

    def call(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        output = self._activation(_linear(inputs, state, self._kernel, self._bias))
        return output, output


class BasicLSTMCell(LayerRNNCell):
    """The basic LSTM (no peepholes, no projection, no clipping).

    Args:
        num_units: number of units.
        forget_bias: added to the forget gate's pre-activation (1.0 by default).
        state_is_tuple: state as ``LSTMStateTuple(c, h)`` (default) or one ``[c|h]`` tensor.
        activation: inner activation (``tanh``).
        reuse, name, dtype: as TensorFlow's.
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation: Any = None, reuse: Any = None, name: str | None = None,
                 dtype: Any = None, **kwargs: Any):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = bool(state_is_tuple)
        self._activation = _activation(activation)

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_shape: TensorShape) -> None:
        depth = _input_depth(self, input_shape)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n], initializer=Zeros())

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(state, 2, axis=1)
        gates = _linear(inputs, h, self._kernel, self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        forget_bias = cast_ops.cast(self._forget_bias, f.dtype)
        new_c = math_ops.add(math_ops.multiply(c, math_ops.sigmoid(math_ops.add(f, forget_bias))),
                             math_ops.multiply(math_ops.sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), math_ops.sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else \
            array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """LSTM with optional peepholes, cell clipping and an output projection.

    Args:
        num_units: number of units.
        use_peepholes: diagonal peephole connections (``w_f_diag``, ``w_i_diag``, ``w_o_diag``).
        cell_clip: clip the cell state to ``[-cell_clip, cell_clip]``.
        initializer: initializer of the kernel, peepholes and projection.
        num_proj: project the output to this size (``projection/kernel``).
        proj_clip: clip the projected output to ``[-proj_clip, proj_clip]``.
        num_unit_shards, num_proj_shards: deprecated; must be None.
        forget_bias: added to the forget gate's pre-activation.
        state_is_tuple: ``LSTMStateTuple(c, m)`` (default) or one ``[c|m]`` tensor.
        activation, reuse, name, dtype: as TensorFlow's.
    """

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip: float | None = None,
                 initializer: Any = None, num_proj: int | None = None,
                 proj_clip: float | None = None, num_unit_shards: Any = None,
                 num_proj_shards: Any = None, forget_bias: float = 1.0,
                 state_is_tuple: bool = True, activation: Any = None, reuse: Any = None,
                 name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError("num_unit_shards/num_proj_shards are not supported; use a variable "
                             "scope with a partitioner instead")
        self._num_units = int(num_units)
        self._use_peepholes = bool(use_peepholes)
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = int(num_proj) if num_proj else None
        self._proj_clip = proj_clip
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = bool(state_is_tuple)
        self._activation = _activation(activation)
        p = self._num_proj or self._num_units
        self._state_size = LSTMStateTuple(self._num_units, p) if state_is_tuple else \
            self._num_units + p
        self._output_size = p

    @property
    def state_size(self) -> Any:
        return self._state_size

    @property
    def output_size(self) -> int:
        return self._output_size

    def build(self, input_shape: TensorShape) -> None:
        depth = _input_depth(self, input_shape)
        n, p = self._num_units, self._num_proj or self._num_units
        init = self._initializer
        self._kernel = self.add_variable("kernel", [depth + p, 4 * n], initializer=init)
        self._bias = self.add_variable("bias", [4 * n], initializer=Zeros())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=init)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=init)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=init)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel", [n, p], initializer=init)

    def call(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        n, p = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = manip_ops.slice(state, [0, 0], [-1, n])
            m_prev = manip_ops.slice(state, [0, n], [-1, p])
        gates = _linear(inputs, m_prev, self._kernel, self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        sig, act = math_ops.sigmoid, self._activation
        if self._use_peepholes:
            c = sig(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev + \
                sig(i + self._w_i_diag * c_prev) * act(j)
        else:
            c = sig(f + self._forget_bias) * c_prev + sig(i) * act(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sig(o + self._w_o_diag * c) * act(c)
        else:
            m = sig(o) * act(c)
        if self._num_proj is not None:
            m = linalg_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class GRUCell(LayerRNNCell):
    """Gated recurrent unit (Cho et al. 2014), TensorFlow's formulation.

    ``r, u = sigmoid(W_g [x, h] + b_g)``; ``c = act(W_c [x, r * h] + b_c)``;
    ``h' = u * h + (1 - u) * c``. The gate bias starts at 1.0 unless ``bias_initializer``
    is given.
    """

    def __init__(self, num_units: int, activation: Any = None, reuse: Any = None,
                 kernel_initializer: Any = None, bias_initializer: Any = None,
                 name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units

    def build(self, input_shape: TensorShape) -> None:
        depth = _input_depth(self, input_shape)
        n = self._num_units
        kinit, binit = self._kernel_initializer, self._bias_initializer
        self._gate_kernel = self.add_variable("gates/kernel", [depth + n, 2 * n], initializer=kinit)
        self._gate_bias = self.add_variable("gates/bias", [2 * n],
                                            initializer=binit if binit is not None else Constant(1.0))
        self._candidate_kernel = self.add_variable("candidate/kernel", [depth + n, n],
                                                   initializer=kinit)
        self._candidate_bias = self.add_variable("candidate/bias", [n],
                                                 initializer=binit if binit is not None else Zeros())

    def call(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        value = math_ops.sigmoid(_linear(inputs, state, self._gate_kernel, self._gate_bias))
        r, u = array_ops.split(value, 2, axis=1)
        candidate = _linear(inputs, r * state, self._candidate_kernel, self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


def uses_default_math(cell: Any) -> bool:
    """True for an LSTM cell whose math torch's fused LSTM computes exactly (tanh, no
    peepholes, clipping or projection, float32/float64)."""
    if type(cell) not in (BasicLSTMCell, LSTMCell):
        return False
    if cell._activation is not math_ops.tanh:
        return False
    if isinstance(cell, LSTMCell) and (cell._use_peepholes or cell._cell_clip is not None or
                                       cell._num_proj is not None):
        return False
    return cell.dtype in (None, dtypes.float32, dtypes.float64)
