"""File formats on the formats floor, below ``ops/`` and every reader or writer of them:
the masked CRC-32C (``crc.py``), TFRecord files (``tfrecord.py``) and the file-system layer
under all of them (``filesystem.py``: local paths and fsspec URLs, atomic writes, flowmesh
errors)."""
