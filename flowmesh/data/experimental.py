# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.data.experimental``: the names flowmesh supports."""

from flowmesh.core.type_spec import OptionalSpec as OptionalStructure
from flowmesh.core.type_spec import SparseTensorSpec as SparseTensorStructure
from flowmesh.core.type_spec import TensorArraySpec as TensorArrayStructure
from flowmesh.core.type_spec import TensorSpec as TensorStructure
from flowmesh.core.type_spec import TypeSpec as Structure
from flowmesh.data.cardinality_padding import pad_to_cardinality
from flowmesh.data.csv_datasets import CsvDataset, make_csv_dataset
from flowmesh.data.dataset import AUTOTUNE, INFINITE, UNKNOWN
from flowmesh.data.dataset_tables import DatasetInitializer, index_table_from_dataset, table_from_dataset
from flowmesh.data.dataset_variant import from_variant, get_single_element, get_structure, to_variant
from flowmesh.data.dataset_writer import TFRecordWriter
from flowmesh.data.debug_mode import enable_debug_mode
from flowmesh.data.device_transfer import copy_to_device, prefetch_to_device
from flowmesh.data.error_dropping import ignore_errors
from flowmesh.data.experimental_transforms import (
    Counter,
    enumerate_dataset,
    map_and_batch,
    parallel_interleave,
    shuffle_and_repeat,
    unbatch,
)
from flowmesh.data.experimental_transforms import map_and_batch as map_and_batch_with_legacy_function
from flowmesh.data.feature_datasets import make_batched_features_dataset, parse_example_dataset
from flowmesh.data.generated_sources import RandomDataset, SqlDataset, from_list
from flowmesh.data.grouping import Reducer, bucket_by_sequence_length, group_by_reducer, group_by_window
from flowmesh.data.option_groups import (
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ServiceOptions,
    ThreadingOptions,
)
from flowmesh.data.optional import Optional, get_next_as_optional
from flowmesh.data.options import AutoShardPolicy, Options
from flowmesh.data.ragged_batching import RaggedTensorStructure, dense_to_ragged_batch
from flowmesh.data.resampling import rejection_resample
from flowmesh.data.selection import choose_from_datasets, sample_from_datasets
from flowmesh.data.sharding import SHARD_HINT, auto_shard
from flowmesh.data.snapshot import snapshot
from flowmesh.data.sparse_batching import dense_to_sparse_batch
from flowmesh.data.stateful_transforms import assert_cardinality, cardinality, scan, take_while, unique
from flowmesh.data.structure import DatasetSpec as DatasetStructure

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN
