"""TensorFlow's hash-table ops (what TensorFlow's SavedModels hold): a table from keys and
values or from a text file, lookups with a default, sizes, and the errors of an
uninitialized table, a conflicting second initialization and a missing file."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.core import dtypes
from flowmesh.ops._builders import make_op, make_tensor


def _table(key_dtype, value_dtype, name="table"):
    return make_tensor("HashTableV2", [], {"key_dtype": key_dtype, "value_dtype": value_dtype,
                                           "shared_name": "", "container": ""}, name=name)


def _find(table, keys, default):
    keys, default = tf.convert_to_tensor(keys), tf.convert_to_tensor(default)
    return make_tensor("LookupTableFindV2", [table, keys, default], {"Tin": keys.dtype, "Tout": default.dtype})


def test_table_from_keys_and_values():
    with tf.Graph().as_default(), tf.Session() as sess:
        table = _table(dtypes.string, dtypes.int64)
        init = make_op("LookupTableImportV2", [table, tf.constant(["a", "b"]), tf.constant([7, 9], tf.int64)])
        words = tf.placeholder(tf.string, [None, 2])
        found = _find(table, words, tf.constant(-1, tf.int64))
        size = make_tensor("LookupTableSizeV2", [table])
        assert found.shape.as_list() == [None, 2]
        with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
            sess.run(found, {words: [["a", "b"]]})
        sess.run(init)
        sess.run(init)                                     # the same entries again: fine
        got = sess.run(found, {words: np.array([[b"b", b"zz"], [b"a", b"a"]], object)})
        np.testing.assert_array_equal(got, [[9, -1], [7, 7]])
        assert sess.run(size) == 2
        other = make_op("InitializeTableV2", [table, tf.constant(["a"]), tf.constant([1], tf.int64)])
        with pytest.raises(tf.errors.FailedPreconditionError, match="already initialized"):
            sess.run(other)


def test_table_from_a_text_file(tmp_path):
    vocab = tmp_path / "vocab.tsv"
    vocab.write_text("apple\t3\nbanana\t5\n")
    with tf.Graph().as_default(), tf.Session() as sess:
        by_line = _table(dtypes.string, dtypes.int64, "by_line")
        by_column = _table(dtypes.string, dtypes.float32, "by_column")
        attrs = {"delimiter": "\t", "vocab_size": -1}
        path = tf.placeholder(tf.string, [])
        sess.run([make_op("InitializeTableFromTextFileV2", [by_line, path], dict(attrs, key_index=0, value_index=-1)),
                  make_op("InitializeTableFromTextFileV2", [by_column, path], dict(attrs, key_index=0, value_index=1))],
                 {path: str(vocab)})
        keys = tf.constant(["banana", "cherry", "apple"])
        np.testing.assert_array_equal(sess.run(_find(by_line, keys, tf.constant(-1, tf.int64))), [1, -1, 0])
        np.testing.assert_array_equal(sess.run(_find(by_column, keys, tf.constant(0.5))), [5.0, 0.5, 3.0])
        missing = _table(dtypes.string, dtypes.int64, "missing")
        with pytest.raises(tf.errors.NotFoundError, match="cannot read"):
            sess.run(make_op("InitializeTableFromTextFileV2", [missing, path], dict(attrs, key_index=-2,
                                                                                     value_index=-1)),
                     {path: str(tmp_path / "nope.txt")})
