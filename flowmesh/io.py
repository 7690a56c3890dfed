"""``tf.io``: record files, Example parsing and raw decoding (the names flowmesh has)."""

from flowmesh import gfile
from flowmesh.data.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from flowmesh.ops.decode_ops import decode_csv, decode_raw
from flowmesh.ops.file_io_ops import (
    decode_base64,
    encode_base64,
    matching_files,
    parse_tensor,
    read_file,
    serialize_tensor,
    write_file,
)
from flowmesh.ops.parsing_config import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from flowmesh.ops.parsing_ops import parse_example, parse_single_example, parse_single_sequence_example
from flowmesh.train.graph_io import write_graph

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "TFRecordCompressionType", "TFRecordOptions",
           "TFRecordWriter", "VarLenFeature", "decode_csv", "decode_raw", "gfile", "parse_example", "parse_single_example",
           "parse_single_sequence_example", "tf_record_iterator", "decode_base64", "encode_base64", "matching_files", "parse_tensor", "read_file",
           "serialize_tensor", "write_file", "write_graph"]
