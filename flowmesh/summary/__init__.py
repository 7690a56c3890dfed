"""``tf.summary``: summary ops and the event files TensorBoard reads.

========================  ===================================================================
module                    what
========================  ===================================================================
``proto``                 ``Summary``, ``Event``, ``SessionLog``, ``HistogramProto`` messages
                          (the protobuf wire format, without the protobuf package)
``records``               TFRecord framing with masked CRC32C checksums
``histogram_buckets``     TensorFlow's default-bucket histogram
``writer``                ``FileWriter``, ``FileWriterCache``
``reader``                ``summary_iterator``
========================  ===================================================================

The ops themselves (``scalar``, ``histogram``, ``merge``, ``merge_all``) are defined in
``flowmesh/ops/summary_ops.py`` with their kernels in ``flowmesh/kernels/summary_ops.py``;
``image``/``audio`` in ``ops/summary_media_ops.py``, ``tensor_summary``/``text`` in
``ops/summary_tensor_ops.py`` (kernels in ``kernels/summary_media_ops.py``).
"""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.unsupported import unsupported as _unsupported

_fill_namespace(globals(), "summary")

initialize = _unsupported("summary.initialize", "TF2-style summary writers (tf.contrib.summary, "
                          "tf.summary.create_file_writer) that it initializes are not implemented; "
                          "write TF1 summaries with tf.summary.FileWriter")

__all__ = ["SummaryDescription", "TaggedRunMetadata", "all_v2_summary_ops", "audio",
           "get_summary_description", "image", "initialize", "tensor_summary", "text", "Event", "FileWriter", "FileWriterCache", "HistogramProto", "SessionLog", "Summary",
           "SummaryMetadata", "histogram", "merge", "merge_all", "scalar", "summary_iterator"]
