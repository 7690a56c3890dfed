"""File datasets: ``TFRecordDataset``, ``TextLineDataset``, ``FixedLengthRecordDataset``.

Paths are local or fsspec URLs (``gs://``, ``s3://``, ``hdfs://``... where the fsspec
backend is installed). With ``num_parallel_reads`` the files are read by an
``interleave`` with that many parallel readers (records of several files alternate, in a
deterministic order, as in TensorFlow).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data.dataset import Dataset
from flowmesh.data.sources import from_tensor_slices, make_dataset

_STRING = TensorSpec([], dtypes.string)


def _filenames(filenames: Any) -> Any:
    if isinstance(filenames, Dataset):
        return filenames
    tensor = convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
    if tensor.shape.rank is not None and tensor.shape.rank > 1:
        raise ValueError(f"`filenames` must be a scalar or a vector of strings, got shape "
                         f"{tensor.shape}")
    return tensor


def _file_dataset(filenames: Any, num_parallel_reads: int | None, single: Any) -> Dataset:
    names = _filenames(filenames)
    if not isinstance(names, Dataset) and num_parallel_reads is None:
        return single(names)
    if not isinstance(names, Dataset):
        if names.shape.rank == 0:
            from flowmesh.ops.array_ops import reshape

            names = reshape(names, [1])
        names = from_tensor_slices(names)
    if num_parallel_reads is None:
        return names.flat_map(single)
    return names.interleave(single, cycle_length=num_parallel_reads, block_length=1,
                            num_parallel_calls=num_parallel_reads)


class _FileDataset(Dataset):
    def _adopt(self, dataset: Dataset, filenames: Any) -> None:
        Dataset.__init__(self, dataset._variant_tensor, dataset.element_spec, dataset.options())
        self._filenames = filenames


def _compression(value: Any) -> Any:
    return convert_to_tensor(value or "", dtype=dtypes.string, name="compression_type")


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files (``tf.data.TFRecordDataset``).

    Args:
        filenames: a string scalar/vector tensor, a list, or a dataset of file names.
        compression_type: ``""``/``None``, ``"ZLIB"`` or ``"GZIP"``.
        buffer_size: bytes read at a time (default 1 MB).
        num_parallel_reads: files read in parallel (``None``: one after another).
    """

    def __init__(self, filenames: Any, compression_type: str | None = None,
                 buffer_size: int | None = None, num_parallel_reads: int | None = None):
        def single(names: Any) -> Dataset:
            inputs = [names, _compression(compression_type),
                      convert_to_tensor(buffer_size or 0, dtype=dtypes.int64)]
            return make_dataset("TFRecordDataset", inputs, _STRING)

        self._adopt(_file_dataset(filenames, num_parallel_reads, single), filenames)


class TextLineDataset(_FileDataset):
    """The lines of text files, without line endings (``tf.data.TextLineDataset``)."""

    def __init__(self, filenames: Any, compression_type: str | None = None,
                 buffer_size: int | None = None, num_parallel_reads: int | None = None):
        def single(names: Any) -> Dataset:
            inputs = [names, _compression(compression_type),
                      convert_to_tensor(buffer_size or 0, dtype=dtypes.int64)]
            return make_dataset("TextLineDataset", inputs, _STRING)

        self._adopt(_file_dataset(filenames, num_parallel_reads, single), filenames)


class FixedLengthRecordDataset(_FileDataset):
    """Fixed-size records between a header and a footer (``tf.data.FixedLengthRecordDataset``)."""

    def __init__(self, filenames: Any, record_bytes: int, header_bytes: int | None = None,
                 footer_bytes: int | None = None, buffer_size: int | None = None,
                 compression_type: str | None = None, num_parallel_reads: int | None = None):
        def single(names: Any) -> Dataset:
            ints = [convert_to_tensor(v or 0, dtype=dtypes.int64)
                    for v in (header_bytes, record_bytes, footer_bytes, buffer_size)]
            return make_dataset("FixedLengthRecordDataset",
                                [names, *ints, _compression(compression_type)], _STRING)

        self._adopt(_file_dataset(filenames, num_parallel_reads, single), filenames)
