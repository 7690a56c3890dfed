# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.quantization.experimental``: the option messages of TensorFlow's SavedModel quantizer
and its representative-dataset saver. ``quantize_saved_model`` itself (MLIR passes over a
TensorFlow 2 SavedModel) is a stand-in."""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core.graph import Tensor
from flowmesh.core.graph_def import make_tensor_proto
from flowmesh.data.tfrecord import TFRecordWriter
from flowmesh.protos.quantization_options import quantization_options_pb2
from flowmesh.runtime.session import Session
from flowmesh.unsupported import MLIR, unsupported

_fill_namespace(globals(), "quantization.experimental")

__all__ = ["QuantizationComponentSpec", "QuantizationMethod", "QuantizationOptions",
           "TfRecordRepresentativeDatasetSaver", "UnitWiseQuantizationSpec", "quantize_saved_model"]

logger = logging.getLogger("flowmesh")

_QUANTIZER = MLIR + " (tf.quantization.experimental quantizes TF2 SavedModels with MLIR passes configured by its option protos)"

RepresentativeSample = Mapping[str, Any]


class TfRecordRepresentativeDatasetSaver:
    """Saves representative datasets for quantization calibration as TFRecord files of
    ``RepresentativeDataSample`` messages (TensorFlow's class of the same name).

    Args:
        path_map: signature key -> the TFRecord file its dataset is written to.
        expected_input_key_map: signature key -> the input keys every sample must have.

    Raises:
        KeyError: ``path_map`` and ``expected_input_key_map`` have different keys.

    Example::

        files = tf.quantization.experimental.TfRecordRepresentativeDatasetSaver(
            path_map={"serving_default": "/tmp/repr.tfrecord"},
        ).save({"serving_default": [{"input": np.ones([3, 3], np.float32)}]})
        options = tf.quantization.experimental.QuantizationOptions(
            signature_keys=["serving_default"], representative_datasets=files)
    """

    def __init__(self, path_map: Mapping[str, os.PathLike[str] | str],
                 expected_input_key_map: Mapping[str, Collection[str]] | None = None):
        self.path_map = path_map
        self.expected_input_key_map: Mapping[str, Collection[str]] = {}
        if expected_input_key_map is not None:
            if set(path_map.keys()) != set(expected_input_key_map.keys()):
                raise KeyError("The `path_map` and `expected_input_key_map` should have the same "
                               "set of keys.")
            self.expected_input_key_map = expected_input_key_map

    def save(self, representative_dataset: Mapping[str, Iterable[RepresentativeSample]]) -> dict[str, Any]:
        """Writes each signature's samples to its file in ``path_map``.

        Args:
            representative_dataset: signature key -> iterable of ``{input key: value}``
                samples; values are array-likes or graph tensors (evaluated in a session).

        Returns:
            signature key -> ``RepresentativeDatasetFile`` naming the written file.

        Raises:
            ValueError: a signature key is not in ``path_map``.
            KeyError: a sample's input keys differ from ``expected_input_key_map``'s.
        """
        files = {}
        for key, samples in representative_dataset.items():
            if key not in self.path_map:
                raise ValueError(f"SignatureDef key does not exist in the provided path_map: {key}")
            files[key] = self._save_tf_record_dataset(samples, key)
        return files

    def _save_tf_record_dataset(self, samples: Iterable[RepresentativeSample], key: str) -> Any:
        samples = _evaluate_tensors(samples)
        expected = self.expected_input_key_map.get(key)
        path = self.path_map[key]
        with TFRecordWriter(os.fspath(path)) as writer:
            for sample in samples:
                if expected is not None and set(sample.keys()) != set(expected):
                    raise KeyError(
                        "Invalid input keys for representative sample. The function expects input "
                        f"keys of: {set(expected)}. Got: {set(sample.keys())}. Please provide correct "
                        "input keys for representative samples.")
                message = quantization_options_pb2.RepresentativeDataSample()
                for name, value in sample.items():
                    message.tensor_proto_inputs[name].CopyFrom(make_tensor_proto(value))
                writer.write(message.SerializeToString())
        logger.info("Saved representative dataset for signature def: %s to: %s", key, path)
        return quantization_options_pb2.RepresentativeDatasetFile(tfrecord_file_path=str(path))


def _evaluate_tensors(samples: Iterable[RepresentativeSample]) -> list[dict[str, Any]]:
    """The samples with graph tensors replaced by their values (one session per graph)."""
    out = [dict(sample) for sample in samples]
    tensors = [(i, k, v) for i, s in enumerate(out) for k, v in s.items() if isinstance(v, Tensor)]
    by_graph: dict[int, list[tuple[int, str, Tensor]]] = {}
    for entry in tensors:
        by_graph.setdefault(id(entry[2].graph), []).append(entry)
    for entries in by_graph.values():
        with Session(graph=entries[0][2].graph) as sess:
            values = sess.run([t for _, _, t in entries])
        for (i, k, _), value in zip(entries, values):
            out[i][k] = value
    return out


quantize_saved_model = unsupported("quantization.experimental.quantize_saved_model", _QUANTIZER)
