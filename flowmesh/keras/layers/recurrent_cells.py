"""Keras recurrent cells (``tf.keras.layers.SimpleRNNCell LSTMCell GRUCell``) with
``tf.compat.v1.keras``'s math and defaults.

================  ===========================================  ===============================
cell              weights                                       notes
================  ===========================================  ===============================
SimpleRNNCell     kernel [d, n], recurrent_kernel [n, n],       ``act(x K + h R + b)``
                  bias [n]
LSTMCell          kernel [d, 4n], recurrent_kernel [n, 4n],     gates ``i, f, c, o``;
                  bias [4n]                                     ``unit_forget_bias``
GRUCell           kernel [d, 3n], recurrent_kernel [n, 3n],     gates ``z, r, h``; reset gate
                  bias [3n] ([2, 3n] with ``reset_after``)      before (default) or after the
                                                                recurrent matmul
================  ===========================================  ===============================

The recurrent activation defaults to ``hard_sigmoid`` (TF 1.x Keras). ``dropout`` and
``recurrent_dropout`` multiply the step's inputs and previous output by masks that the
recurrent layer draws once per call (:meth:`_KerasCell.prepare_dropout`) and uses at
every time step; ``implementation=1`` (the default) draws one mask per gate, as Keras does,
``implementation=2`` one for all gates. Outside training the masks are ones.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations, initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import array_ops, linalg_ops, math_ops, nn_ops


def _depth(layer: Layer, input_shape: Any) -> int:
    dims = TensorShape(input_shape).as_list()
    if not dims or dims[-1] is None:
        raise ValueError(f"The last dimension of the inputs to {type(layer).__name__} "
                         f"'{layer.name}' should be defined. Found {input_shape}.")
    return int(dims[-1])


class _KerasCell(Layer):
    """Shared constructor arguments of the Keras cells."""

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, **kwargs: Any):
        self.implementation = int(kwargs.pop("implementation", 1))
        super().__init__(**kwargs)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self._dropout_masks: tuple[list[Any] | None, list[Any] | None] = (None, None)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer, got {units} (layer {self.name}).")
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.constraints = (kernel_constraint, recurrent_constraint, bias_constraint)

    def _weights(self, depth: int, gates: int, bias_shape: list[int] | None = None,
                 bias_initializer: Any = None) -> None:
        n = self.units
        self.kernel = self.add_weight("kernel", [depth, gates * n],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.constraints[0])
        self.recurrent_kernel = self.add_weight("recurrent_kernel", [n, gates * n],
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.constraints[1])
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", bias_shape or [gates * n],
                                        initializer=bias_initializer or self.bias_initializer,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.constraints[2])

    gates = 1

    def prepare_dropout(self, inputs: Any, training: Any) -> None:
        """Draws this call's dropout masks (``inputs``: one step, ``[batch, depth]``): ones
        outside training, the same masks at every time step."""
        from flowmesh.keras import backend

        count = self.gates if self.implementation == 1 else 1
        batch = array_ops.shape(inputs)[0]
        depth = inputs.shape.as_list()[-1]
        self._dropout_masks = (_masks(self.dropout, batch, depth, count, inputs.dtype, training, backend),
                               _masks(self.recurrent_dropout, batch, self.units, count, inputs.dtype,
                                      training, backend))

    def clear_dropout(self) -> None:
        self._dropout_masks = (None, None)

    def _project(self, x: Any, w: Any, which: int, first: int = 0, parts: int | None = None) -> Any:
        """``x @ w`` for gates ``first..first+parts`` of ``w`` with the input (``which=0``)
        or recurrent (``which=1``) dropout masks applied per gate."""
        masks = self._dropout_masks[which]
        if masks is None:
            return _dot(x, w)
        parts = parts or self.gates
        if len(masks) == 1:
            return _dot(x * masks[0], w)
        n = self.units
        return array_ops.concat([_dot(x * masks[first + k], w[:, k * n:(k + 1) * n])
                                 for k in range(parts)], 1)

    def get_initial_state(self, batch_size: Any, dtype: Any) -> list[Any]:
        return [array_ops.zeros(array_ops.stack([batch_size, s]) if not isinstance(batch_size, int)
                                else [batch_size, s], dtype=dtype)
                for s in self._state_sizes()]

    def _state_sizes(self) -> list[int]:
        return [self.units]

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(units=self.units, activation=activations.serialize(self.activation),
                      use_bias=self.use_bias,
                      kernel_initializer=initializers.serialize(self.kernel_initializer),
                      recurrent_initializer=initializers.serialize(self.recurrent_initializer),
                      bias_initializer=initializers.serialize(self.bias_initializer),
                      dropout=self.dropout, recurrent_dropout=self.recurrent_dropout,
                      implementation=self.implementation)
        return config


def _dot(x: Any, w: Any) -> Any:
    return linalg_ops.matmul(x, w)


def _masks(rate: float, batch: Any, depth: int, count: int, dtype: Any, training: Any,
           backend: Any) -> list[Any] | None:
    """``count`` dropout masks ``[batch, depth]`` (values 0 or ``1/(1-rate)``) while
    training, ones otherwise; None when ``rate`` is 0."""
    if not 0 < rate < 1:
        return None
    from flowmesh.ops import nn_impl

    ones = array_ops.ones(array_ops.stack([batch, depth]), dtype=dtype)
    ones.set_shape([None, depth])
    return [backend.smart_cond(backend.training_value(training),
                               lambda: nn_impl.dropout(ones, rate=rate), lambda: ones)
            for _ in range(count)]


class SimpleRNNCell(_KerasCell):
    """``h' = activation(x @ kernel + h @ recurrent_kernel + bias)``."""

    @property
    def state_size(self) -> int:
        return self.units

    @property
    def output_size(self) -> int:
        return self.units

    def build(self, input_shape: Any) -> None:
        self._weights(_depth(self, input_shape), 1)
        self.built = True

    def call(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        h = self._project(inputs, self.kernel, 0)
        if self.bias is not None:
            h = nn_ops.bias_add(h, self.bias)
        output = math_ops.add(h, self._project(states[0], self.recurrent_kernel, 1))
        if self.activation is not None:
            output = self.activation(output)
        return output, [output]


class LSTMCell(_KerasCell):
    """Keras's LSTM cell: gates ``i, f, c, o``; ``c' = f*c + i*act(z_c)``,
    ``h' = o*act(c')``; ``unit_forget_bias`` initializes the ``f`` bias to ones."""

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "hard_sigmoid", unit_forget_bias: bool = True,
                 **kwargs: Any):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    gates = 4

    @property
    def state_size(self) -> list[int]:
        return [self.units, self.units]

    @property
    def output_size(self) -> int:
        return self.units

    def _state_sizes(self) -> list[int]:
        return [self.units, self.units]

    def build(self, input_shape: Any) -> None:
        init = None
        if self.use_bias and self.unit_forget_bias:
            base, n = self.bias_initializer, self.units

            def init(shape: Any, dtype: Any = None, **_: Any) -> Any:
                return array_ops.concat([base([n], dtype=dtype), array_ops.ones([n], dtype=dtype),
                                         base([2 * n], dtype=dtype)], 0)
        self._weights(_depth(self, input_shape), 4, bias_initializer=init)
        self.built = True

    def call(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        h_prev, c_prev = states
        z = math_ops.add(self._project(inputs, self.kernel, 0),
                         self._project(h_prev, self.recurrent_kernel, 1))
        if self.bias is not None:
            z = nn_ops.bias_add(z, self.bias)
        zi, zf, zc, zo = array_ops.split(z, 4, axis=1)
        rec = self.recurrent_activation
        c = math_ops.add(math_ops.multiply(rec(zf), c_prev),
                         math_ops.multiply(rec(zi), self.activation(zc)))
        h = math_ops.multiply(rec(zo), self.activation(c))
        return h, [h, c]

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "unit_forget_bias": self.unit_forget_bias}


