"""``MultiHeadAttention`` (Vaswani et al.), tf-keras's layer: ``EinsumDense`` projections
named ``query``, ``key``, ``value`` and ``attention_output`` (weights
``multi_head_attention/query/kernel [dim, heads, key_dim]``...), scaled dot products over
``attention_axes``, softmax with masks (``attention_mask``, the inputs' Keras masks,
``use_causal_mask``), dropout on the scores."""

from __future__ import annotations

import math
import string
from typing import Any

import numpy as np

from flowmesh.core.shapes import TensorShape
from flowmesh.keras import constraints, initializers, regularizers
from flowmesh.keras.engine import keras_mask
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.layers.activation import Softmax
from flowmesh.keras.layers.core import Dropout
from flowmesh.keras.layers.einsum_dense import EinsumDense
from flowmesh.ops import array_ops, cast_ops, linalg_ops, math_ops
from flowmesh.ops.einsum_ops import einsum

_CHARS = string.ascii_lowercase


def _attention_equations(rank: int, attn_axes: tuple[int, ...]) -> tuple[str, str, int]:
    """The dot-product and combine einsum equations and the scores' rank (tf-keras's)."""
    target = _CHARS[:rank]
    batch_dims = tuple(np.delete(range(rank), attn_axes + (rank - 1,)))
    offset, source = rank, ""
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += _CHARS[offset]
            offset += 1
    product = "".join([target[i] for i in batch_dims] + [target[i] for i in attn_axes]
                      + [source[i] for i in attn_axes])
    return f"{source},{target}->{product}", f"{product},{source}->{target}", len(product)


def _projection_equation(free_dims: int, bound_dims: int, output_dims: int) -> tuple[str, str, int]:
    """``(equation, bias axes, output rank)`` of a projection ``EinsumDense``."""
    inputs = kernel = output = bias = ""
    for i in range(free_dims):
        inputs += _CHARS[i]
        output += _CHARS[i]
    for i in range(bound_dims):
        inputs += _CHARS[free_dims + i]
        kernel += _CHARS[free_dims + i]
    for i in range(output_dims):
        char = _CHARS[free_dims + bound_dims + i]
        kernel += char
        output += char
        bias += char
    return f"{inputs},{kernel}->{output}", bias, len(output)


def _partial_shape(output_rank: int, known_last: list[Any]) -> list[Any]:
    return [None] * (output_rank - len(known_last)) + list(known_last)


