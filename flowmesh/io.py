"""``tf.io``: record files, Example parsing and raw decoding (the names flowmesh has)."""

from flowmesh import gfile
from flowmesh.data.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from flowmesh.ops.parsing_config import FixedLenFeature, VarLenFeature

__all__ = ["FixedLenFeature", "TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter",
           "VarLenFeature", "gfile", "tf_record_iterator"]
