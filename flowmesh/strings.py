# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.strings``: string tensors hold ``bytes``."""

from flowmesh.ops.string_ops import (
    as_string,
    join,
    length,
    lower,
    reduce_join,
    regex_full_match,
    regex_replace,
    strip,
    substr,
    to_hash_bucket_fast,
    to_number,
    upper,
)
from flowmesh.ops.string_split_ops import split, unsorted_segment_join  # noqa: E402

__all__ = sorted(name for name in dir() if not name.startswith("_"))
