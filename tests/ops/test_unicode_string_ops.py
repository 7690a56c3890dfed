"""tf.strings unicode_* / bytes_split / ngrams / to_hash_bucket(_strong) / format against
TensorFlow (values and dtypes), and the RaggedTensor limits named in their errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

_TEXT = "h\u00e9llo \u4e16\u754c \U0001f600!".encode()
_BAD = b"ab\xff\xfec\xe4\xb8d\x01"
_WORDS = [[b"a", b"b", b"c", b"d"], [b"e", b"f", b"g", b"h"]]
_HASHED = [b"", b"a", b"hello world", b"0123456789abcdefX", "\u00e9t\u00e9".encode()]


def _flat(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


CASES = [
    ("decode", lambda t: t.strings.unicode_decode(_TEXT, "UTF-8")),
    ("decode_offsets", lambda t: t.strings.unicode_decode_with_offsets(_TEXT, "UTF-8")),
    ("decode_replace", lambda t: t.strings.unicode_decode_with_offsets(
        _BAD, "UTF-8", replace_control_characters=True)),
    ("decode_ignore", lambda t: t.strings.unicode_decode(_BAD, "UTF-8", errors="ignore")),
    ("decode_utf16", lambda t: t.strings.unicode_decode_with_offsets(
        "a\U0001f600b".encode("utf-16-be"), "UTF-16-BE")),
    ("split", lambda t: t.strings.unicode_split(_TEXT, "UTF-8")),
    ("split_offsets", lambda t: t.strings.unicode_split_with_offsets(_BAD, "UTF-8",
                                                                     replacement_char=63)),
    ("bytes_split", lambda t: t.strings.bytes_split(_TEXT)),
    ("encode_2d", lambda t: t.strings.unicode_encode([[104, 233, 0x1F600], [65, -5, 66]], "UTF-8")),
    ("encode_1d_utf32", lambda t: t.strings.unicode_encode([104, 105, 0x4E16], "UTF-32-BE")),
    ("encode_ignore", lambda t: t.strings.unicode_encode([[72, 0x110000, 73]], "UTF-8",
                                                         errors="ignore")),
    ("transcode", lambda t: t.strings.unicode_transcode([[_TEXT, _BAD]], "UTF-8", "UTF-16-BE")),
    ("transcode_control", lambda t: t.strings.unicode_transcode(
        [_BAD], "UTF-8", "UTF-8", replacement_char=42, replace_control_characters=True)),
    ("ngrams_1d", lambda t: t.strings.ngrams(_WORDS[0], 2)),
    ("ngrams_2d_widths", lambda t: t.strings.ngrams(_WORDS, [1, 3], separator="_")),
    ("ngrams_pad", lambda t: t.strings.ngrams(_WORDS, 3, pad_values=("<", ">"))),
    ("ngrams_pad_width", lambda t: t.strings.ngrams(_WORDS, 3, pad_values="#", padding_width=1)),
    ("ngrams_short", lambda t: t.strings.ngrams([b"x", b"y"], 4, preserve_short_sequences=True)),
    ("ngrams_short_pad", lambda t: t.strings.ngrams([b"x", b"y"], 5, pad_values="P",
                                                    padding_width=1, preserve_short_sequences=True)),
    ("hash_bucket", lambda t: t.strings.to_hash_bucket(_HASHED, 1000)),
    ("hash_bucket_top", lambda t: t.string_to_hash_bucket(_HASHED, 7)),
    ("hash_bucket_strong", lambda t: t.strings.to_hash_bucket_strong(_HASHED, 1 << 30,
                                                                     [12345, -(2 ** 62) - 7])),
    ("format", lambda t: t.strings.format("a {} b {} c {}", [t.constant([[1, 2], [3, 4]]),
                                                              t.constant("x"), t.range(10)])),
]


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(name, build):
    tf1 = require_tensorflow()
    results = []
    for module, config in ((tf, None), (tf1, session_config(tf1))):
        with module.Graph().as_default(), module.Session(config=config) as sess:
            results.append(sess.run(_flat(build(module))))
    for ours, theirs in zip(*results):
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours, theirs)
        assert ours.tolist() == theirs.tolist()


def test_ragged_results_and_bad_arguments_say_why():
    with pytest.raises(UnimplementedError, match="RaggedTensor.*scalar strings"):
        tf.strings.unicode_decode([_TEXT], "UTF-8")
    with pytest.raises(UnimplementedError, match="ICU"):
        tf.strings.unicode_script([65])
    with pytest.raises(InvalidArgumentError, match="errors must be one of"):
        tf.strings.unicode_transcode(_TEXT, "UTF-8", "UTF-8", errors="loud")
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="invalid utf-8 bytes"):
            sess.run(tf.strings.unicode_decode(_BAD, "UTF-8", errors="strict"))
    with pytest.raises(ValueError, match="pad_values must be provided"):
        tf.strings.ngrams(_WORDS, 2, padding_width=1)
