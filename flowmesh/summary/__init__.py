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
``flowmesh/ops/summary_ops.py`` with their kernels in ``flowmesh/kernels/summary_ops.py``.
"""

from flowmesh.ops.summary_ops import histogram, merge, merge_all, scalar
from flowmesh.summary.proto import Event, HistogramProto, SessionLog, Summary, SummaryMetadata
from flowmesh.summary.reader import summary_iterator
from flowmesh.summary.writer import FileWriter, FileWriterCache

__all__ = ["Event", "FileWriter", "FileWriterCache", "HistogramProto", "SessionLog", "Summary",
           "SummaryMetadata", "histogram", "merge", "merge_all", "scalar", "summary_iterator"]
