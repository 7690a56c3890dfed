"""Dot-product attention layers: ``Attention`` (Luong) and ``AdditiveAttention``
(Bahdanau), called on ``[query, value]`` or ``[query, value, key]`` (tf-keras's layers:
masks, ``use_causal_mask``, dropout on the attention weights, ``return_attention_scores``)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.keras import backend
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import array_ops, cast_ops, linalg_ops, math_ops, nn_impl, nn_ops, reduction_ops


def lower_triangular_mask(shape: Any) -> Any:
    """A boolean mask, true on and below the diagonal of the last two axes."""
    ones = array_ops.ones(shape, dtype=dtypes.int32)
    rows = reduction_ops.cumsum(ones, axis=-2)
    cols = reduction_ops.cumsum(ones, axis=-1)
    return math_ops.greater_equal(rows, cols)


class BaseDenseAttention(Layer):
    """Scores from ``_calculate_scores(query, key)``, softmax over the value steps (masked
    steps excluded), weighted sum of ``value``; query-masked steps give zeros."""

    def __init__(self, dropout: float = 0.0, **kwargs: Any):
        self.causal = kwargs.pop("causal", False)
        super().__init__(**kwargs)
        self.dropout = dropout
        self.supports_masking = True

    def _calculate_scores(self, query: Any, key: Any) -> Any:
        raise NotImplementedError

    def _apply_scores(self, scores: Any, value: Any, scores_mask: Any = None, training: Any = None) -> tuple[Any, Any]:
        if scores_mask is not None:
            padding = cast_ops.cast(math_ops.logical_not(scores_mask), scores.dtype)
            scores = scores - (65504.0 if scores.dtype == dtypes.float16 else 1.0e9) * padding
        weights = nn_ops.softmax(scores)
        if self.dropout > 0:
            weights = backend.smart_cond(backend.training_value(training),
                                         lambda: nn_impl.dropout(weights, rate=self.dropout),
                                         lambda: array_ops.identity(weights))
        return linalg_ops.matmul(weights, value), weights

    def call(self, inputs: Any, mask: Any = None, training: Any = None, return_attention_scores: bool = False,
             use_causal_mask: bool = False) -> Any:
        self._validate(inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        query_mask = mask[0] if mask else None
        value_mask = mask[1] if mask else None
        scores = self._calculate_scores(query=query, key=key)
        scores_mask = array_ops.expand_dims(value_mask, -2) if value_mask is not None else None
        if self.causal or use_causal_mask:
            dims = array_ops.shape(scores)
            causal = lower_triangular_mask(array_ops.concat([array_ops.ones_like(dims[:-2]), dims[-2:]], 0))
            scores_mask = causal if scores_mask is None else math_ops.logical_and(scores_mask, causal)
        result, attention = self._apply_scores(scores, value, scores_mask, training)
        if query_mask is not None:
            result = result * cast_ops.cast(array_ops.expand_dims(query_mask, -1), result.dtype)
        return (result, attention) if return_attention_scores else result

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        self._validate(inputs, mask)
        return mask[0] if mask else None

    def _validate(self, inputs: Any, mask: Any) -> None:
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely [query, value] or "
                             f"[query, value, key]. Received: {inputs}.")
        if not 2 <= len(inputs) <= 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                             f"[query, value, key]. Received length: {len(inputs)}.")
        if mask and (not isinstance(mask, list) or not 2 <= len(mask) <= len(inputs)):
            raise ValueError(f"{name} layer mask must be a list of length 2, namely [query_mask, value_mask]. "
                             f"Received: {mask}.")

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "dropout": self.dropout}


class Attention(BaseDenseAttention):
    """Dot-product attention: ``scores = query @ key^T`` (times a learned ``scale`` with
    ``use_scale``), or ``score_mode="concat"``: ``sum(tanh(query + key))``."""

    def __init__(self, use_scale: bool = False, score_mode: str = "dot", **kwargs: Any):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f'Received: score_mode={score_mode}. Acceptable values are: ["dot", "concat"]')
        self.use_scale, self.score_mode = use_scale, score_mode

    def build(self, input_shape: Any) -> None:
        self.scale = self.add_weight("scale", [], initializer="ones") if self.use_scale else None
        self.concat_score_weight = (self.add_weight("concat_score_weight", [], initializer="ones")
                                    if self.score_mode == "concat" else None)
        self.built = True

    def _calculate_scores(self, query: Any, key: Any) -> Any:
        if self.score_mode == "dot":
            scores = linalg_ops.matmul(query, key, transpose_b=True)
            return scores * self.scale if self.scale is not None else scores
        summed = array_ops.expand_dims(query, -2) + array_ops.expand_dims(key, -3)
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * reduction_ops.reduce_sum(math_ops.tanh(summed), axis=-1)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "use_scale": self.use_scale, "score_mode": self.score_mode}


class AdditiveAttention(BaseDenseAttention):
    """Additive attention: ``scores = sum(scale * tanh(query + key))`` (``scale`` learned,
    one entry per feature, with ``use_scale``)."""

    def __init__(self, use_scale: bool = True, **kwargs: Any):
        super().__init__(**kwargs)
        self.use_scale = use_scale

    def build(self, input_shape: Any) -> None:
        dim = input_shape[1].as_list()[-1]
        self.scale = self.add_weight("scale", [dim], initializer="glorot_uniform") if self.use_scale else None
        self.built = True

    def _calculate_scores(self, query: Any, key: Any) -> Any:
        summed = math_ops.tanh(array_ops.expand_dims(query, -2) + array_ops.expand_dims(key, -3))
        return reduction_ops.reduce_sum((self.scale if self.use_scale else 1.0) * summed, axis=-1)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "use_scale": self.use_scale}
