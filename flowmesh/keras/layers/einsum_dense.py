"""``EinsumDense``: a dense layer of any rank, ``einsum(equation, inputs, kernel) + bias``
(tf-keras's layer and shape analysis: the kernel's and bias's shapes follow from the
equation, the input shape and ``output_shape``)."""

from __future__ import annotations

import re
from typing import Any

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations, constraints, initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.layers.kernel_bias_options import set_kernel_bias_options
from flowmesh.ops.einsum_ops import einsum


class EinsumDense(Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``.

    Args:
        equation: ``"ab,bc->ac"``-style, with ``...`` for elided leading or trailing axes.
        output_shape: the output's shape without the batch axis (None for unknown).
        bias_axes: the output axes (letters) the bias varies along, or None for no bias.
    """

    def __init__(self, equation: str, output_shape: Any, activation: Any = None, bias_axes: str | None = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.equation = equation
        self.partial_output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
        self.bias_axes = bias_axes
        set_kernel_bias_options(self, activation, kernel_initializer, bias_initializer, kernel_regularizer,
                                bias_regularizer, kernel_constraint, bias_constraint)

    def build(self, input_shape: Any) -> None:
        kernel_shape, bias_shape, self.full_output_shape = analyze_einsum_string(
            self.equation, self.bias_axes, TensorShape(input_shape).as_list(), self.partial_output_shape)
        self.kernel = self.add_weight("kernel", kernel_shape, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = None
        if bias_shape is not None:
            self.bias = self.add_weight("bias", bias_shape, initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs: Any) -> Any:
        out = einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            out = out + self.bias
        return self.activation(out) if self.activation is not None else out

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "output_shape": self.partial_output_shape, "equation": self.equation,
                "activation": activations.serialize(self.activation), "bias_axes": self.bias_axes,
                "kernel_initializer": initializers.serialize(self.kernel_initializer),
                "bias_initializer": initializers.serialize(self.bias_initializer),
                "kernel_regularizer": regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self.bias_regularizer),
                "activity_regularizer": regularizers.serialize(self._activity_regularizer),
                "kernel_constraint": constraints.serialize(self.kernel_constraint),
                "bias_constraint": constraints.serialize(self.bias_constraint)}


def analyze_einsum_string(equation: str, bias_axes: str | None, input_shape: list[Any],
                          output_shape: list[Any]) -> tuple[list[Any], list[Any] | None, list[Any]]:
    """``(kernel shape, bias shape or None, full output shape)`` for an ``EinsumDense``.

    Raises:
        ValueError: an equation of another form, or shapes/axes that do not match.
    """
    replaced = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False)):
        match = re.match(pattern, replaced)
        if match:
            return _analyze_split(match.group(1), match.group(2), match.group(3), bias_axes, input_shape,
                                  output_shape, left)
    raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                     "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")


def _analyze_split(input_spec: str, weight_spec: str, output_spec: str, bias_axes: str | None,
                   input_shape: list[Any], output_shape: list[Any], left_elided: bool
                   ) -> tuple[list[Any], list[Any] | None, list[Any]]:
    elided = len(input_shape) - len(input_spec)
    output_shape = [input_shape[0]] + list(output_shape)
    if elided > 0 and left_elided:
        for i in range(1, elided):
            output_shape.insert(1, input_shape[i])
    elif elided > 0:
        output_shape += input_shape[len(input_shape) - elided:]
    if left_elided:
        input_map = {dim: i + elided - len(input_shape) for i, dim in enumerate(input_spec)}
        output_map = {dim: i + elided for i, dim in enumerate(output_spec)}
    else:
        input_map = {dim: i for i, dim in enumerate(input_spec)}
        output_map = {dim: i for i, dim in enumerate(output_spec)}
    for dim in input_spec:
        if dim in output_map and output_shape[output_map[dim]] is not None and \
                output_shape[output_map[dim]] != input_shape[input_map[dim]]:
            raise ValueError(f"Input shape and output shape do not match at shared dimension '{dim}'. Input shape "
                             f"is {input_shape[input_map[dim]]}, and output shape is {output_shape[output_map[dim]]}.")
    for dim in output_spec:
        if dim not in input_spec and dim not in weight_spec:
            raise ValueError(f"Dimension '{dim}' was specified in the output '{output_spec}' but has no "
                             f"corresponding dim in the input spec '{input_spec}' or weight spec '{output_spec}'")
    weight_shape = []
    for dim in weight_spec:
        if dim in input_map:
            weight_shape.append(input_shape[input_map[dim]])
        elif dim in output_map:
            weight_shape.append(output_shape[output_map[dim]])
        else:
            raise ValueError(f"Weight dimension '{dim}' did not have a match in either the input spec "
                             f"'{input_spec}' or the output spec '{output_spec}'. For this layer, the weight must "
                             "be fully specified.")
    if bias_axes is None:
        return weight_shape, None, output_shape
    offset = elided if left_elided else 0
    sizes = {char: output_shape[i + offset] for i, char in enumerate(output_spec)}
    for char in bias_axes:
        if char not in output_spec:
            raise ValueError(f"Bias dimension '{char}' was requested, but is not part of the output spec "
                             f"'{output_spec}'")
    first = min(output_spec.find(char) for char in bias_axes)
    bias_shape = [sizes[char] if char in bias_axes else 1 for char in output_spec[first:]]
    if not left_elided:
        bias_shape += [1] * elided
    return weight_shape, bias_shape, output_shape
