# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.io``: record files, Example parsing and raw decoding (the names flowmesh has)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "io")


__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "TFRecordCompressionType", "TFRecordOptions",
           "TFRecordWriter", "VarLenFeature", "decode_csv", "decode_raw", "gfile", "parse_example", "parse_single_example",
           "parse_single_sequence_example", "tf_record_iterator", "decode_base64", "encode_base64", "matching_files", "parse_tensor", "read_file",
           "serialize_tensor", "write_file", "write_graph", "decode_and_crop_jpeg", "decode_bmp",
           "decode_compressed", "decode_gif", "decode_image", "decode_jpeg", "decode_json_example",
           "decode_jxl", "decode_png", "decode_webp", "deserialize_many_sparse", "encode_jpeg",
           "encode_png", "extract_jpeg_shape", "is_jpeg", "parse_sequence_example", "SparseFeature", "RaggedFeature", "decode_proto", "encode_proto", "serialize_many_sparse", "serialize_sparse",
           "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue", "match_filenames_once"]
