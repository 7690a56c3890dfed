"""``tf.data.Dataset``: a pipeline described by dataset ops in the graph.

Every ``Dataset`` wraps the ``variant`` output of one dataset op
(``flowmesh/ops/dataset_ops.py``) and the *element spec* of what it produces (nested
:class:`~flowmesh.core.type_spec.TensorSpec`). Creating or transforming a dataset only
builds ops; an iterator (``make_one_shot_iterator``, ``make_initializable_iterator``,
:class:`~flowmesh.data.iterator.Iterator`) runs the pipeline when ``get_next()`` is run:
elements are produced by the stages' kernels on the pipeline's own threads (``prefetch``,
parallel ``map``/``interleave``), so input preparation overlaps the training step.

Sources live in :mod:`flowmesh.data.sources`, transformations' op building in
:mod:`flowmesh.data.transformations`; this class is the public surface.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.data import structure as st
from flowmesh.data.options import Options

AUTOTUNE = -1
INFINITE = -1
UNKNOWN = -2


class Dataset:
    """A sequence of elements built by dataset ops (``tf.data.Dataset``, TF1 flavour)."""

    def __init__(self, variant: Tensor, element_spec: Any, options: Options | None = None):
        self._variant_tensor = variant
        self._element_spec = element_spec
        self._options = options or Options()

    # --- structure ---------------------------------------------------------------------------
    @property
    def element_spec(self) -> Any:
        """The nested ``TensorSpec`` of one element."""
        return self._element_spec

    @property
    def output_types(self) -> Any:
        return st.types_of(self._element_spec)

    @property
    def output_shapes(self) -> Any:
        return st.shapes_of(self._element_spec)

    @property
    def output_classes(self) -> Any:
        return st.classes_of(self._element_spec)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} element_spec={self._element_spec!r}>"

    def __iter__(self) -> Any:
        raise RuntimeError(
            "A tf.data.Dataset is not iterable in graph mode. Use "
            "tf.compat.v1.data.make_one_shot_iterator(dataset).get_next() (or "
            "make_initializable_iterator) and run the result in a Session.")

    # --- sources -----------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors: Any) -> Dataset:
        """One element per row (first dimension) of ``tensors`` (a nested structure)."""
        from flowmesh.data import sources

        return sources.from_tensor_slices(tensors)

    @staticmethod
    def from_tensors(tensors: Any) -> Dataset:
        """A dataset with ``tensors`` as its one element."""
        from flowmesh.data import sources

        return sources.from_tensors(tensors)

    @staticmethod
    def range(*args: Any, output_type: Any = None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as ``int64`` scalars."""
        from flowmesh.data import sources

        return sources.range_dataset(*args, output_type=output_type)

    @staticmethod
    def zip(datasets: Any) -> Dataset:
        """Elements of several datasets side by side (a nested structure of datasets)."""
        from flowmesh.data import sources

        return sources.zip_datasets(datasets)

    @staticmethod
    def from_generator(generator: Callable[..., Any], output_types: Any, output_shapes: Any = None,
                       args: Sequence[Any] | None = None) -> Dataset:
        """Elements yielded by ``generator(*args)`` (called once per pass), converted to
        ``output_types`` and checked against ``output_shapes``."""
        from flowmesh.data import sources

        return sources.from_generator(generator, output_types, output_shapes, args)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: bool | None = None, seed: int | None = None) -> Dataset:
        """The files matching ``file_pattern`` (a glob or a list of them), shuffled by default."""
        from flowmesh.data import sources

        return sources.list_files(file_pattern, shuffle, seed)

    # --- transformations ---------------------------------------------------------------------
    def map(self, map_func: Callable[..., Any], num_parallel_calls: int | None = None,
            deterministic: bool | None = None) -> Dataset:
        """``map_func`` applied to every element, traced into a graph function.

        Args:
            map_func: takes one element (a tuple element is unpacked into arguments).
            num_parallel_calls: elements processed in parallel on threads of the pipeline
                (``AUTOTUNE``: one per CPU); ``None``: in order, one at a time.
            deterministic: ``False`` lets parallel results come out of order (``None``:
                ``options().experimental_deterministic``, ``True`` by default).
        """
        from flowmesh.data import transformations as tr

        return tr.map_dataset(self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate: Callable[..., Any]) -> Dataset:
        """The elements for which ``predicate`` returns a scalar ``True``."""
        from flowmesh.data import transformations as tr

        return tr.filter_dataset(self, predicate)

    def flat_map(self, map_func: Callable[..., Any]) -> Dataset:
        """The elements of the datasets ``map_func`` returns, one after the other."""
        from flowmesh.data import transformations as tr

        return tr.flat_map(self, map_func)

    def interleave(self, map_func: Callable[..., Any], cycle_length: int | None = None,
                   block_length: int | None = None, num_parallel_calls: int | None = None,
                   deterministic: bool | None = None) -> Dataset:
        """Elements of ``cycle_length`` datasets from ``map_func`` at a time, ``block_length``
        from each in turn; with ``num_parallel_calls`` they are read on parallel threads."""
        from flowmesh.data import transformations as tr

        return tr.interleave(self, map_func, cycle_length, block_length, num_parallel_calls)

    def batch(self, batch_size: Any, drop_remainder: bool = False) -> Dataset:
        """Consecutive elements stacked into batches of ``batch_size``."""
        from flowmesh.data import transformations as tr

        return tr.batch(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size: Any, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False) -> Dataset:
        """Batches of elements padded to ``padded_shapes`` (unknown dims: the longest)."""
        from flowmesh.data import transformations as tr

        return tr.padded_batch(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self) -> Dataset:
        """Every row of every element (the inverse of ``batch``)."""
        from flowmesh.data import transformations as tr

        return tr.unbatch(self)

    def window(self, size: Any, shift: Any = None, stride: Any = 1,
               drop_remainder: bool = False) -> Dataset:
        """Windows of ``size`` elements as nested datasets, starting every ``shift``."""
        from flowmesh.data import transformations as tr

        return tr.window(self, size, shift, stride, drop_remainder)

    def shuffle(self, buffer_size: Any, seed: int | None = None,
                reshuffle_each_iteration: bool | None = None) -> Dataset:
        """Elements in random order through a buffer of ``buffer_size`` (TensorFlow's
        semantics and seed rules; see ``kernels/pipeline/shuffle.py``)."""
        from flowmesh.data import transformations as tr

        return tr.shuffle(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count: Any = None) -> Dataset:
        """The dataset ``count`` times (``None`` or -1: forever)."""
        from flowmesh.data import transformations as tr

        return tr.counting("RepeatDataset", self, -1 if count is None else count, "count")

    def take(self, count: Any) -> Dataset:
        """At most ``count`` elements (-1: all)."""
        from flowmesh.data import transformations as tr

        return tr.counting("TakeDataset", self, count, "count")

    def skip(self, count: Any) -> Dataset:
        """All but the first ``count`` elements (-1: none)."""
        from flowmesh.data import transformations as tr

        return tr.counting("SkipDataset", self, count, "count")

    def shard(self, num_shards: Any, index: Any) -> Dataset:
        """Every ``num_shards``-th element, from ``index``."""
        from flowmesh.data import transformations as tr

        return tr.shard(self, num_shards, index)

    def prefetch(self, buffer_size: Any) -> Dataset:
        """Produces up to ``buffer_size`` elements ahead on a thread of the pipeline (or, as
        an iterator's outermost stage, in a worker process: see ``options()``)."""
        from flowmesh.data import transformations as tr

        return tr.prefetch(self, buffer_size)

    def cache(self, filename: str = "") -> Dataset:
        """Records the first complete pass (in memory, or in ``filename``) and replays it."""
        from flowmesh.data import transformations as tr

        return tr.cache(self, filename)

    def enumerate(self, start: int = 0) -> Dataset:
        """``(index, element)`` pairs, indices from ``start`` (int64)."""
        from flowmesh.data import sources

        return sources.zip_datasets((Dataset.range(start, 2**63 - 1), self))

    def concatenate(self, dataset: Dataset) -> Dataset:
        """This dataset's elements, then ``dataset``'s."""
        from flowmesh.data import transformations as tr

        return tr.concatenate(self, dataset)

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return result

    def with_options(self, options: Options) -> Dataset:
        """The same dataset with ``options`` merged into its options."""
        from flowmesh.data import transformations as tr

        return tr.with_options(self, options)

    def options(self) -> Options:
        """The options of this dataset (merged from every ``with_options``)."""
        return self._options

    # --- TensorFlow 2's methods over tf.data.experimental (data/*.py) -------------------------
    def scan(self, initial_state: Any, scan_func: Callable[..., Any]) -> Dataset:
        """``scan_func(state, element) -> (new_state, output)`` over the elements."""
        from flowmesh.data.stateful_transforms import scan

        return self.apply(scan(initial_state, scan_func))

    def take_while(self, predicate: Callable[..., Any]) -> Dataset:
        """The elements up to the first for which ``predicate`` is ``False``."""
        from flowmesh.data.stateful_transforms import take_while

        return self.apply(take_while(predicate))

    def unique(self) -> Dataset:
        """Each distinct element once (int32, int64 or string scalars)."""
        from flowmesh.data.stateful_transforms import unique

        return self.apply(unique())

    def cardinality(self) -> Tensor:
        """The number of elements (int64; -1 infinite, -2 unknown)."""
        from flowmesh.data.stateful_transforms import cardinality

        return cardinality(self)

    def group_by_window(self, key_func: Callable[..., Any], reduce_func: Callable[..., Any],
                        window_size: Any = None, window_size_func: Callable[..., Any] | None = None) -> Dataset:
        """See ``tf.data.experimental.group_by_window``."""
        from flowmesh.data.grouping import group_by_window

        return self.apply(group_by_window(key_func, reduce_func, window_size, window_size_func))

    def bucket_by_sequence_length(self, element_length_func: Callable[..., Any], bucket_boundaries: Sequence[int],
                                  bucket_batch_sizes: Sequence[int], padded_shapes: Any = None,
                                  padding_values: Any = None, pad_to_bucket_boundary: bool = False,
                                  no_padding: bool = False, drop_remainder: bool = False) -> Dataset:
        """See ``tf.data.experimental.bucket_by_sequence_length``."""
        from flowmesh.data.grouping import bucket_by_sequence_length

        return self.apply(bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                                                    padded_shapes, padding_values, pad_to_bucket_boundary,
                                                    no_padding, drop_remainder))

    def rejection_resample(self, class_func: Callable[..., Any], target_dist: Any, initial_dist: Any = None,
                           seed: int | None = None) -> Dataset:
        """See ``tf.data.experimental.rejection_resample``."""
        from flowmesh.data.resampling import rejection_resample

        return self.apply(rejection_resample(class_func, target_dist, initial_dist, seed))

    def ignore_errors(self, log_warning: bool = False) -> Dataset:
        """Drops the elements whose ``map``/``filter`` function fails."""
        from flowmesh.data.error_dropping import ignore_errors

        return self.apply(ignore_errors(log_warning))

    def snapshot(self, path: str, compression: str | None = "AUTO", reader_func: Callable[..., Any] | None = None,
                 shard_func: Callable[..., Any] | None = None) -> Dataset:
        """See ``tf.data.experimental.snapshot``."""
        from flowmesh.data.snapshot import snapshot

        return self.apply(snapshot(path, compression, reader_func, shard_func))

    def get_single_element(self) -> Any:
        """The one element, computed when run (``InvalidArgumentError`` otherwise)."""
        from flowmesh.data.dataset_variant import get_single_element

        return get_single_element(self)

    def as_numpy_iterator(self) -> Any:
        """The elements as NumPy values (a ``tf.data.NumpyIterator``, run in its own session)."""
        from flowmesh.data.numpy_iterator import NumpyIterator

        return NumpyIterator(self)

    @staticmethod
    def random(seed: int | None = None, rerandomize_each_iteration: bool | None = None) -> Dataset:
        """Endless uniform random int64 values in ``[0, 2**32)``, deterministic given ``seed``."""
        from flowmesh.data.generated_sources import RandomDataset

        return RandomDataset(seed, rerandomize_each_iteration)

    @staticmethod
    def sample_from_datasets(datasets: Sequence[Dataset], weights: Any = None, seed: int | None = None,
                             stop_on_empty_dataset: bool = False) -> Dataset:
        """See ``tf.data.experimental.sample_from_datasets``."""
        from flowmesh.data.selection import sample_from_datasets

        return sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)

    @staticmethod
    def choose_from_datasets(datasets: Sequence[Dataset], choice_dataset: Dataset,
                             stop_on_empty_dataset: bool = True) -> Dataset:
        """See ``tf.data.experimental.choose_from_datasets`` (which stops on an empty
        dataset by default here, as TensorFlow's method does)."""
        from flowmesh.data.selection import choose_from_datasets

        return choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    # --- iterators ---------------------------------------------------------------------------
    def make_one_shot_iterator(self) -> Any:
        """An iterator that starts on this dataset the first time it runs (no initializer)."""
        from flowmesh.data.iterator import make_one_shot_iterator

        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Any:
        """An iterator whose ``initializer`` (re)starts it; feeds of the placeholders the
        dataset uses are read at each initialisation."""
        from flowmesh.data.iterator import make_initializable_iterator

        return make_initializable_iterator(self, shared_name)


DatasetV1 = Dataset
DatasetV2 = Dataset
