# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.strings``: string tensors hold ``bytes``."""

from flowmesh.ops.print_ops import string_format as format  # noqa: A004 - TF's name
from flowmesh.ops.string_hash_ops import to_hash_bucket, to_hash_bucket_strong
from flowmesh.ops.string_ngrams_ops import ngrams
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
from flowmesh.ops.unicode_ops import (
    bytes_split,
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_encode,
    unicode_split,
    unicode_split_with_offsets,
    unicode_transcode,
)
from flowmesh.unsupported import unsupported as _unsupported

unicode_script = _unsupported("strings.unicode_script", "it needs ICU's script property table "
                              "(UScriptCode values), which flowmesh does not bundle")

__all__ = sorted(name for name in dir() if not name.startswith("_"))
