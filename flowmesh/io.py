"""``tf.io``: record files, Example parsing and raw decoding (the names flowmesh has)."""

from flowmesh import io_gfile as gfile
from flowmesh.data.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from flowmesh.image.convert import decode_image
from flowmesh.ops.byte_decode_ops import decode_compressed, decode_json_example
from flowmesh.ops.data_flow_ops import QueueBase
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
from flowmesh.ops.image_decode_ops import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_webp,
    extract_jpeg_shape,
    is_jpeg,
)
from flowmesh.ops.image_ops import decode_jpeg, decode_png, encode_jpeg, encode_png
from flowmesh.ops.parse_sequence_batch_ops import parse_sequence_example
from flowmesh.ops.parsing_config import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
)
from flowmesh.ops.parsing_ops import parse_example, parse_single_example, parse_single_sequence_example
from flowmesh.ops.proto_codec_ops import decode_proto, encode_proto
from flowmesh.ops.queue_kinds import PaddingFIFOQueue, PriorityQueue, RandomShuffleQueue
from flowmesh.ops.sparse_serialize_ops import (
    deserialize_many_sparse,
    serialize_many_sparse,
    serialize_sparse,
)
from flowmesh.train.graph_io import write_graph
from flowmesh.train.input_producers import match_filenames_once
from flowmesh.unsupported import JPEG_XL as _JPEG_XL
from flowmesh.unsupported import unsupported as _unsupported

decode_jxl = _unsupported("io.decode_jxl", _JPEG_XL)

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "TFRecordCompressionType", "TFRecordOptions",
           "TFRecordWriter", "VarLenFeature", "decode_csv", "decode_raw", "gfile", "parse_example", "parse_single_example",
           "parse_single_sequence_example", "tf_record_iterator", "decode_base64", "encode_base64", "matching_files", "parse_tensor", "read_file",
           "serialize_tensor", "write_file", "write_graph", "decode_and_crop_jpeg", "decode_bmp",
           "decode_compressed", "decode_gif", "decode_image", "decode_jpeg", "decode_json_example",
           "decode_jxl", "decode_png", "decode_webp", "deserialize_many_sparse", "encode_jpeg",
           "encode_png", "extract_jpeg_shape", "is_jpeg", "parse_sequence_example", "SparseFeature", "RaggedFeature", "decode_proto", "encode_proto", "serialize_many_sparse", "serialize_sparse",
           "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue", "match_filenames_once"]
