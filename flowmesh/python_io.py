"""``tf.python_io``: TFRecord files from Python (TensorFlow 1.x's names)."""

from flowmesh.data.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