class MultiHeadAttention(Layer):
    """Multi-head attention of ``query`` ``[B, T, dim]`` over ``value`` (and ``key``, default
    ``value``) ``[B, S, dim]``.

    Args:
        num_heads, key_dim: heads and the size of each head for query and key.
        value_dim: the size of each head for value (default ``key_dim``).
        output_shape: the last axes of the output (default the query's last axis).
        attention_axes: the axes attended over (default all but batch, heads, features).
    """

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None, dropout: float = 0.0,
                 use_bias: bool = True, output_shape: Any = None, attention_axes: Any = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, softmax_robust_masking: bool = False,
                 **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.supports_masking = True
        self._num_heads, self._key_dim = num_heads, key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout, self._use_bias, self._output_shape = dropout, use_bias, output_shape
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        self._softmax_robust_masking = softmax_robust_masking
        if attention_axes is not None and not isinstance(attention_axes, (list, tuple)):
            attention_axes = (attention_axes,)
        self._attention_axes = attention_axes
        self._built_from_signature = False
        self._query_shape = self._key_shape = self._value_shape = None

    def build(self, input_shape: Any) -> None:
        self.built = True  # the projections are made on the first call, from query/value/key

    def _sublayer_kwargs(self) -> dict[str, Any]:
        return dict(kernel_regularizer=self._kernel_regularizer, bias_regularizer=self._bias_regularizer,
                    activity_regularizer=self._activity_regularizer, kernel_constraint=self._kernel_constraint,
                    bias_constraint=self._bias_constraint,
                    kernel_initializer=initializers.get(initializers.serialize(self._kernel_initializer)),
                    bias_initializer=initializers.get(initializers.serialize(self._bias_initializer)))

    def _projection(self, rank: int, bound: int, last: list[Any], name: str) -> EinsumDense:
        equation, bias_axes, output_rank = _projection_equation(rank - 1, bound, len(last))
        return EinsumDense(equation, output_shape=_partial_shape(output_rank - 1, last),
                           bias_axes=bias_axes if self._use_bias else None, name=name, **self._sublayer_kwargs())

    def _build_from_signature(self, query: Any, value: Any, key: Any = None) -> None:
        """Makes the projections (unbuilt) for inputs of these shapes."""
        self._built_from_signature = True
        self._query_shape = TensorShape(getattr(query, "shape", query))
        self._value_shape = TensorShape(getattr(value, "shape", value))
        self._key_shape = self._value_shape if key is None else TensorShape(getattr(key, "shape", key))
        heads = self._num_heads
        self._query_dense = self._projection(self._query_shape.rank, 1, [heads, self._key_dim], "query")
        self._key_dense = self._projection(self._key_shape.rank, 1, [heads, self._key_dim], "key")
        self._value_dense = self._projection(self._value_shape.rank, 1, [heads, self._value_dim], "value")
        rank = self._value_shape.rank + 1
        axes = tuple(range(1, rank - 2)) if self._attention_axes is None else tuple(self._attention_axes)
        self._attention_axes = axes
        self._dot_product_equation, self._combine_equation, scores_rank = _attention_equations(rank, axes)
        self._softmax = Softmax(axis=tuple(range(scores_rank - len(axes), scores_rank)),
                                robust_masking=self._softmax_robust_masking)
        self._dropout_layer = Dropout(rate=self._dropout)
        out = self._output_shape
        last = [self._query_shape[-1]] if not out else (list(out) if isinstance(out, (list, tuple)) else [out])
        self._output_dense = self._projection(self._query_shape.rank, 2, last, "attention_output")

    def call(self, query: Any, value: Any, key: Any = None, attention_mask: Any = None,
             return_attention_scores: bool = False, training: Any = None, use_causal_mask: bool = False) -> Any:
        if not self._built_from_signature:
            self._build_from_signature(query, value, key)
        key = value if key is None else key
        attention_mask = self._attention_mask(query, value, key, attention_mask, use_causal_mask)
        q = self._query_dense(query)
        k = self._key_dense(key)
        v = self._value_dense(value)
        q = math_ops.multiply(q, 1.0 / math.sqrt(float(self._key_dim)))
        scores = einsum(self._dot_product_equation, k, q)
        if attention_mask is not None:
            for _ in range(scores.shape.rank - attention_mask.shape.rank):
                attention_mask = array_ops.expand_dims(attention_mask, -len(self._attention_axes) * 2 - 1)
        scores = self._softmax(scores, attention_mask)
        dropped = self._dropout_layer(scores, training=training)
        output = self._output_dense(einsum(self._combine_equation, dropped, v))
        return (output, scores) if return_attention_scores else output

    def _attention_mask(self, query: Any, value: Any, key: Any, attention_mask: Any, causal: bool) -> Any:
        """The explicit mask combined with the inputs' Keras masks and the causal mask."""
        auto = None
        for tensor, axis in ((query, 2), (value, 1), (key, 1)):
            mask = keras_mask.get_mask(tensor)
            if mask is None:
                continue
            mask = array_ops.expand_dims(cast_ops.cast(mask, "bool"), axis)
            auto = mask if auto is None else math_ops.logical_and(auto, mask)
        if causal:
            q_len, v_len = array_ops.shape(query)[1], array_ops.shape(value)[1]
            ones = array_ops.ones(array_ops.stack([1, q_len, v_len]), dtype="bool")
            mask = linalg_ops.matrix_band_part(ones, -1, 0)
            auto = mask if auto is None else math_ops.logical_and(auto, mask)
        if auto is None:
            return attention_mask
        return auto if attention_mask is None else math_ops.logical_and(cast_ops.cast(attention_mask, "bool"), auto)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return mask

    def get_config(self) -> dict[str, Any]:
        def shape(value: Any) -> Any:
            return None if value is None else value.as_list()

        return {**super().get_config(), "num_heads": self._num_heads, "key_dim": self._key_dim,
                "value_dim": self._value_dim, "dropout": self._dropout, "use_bias": self._use_bias,
                "output_shape": self._output_shape, "attention_axes": self._attention_axes,
                "kernel_initializer": initializers.serialize(self._kernel_initializer),
                "bias_initializer": initializers.serialize(self._bias_initializer),
                "kernel_regularizer": regularizers.serialize(self._kernel_regularizer),
                "bias_regularizer": regularizers.serialize(self._bias_regularizer),
                "activity_regularizer": regularizers.serialize(self._activity_regularizer),
                "kernel_constraint": constraints.serialize(self._kernel_constraint),
                "bias_constraint": constraints.serialize(self._bias_constraint),
                "query_shape": shape(self._query_shape), "key_shape": shape(self._key_shape),
                "value_shape": shape(self._value_shape), "softmax_robust_masking": self._softmax_robust_masking}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> MultiHeadAttention:
        config = dict(config)
        shapes = [config.pop(k, None) for k in ("query_shape", "key_shape", "value_shape")]
        layer = cls(**config)
        if None not in shapes:
            layer._build_from_signature(shapes[0], shapes[2], shapes[1])
        return layer
