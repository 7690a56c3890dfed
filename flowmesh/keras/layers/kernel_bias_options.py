"""The options every layer with a kernel and a bias takes (``Dense``, ``EinsumDense``, the
convolutions, ``LocallyConnected``): its activation and the kernel's and bias's initializer,
regularizer and constraint, each given as a name, a config or an object."""

from __future__ import annotations

from typing import Any

from flowmesh.keras import activations, constraints, initializers, regularizers


def set_kernel_bias_options(layer: Any, activation: Any, kernel_initializer: Any, bias_initializer: Any,
                            kernel_regularizer: Any, bias_regularizer: Any, kernel_constraint: Any,
                            bias_constraint: Any) -> None:
    """Resolves the options to objects and sets them on ``layer`` under their own names
    (``layer.activation``, ``layer.kernel_initializer``... as tf-keras's layers keep them).

    Raises:
        ValueError: an unknown activation, initializer, regularizer or constraint name.
    """
    layer.activation = activations.get(activation)
    layer.kernel_initializer = initializers.get(kernel_initializer)
    layer.bias_initializer = initializers.get(bias_initializer)
    layer.kernel_regularizer = regularizers.get(kernel_regularizer)
    layer.bias_regularizer = regularizers.get(bias_regularizer)
    layer.kernel_constraint = constraints.get(kernel_constraint)
    layer.bias_constraint = constraints.get(bias_constraint)
