# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.python_io``: TFRecord files from Python (TensorFlow 1.x's names)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "python_io")

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
