"""File formats on the formats floor, below ``ops/`` and every reader or writer of them:
the masked CRC-32C (``crc.py``) and TFRecord files (``tfrecord.py``)."""
