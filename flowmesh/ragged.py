# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.ragged`` (``tf.compat.v1.ragged``): ragged tensors, their factories and ops."""

from flowmesh.core.ragged_tensor_value import RaggedTensorValue
from flowmesh.ops.ragged_array_ops import boolean_mask, stack_dynamic_partitions
from flowmesh.ops.ragged_concat_ops import stack
from flowmesh.ops.ragged_cross_ops import cross, cross_hashed
from flowmesh.ops.ragged_factory_ops import constant, constant_value, placeholder
from flowmesh.ops.ragged_functional_ops import map_flat_values
from flowmesh.ops.ragged_math_ops import range
from flowmesh.ops.ragged_segment_ids import row_splits_to_segment_ids, segment_ids_to_row_splits
