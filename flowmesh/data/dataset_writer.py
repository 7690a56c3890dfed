"""``tf.data.experimental.TFRecordWriter``: an op that writes every element of a dataset
of strings to a TFRecord file (``DatasetToTFRecord``, run inside one step)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data.dataset import Dataset
from flowmesh.formats.tfrecord import check_compression
from flowmesh.ops._builders import make_op


class TFRecordWriter:
    """Writes a dataset of scalar strings to ``filename``, one record per element.

    Args:
        filename: the file to (over)write.
        compression_type: ``None``/``""``, ``"ZLIB"`` or ``"GZIP"``.

    Raises:
        InvalidArgumentError: an unknown compression type.
    """

    def __init__(self, filename: Any, compression_type: str | None = None):
        self._filename = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
        self._compression = check_compression(compression_type)

    def write(self, dataset: Dataset) -> Operation:
        """The op that writes ``dataset``'s elements.

        Raises:
            TypeError: ``dataset`` is not a dataset of scalar strings.
        """
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Invalid `dataset.` Expected a `tf.data.Dataset` object but got {type(dataset)}.")
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.string or spec.shape.rank not in (None, 0):
            raise TypeError("Invalid `dataset`. `dataset` should produce scalar `string` elements, but got "
                            f"{spec!r} (serialize each element first, e.g. tf.io.serialize_tensor).")
        compression = convert_to_tensor(self._compression, dtype=dtypes.string, name="compression_type")
        return make_op("DatasetToTFRecord", [dataset._variant_tensor, self._filename, compression],
                       name="DatasetToTFRecord")
