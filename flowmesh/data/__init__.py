"""``tf.data``: input pipelines as dataset ops in the graph (see ``data/dataset.py``).

============================  ================================================================
Module                        What
============================  ================================================================
``dataset.py``                ``Dataset`` (the public methods)
``sources.py``                from_tensor_slices, from_tensors, range, zip, from_generator,
                              list_files
``transformations.py``        the ops of map, filter, batch, shuffle, interleave, cache...
``functions.py``              tracing user functions into function graphs
``structure.py``              element structures (their ``TensorSpec`` leaves are in ``core/type_spec.py``), tf.data's nesting rules
``iterator.py``               ``Iterator``, one-shot / initializable iterators
``options.py``                ``Options`` (determinism, auto-shard policy)
``readers.py``                TFRecordDataset, TextLineDataset, FixedLengthRecordDataset
``tfrecord.py``               TFRecordWriter, tf_record_iterator, TFRecordOptions
============================  ================================================================

The pipeline itself runs in the kernels (``flowmesh/kernels/pipeline/``).
"""

from flowmesh.core.type_spec import SparseTensorSpec, TensorSpec
from flowmesh.data import experimental
from flowmesh.data.dataset import AUTOTUNE, Dataset, DatasetV1, DatasetV2
from flowmesh.data.experimental import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from flowmesh.data.iterator import (
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from flowmesh.data.options import Options
from flowmesh.data.readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset
from flowmesh.data.structure import DatasetSpec

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset", "DatasetSpec", "DatasetV1", "DatasetV2", "FixedLengthRecordDataset",
           "Iterator", "Options", "TFRecordDataset", "SparseTensorSpec", "TensorSpec", "TextLineDataset", "experimental", "get_output_classes", "get_output_shapes",
           "get_output_types", "make_initializable_iterator", "make_one_shot_iterator"]
