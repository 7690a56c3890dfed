# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.nn``: neural-network ops (activations, convolution, pooling, normalization,
dropout, embeddings, cross entropies, top-k)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core.convert import convert_to_tensor

_fill_namespace(globals(), "nn")

__all__ = [
    "quantized_avg_pool", "quantized_conv2d", "quantized_max_pool", "quantized_relu_x",
    "fractional_avg_pool", "fractional_max_pool",
    "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",
    "embedding_lookup_sparse", "safe_embedding_lookup_sparse",
    "collapse_repeated", "ctc_beam_search_decoder", "ctc_beam_search_decoder_v2",
    "ctc_greedy_decoder", "ctc_unique_labels",
    "atrous_conv2d_transpose", "avg_pool3d", "conv3d", "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2", "conv3d_transpose", "dilation2d", "erosion2d", "max_pool3d",
    "max_pool_with_argmax", "with_space_to_batch",
    "ctc_loss", "ctc_loss_v2", "approx_max_k", "approx_min_k", "avg_pool1d", "avg_pool_v2", "batch_norm_with_global_normalization", "conv1d_transpose", "conv_transpose", "convolution", "depthwise_conv2d_native_backprop_filter", "depthwise_conv2d_native_backprop_input", "log_poisson_loss", "max_pool1d", "max_pool_v2", "pool", "sufficient_statistics", "depth_to_space", "space_to_batch", "space_to_depth", "all_candidate_sampler", "compute_accidental_hits", "log_uniform_candidate_sampler", "nce_loss",
    "sampled_softmax_loss", "uniform_candidate_sampler",
    "atrous_conv2d", "avg_pool", "bidirectional_dynamic_rnn", "dynamic_rnn", "rnn_cell",
    "static_bidirectional_rnn", "static_rnn", "raw_rnn", "static_state_saving_rnn", "avg_pool2d", "batch_normalization", "bias_add", "conv1d",
    "conv2d", "depthwise_conv2d", "depthwise_conv2d_native", "separable_conv2d", "conv2d_backprop_filter", "conv2d_backprop_input", "conv2d_transpose", "crelu",
    "dropout", "elu", "embedding_lookup", "fused_batch_norm", "gelu", "in_top_k", "l2_loss",
    "l2_normalize", "leaky_relu", "local_response_normalization", "log_sigmoid", "log_softmax",
    "lrn", "max_pool", "max_pool2d", "moments", "normalize_moments", "relu", "relu6",
    "relu_layer", "selu", "sigmoid", "sigmoid_cross_entropy_with_logits", "silu", "softmax",
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2", "softplus",
    "softsign", "sparse_softmax_cross_entropy_with_logits", "swish", "tanh", "top_k",
    "weighted_cross_entropy_with_logits", "weighted_moments", "xw_plus_b", "zero_fraction",
]

def _replicas_in_sync() -> int:
    from flowmesh.distribute.distribute_lib import get_strategy

    return int(get_strategy().num_replicas_in_sync)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None, name=None):
    """``sum(per_example_loss * sample_weight) / global_batch_size``; the default global batch is
    this replica's batch times the current strategy's ``num_replicas_in_sync`` (1 outside one)."""
    from flowmesh.ops import array_ops, cast_ops
    from flowmesh.ops.nn_compositions import compute_average_loss as _average

    if global_batch_size is None:
        loss = convert_to_tensor(per_example_loss)
        global_batch_size = array_ops.shape(loss)[0] * _replicas_in_sync()
        global_batch_size = cast_ops.cast(global_batch_size, loss.dtype)
    return _average(per_example_loss, sample_weight, global_batch_size, name)


def scale_regularization_loss(regularization_loss, name=None):
    """The regularization loss divided by the current strategy's ``num_replicas_in_sync`` (so
    summing it over replicas adds it once; unchanged outside a strategy)."""
    from flowmesh.ops import math_ops

    loss = convert_to_tensor(regularization_loss)
    return math_ops.truediv(loss, float(_replicas_in_sync()), name=name or "scale_regularization_loss")
