"""Dataset and iterator ops (``tf.data`` in the graph).

A dataset op outputs a scalar ``variant``: at run time its kernel returns a dataset
definition (``kernels/pipeline/``), an immutable description of one pipeline stage built
from its input stages and argument values. Every dataset op carries ``output_types`` and
``output_shapes`` (its element's flat components). Functions (``map``'s body, ``filter``'s
predicate, ``interleave``'s dataset factory) are ``FuncGraph`` attrs named ``f`` or
``predicate``; the tensors they capture are the op's trailing inputs.

Iterator ops (resource handles in the resource store of their device, like queues):

=========================  ===============================================================
``IteratorV2``             an iterator handle (``shared_name``), initialised by ``MakeIterator``
``MakeIterator``           (re)starts the iterator on a dataset (stopping the old pipeline)
``OneShotIterator``        a handle started on its input dataset the first time it runs
``IteratorGetNext``        the next element; ``OutOfRangeError`` at the end
``IteratorGetNextAsOptional`` ``has_value`` and the next element (zeros at the end)
``IteratorToStringHandle`` / ``IteratorFromStringHandleV2``: a string naming an iterator
=========================  ===============================================================

``DatasetCardinality``, ``DatasetToSingleElement``, ``DatasetToTFRecord`` and
``InitializeTableFromDataset`` run a whole dataset inside one step.

All of them run on the CPU (their kernels are host-only); the elements reach other
devices through the usual Send/Recv pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape

_VARIANT = [(dtypes.variant, TensorShape([]))]
_RESOURCE = [(dtypes.resource, TensorShape([]))]


def _variant(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return list(_VARIANT)


def _resource(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return list(_RESOURCE)


def _elements(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtypes.as_dtype(t), as_shape(s))
            for t, s in zip(attrs["output_types"], attrs["output_shapes"])]


DATASET_OPS = (
    # sources
    "TensorDataset", "TensorSliceDataset", "RangeDataset", "ZipDataset", "ConcatenateDataset",
    # element-wise and counting
    "MapDataset", "ParallelMapDatasetV2", "FilterDataset", "FlatMapDataset",
    "InterleaveDataset", "ParallelInterleaveDatasetV4", "TakeDataset", "SkipDataset",
    "RepeatDataset", "ShardDataset", "OptionsDataset",
    # batching, shuffling, buffering
    "BatchDatasetV2", "PaddedBatchDatasetV2", "UnbatchDataset", "WindowDataset",
    "ShuffleDataset", "PrefetchDataset", "CacheDataset",
    # files
    "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset",
    # tf.data.experimental: stateful, grouping, selection, sources
    "ScanDataset", "TakeWhileDataset", "UniqueDataset", "AssertCardinalityDataset",
    "GroupByWindowDataset", "GroupByReducerDataset", "DirectedInterleaveDataset",
    "ListDataset", "RandomDataset", "SqlDataset",
)
for _op in DATASET_OPS:
    register_op(_op, _variant, not_differentiable=True)
# from_generator holds a Python callable: it cannot be shipped to another process
register_op("GeneratorDataset", _variant, not_differentiable=True, serializable=False)

# ops that run a whole dataset in one step (kernels/dataset_consumer_ops.py)
register_op("DatasetCardinality", lambda inputs, attrs: [(dtypes.int64, TensorShape([]))],
            not_differentiable=True)
register_op("DatasetToSingleElement", _elements, not_differentiable=True, stateful=True)
register_op("DatasetToTFRecord", lambda inputs, attrs: [], not_differentiable=True, stateful=True)
register_op("InitializeTableFromDataset", lambda inputs, attrs: [], not_differentiable=True, stateful=True)

register_op("IteratorV2", _resource, not_differentiable=True, stateful=True)
register_op("OneShotIterator", _resource, not_differentiable=True, stateful=True)
register_op("MakeIterator", lambda inputs, attrs: [], not_differentiable=True, stateful=True)
register_op("IteratorGetNext", _elements, not_differentiable=True, stateful=True)
register_op("IteratorGetNextAsOptional",
            lambda inputs, attrs: [(dtypes.bool, TensorShape([])), *_elements(inputs, attrs)],
            not_differentiable=True, stateful=True)
register_op("IteratorToStringHandle", lambda inputs, attrs: [(dtypes.string, TensorShape([]))],
            not_differentiable=True, stateful=True)
register_op("IteratorFromStringHandleV2", _resource, not_differentiable=True, stateful=True)
register_op("MatchingFiles", lambda inputs, attrs: [(dtypes.string, TensorShape([None]))],
            not_differentiable=True)
