"""The run-time side of ``tf.data``: dataset definitions and the iterators that run them.

A dataset op's kernel (``kernels/dataset_ops.py``) returns a :class:`~.base.DatasetDef`,
an immutable description of one stage (its input stages, its argument values, its compiled
functions). ``MakeIterator`` calls ``definition.iterate(ctx)``, which returns a Python
generator of elements (tuples of component values); stages that run ahead
(``prefetch``, parallel ``map``, parallel ``interleave``) start threads registered with the
:class:`~.context.PipelineContext`, which stops and joins them when the iterator is
re-initialised, exhausted with an error, or its session closes.

============================  ==============================================================
Module                        Stages
============================  ==============================================================
``base.py``                   the ``DatasetDef`` protocol, element helpers (stack, slice, copy)
``context.py``                ``PipelineContext``: cancellation, threads, per-iterator state, seeds
``sources.py``                tensors, tensor slices, range, generator, zip, concatenate
``transforms.py``             map, filter, take, skip, repeat, shard, enumerate, flat_map, options
``batching.py``               batch, padded_batch, unbatch, window
``shuffle.py``                shuffle (TensorFlow's buffer semantics)
``parallel.py``               prefetch, parallel map, interleave (cycle/block, parallel)
``cache.py``                  cache in memory or in files
``readers.py``                TFRecord, text line and fixed-length record files
``stateful_transforms.py``    scan, take_while, unique, assert_cardinality
``grouping.py``               group_by_window, group_by_reducer
``selection.py``              choose_from_datasets (directed interleave)
``generated_sources.py``      from_list, RandomDataset, SqlDataset
``cardinality.py``            the element count of a pipeline (``DatasetCardinality``)
============================  ==============================================================
"""
