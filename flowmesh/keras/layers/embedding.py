"""``tf.keras.layers.Embedding``: rows of an ``embeddings`` matrix looked up by integer ids."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.keras import initializers, regularizers
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import cast_ops, embedding_ops, math_ops


class Embedding(Layer):
    """``embeddings[ids]``: [batch, ...] ids -> [batch, ..., output_dim] (sparse gradients)."""

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = "uniform",
                 embeddings_regularizer: Any = None, activity_regularizer: Any = None,
                 embeddings_constraint: Any = None, mask_zero: bool = False, input_length: int | None = None,
                 **kwargs: Any):
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,) if isinstance(input_length, int) else tuple(input_length)
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "float32"
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise ValueError(f"Both `input_dim` and `output_dim` should be positive, found input_dim {input_dim} "
                             f"and output_dim {output_dim} (layer {self.name})")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if embeddings_initializer == "uniform":
            embeddings_initializer = initializers.RandomUniform(-0.05, 0.05)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero, self.input_length = mask_zero, input_length

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def call(self, inputs: Any) -> Any:
        if inputs.dtype not in (dtypes.int32, dtypes.int64):
            inputs = cast_ops.cast(inputs, dtypes.int32)
        return embedding_ops.embedding_lookup(self.embeddings, inputs)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """With ``mask_zero``: ``ids != 0`` (id 0 is padding), else None."""
        if not self.mask_zero:
            return None
        return math_ops.not_equal(inputs, 0)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": initializers.serialize(self.embeddings_initializer),
                "mask_zero": self.mask_zero, "input_length": self.input_length}
