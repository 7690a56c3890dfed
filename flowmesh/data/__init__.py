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
``options.py``                ``Options`` (determinism, auto-shard policy); its groups in
                              ``option_groups.py``
``readers.py``                TFRecordDataset, TextLineDataset, FixedLengthRecordDataset
``tfrecord.py``               TFRecordWriter, tf_record_iterator, TFRecordOptions
``stateful_transforms.py``    scan, take_while, unique, cardinality, assert_cardinality
``grouping.py``               group_by_window, group_by_reducer, bucket_by_sequence_length
``selection.py``              choose_from_datasets, sample_from_datasets
``generated_sources.py``      from_list, RandomDataset, SqlDataset
``csv_datasets.py``           CsvDataset, make_csv_dataset
``feature_datasets.py``       parse_example_dataset, make_batched_features_dataset
``dataset_variant.py``        to_variant, from_variant, get_structure, get_single_element
``dataset_tables.py``         DatasetInitializer, (index_)table_from_dataset
``dataset_writer.py``         experimental.TFRecordWriter (a dataset into a TFRecord file)
``device_transfer.py``        prefetch_to_device, copy_to_device
``sparse_batching.py``        dense_to_sparse_batch
``cardinality_padding.py``    pad_to_cardinality
``resampling.py``             rejection_resample
``error_dropping.py``         ignore_errors (elements whose map/filter function fails)
``debug_mode.py``             enable_debug_mode (sequential, deterministic pipelines)
``snapshot.py``               snapshot (a pass saved under a path, keyed by the pipeline)
``optional.py``               Optional, get_next_as_optional
``numpy_iterator.py``         NumpyIterator (elements as NumPy values, run by a session)
============================  ================================================================

The pipeline itself runs in the kernels (``flowmesh/kernels/pipeline/``).
"""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "data")

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset", "DatasetSpec", "DatasetV1", "DatasetV2", "FixedLengthRecordDataset",
           "Iterator", "NumpyIterator", "Options", "TFRecordDataset", "SparseTensorSpec", "TensorSpec", "TextLineDataset", "experimental", "get_output_classes", "get_output_shapes",
           "ThreadingOptions", "get_output_types", "make_initializable_iterator", "make_one_shot_iterator"]