class GRUCell(_KerasCell):
    """Keras's GRU cell (gates ``z, r, h``): ``h' = z*h + (1-z)*hh``; with ``reset_after``
    the reset gate multiplies ``h @ R_h + b_rh`` (cuDNN/torch style), else ``h`` before
    its matmul (TF 1.x default)."""

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "hard_sigmoid", reset_after: bool = False,
                 **kwargs: Any):
        super().__init__(units, activation=activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    gates = 3

    @property
    def state_size(self) -> int:
        return self.units

    @property
    def output_size(self) -> int:
        return self.units

    def build(self, input_shape: Any) -> None:
        bias_shape = [2, 3 * self.units] if self.reset_after else None
        self._weights(_depth(self, input_shape), 3, bias_shape=bias_shape)
        self.built = True

    def call(self, inputs: Any, states: Any) -> tuple[Any, list[Any]]:
        h_prev = states[0]
        n = self.units
        input_bias, recurrent_bias = None, None
        if self.bias is not None:
            if self.reset_after:
                input_bias, recurrent_bias = array_ops.unstack(self.bias, num=2)
            else:
                input_bias = self.bias
        x = self._project(inputs, self.kernel, 0)
        if input_bias is not None:
            x = nn_ops.bias_add(x, input_bias)
        x_z, x_r, x_h = array_ops.split(x, 3, axis=1)
        rec = self.recurrent_activation
        if self.reset_after:
            inner = self._project(h_prev, self.recurrent_kernel, 1)
            if recurrent_bias is not None:
                inner = nn_ops.bias_add(inner, recurrent_bias)
            r_z, r_r, r_h = array_ops.split(inner, 3, axis=1)
            z, r = rec(x_z + r_z), rec(x_r + r_r)
            hh = self.activation(x_h + r * r_h)
        else:
            zr = self._project(h_prev, self.recurrent_kernel[:, :2 * n], 1, 0, 2)
            r_z, r_r = array_ops.split(zr, 2, axis=1)
            z, r = rec(x_z + r_z), rec(x_r + r_r)
            h_h = h_prev
            masks = self._dropout_masks[1]
            if masks is not None:
                h_h = h_prev * masks[-1]
            hh = self.activation(x_h + _dot(r * h_h, self.recurrent_kernel[:, 2 * n:]))
        h = z * h_prev + (1 - z) * hh
        return h, [h]

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "reset_after": self.reset_after}
