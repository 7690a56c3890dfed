"""tf.feature_column against tf.compat.v1.feature_column: the same columns over the same dense
inputs give the same variables (names, shapes), input_layer / linear_model outputs (with the
same weights loaded into both) and Example parsing specs."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

FEATURES = {
    "age": np.array([[23.0], [51.0], [35.0]], np.float32),
    "xy": np.array([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]], np.float32),
    "city": np.array([["paris", "rome"], ["oslo", ""], ["lima", "paris"]], object),
    "code": np.array([[3, 7], [11, -1], [0, 2]], np.int64),
    "word": np.array([["a"], ["bb"], ["a long word that is long enough to pass 64 bytes for farmhash"]],
                     object),
    "score": np.array([[0.5, 2.0], [1.5, 0.0], [3.0, 1.0]], np.float32),
}


def _columns(tf, vocab_file):
    fc = tf.feature_column
    age = fc.numeric_column("age")
    xy = fc.numeric_column("xy", shape=(2,), normalizer_fn=lambda x: x * 2.0)
    age_b = fc.bucketized_column(age, [18.0, 30.0, 40.0])
    city = fc.categorical_column_with_vocabulary_list("city", ["paris", "rome", "lima"],
                                                      num_oov_buckets=2)
    city_file = fc.categorical_column_with_vocabulary_file("city", vocab_file, vocabulary_size=2)
    code = fc.categorical_column_with_identity("code", 8, default_value=0)
    code_vocab = fc.categorical_column_with_vocabulary_list("code", [7, 3, 2], dtype=tf.int64)
    word = fc.categorical_column_with_hash_bucket("word", 50)
    code_hash = fc.categorical_column_with_hash_bucket("code", 13, dtype=tf.int64)
    weighted = fc.weighted_categorical_column(code, "score")
    cross = fc.crossed_column(["city", age_b, code_vocab], 97)
    raw_cross = fc.crossed_column(["word", "city"], 31)
    dense = [age, xy, age_b,
             fc.embedding_column(city, 3),
             fc.embedding_column(word, 2, combiner="sqrtn"),
             fc.embedding_column(weighted, 4, combiner="sum"),
             fc.indicator_column(city_file),
             fc.indicator_column(code_hash), fc.indicator_column(cross),
             fc.indicator_column(raw_cross),
             fc.indicator_column(weighted)]
    linear = [age, xy, age_b, city, word, weighted, cross, code_vocab]
    return dense, linear


def _run(tf, vocab_file, config=None):
    dense, linear = _columns(tf, vocab_file)
    with tf.Graph().as_default() as g:
        feats = {k: tf.constant(v) for k, v in FEATURES.items()}
        net = tf.feature_column.input_layer(feats, dense)
        logits = tf.feature_column.linear_model(feats, linear, units=2)
        variables = [(v.op.name, tuple(v.shape.as_list())) for v in tf.global_variables()]
        spec = tf.feature_column.make_parse_example_spec(dense + linear)
        with tf.Session(graph=g, config=config) as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            rng = np.random.default_rng(3)
            for v in sorted(tf.global_variables(), key=lambda v: v.op.name):
                v.load(rng.standard_normal(v.shape.as_list()).astype(np.float32), sess)
            out = sess.run([net, logits])
    spec = {k: (type(s).__name__, tuple(getattr(s, "shape", ())), s.dtype.name) for k, s in spec.items()}
    return out, variables, spec


def test_matches_tensorflow(tmp_path):
    tf1 = require_tensorflow()
    vocab = tmp_path / "cities.txt"
    vocab.write_text("oslo\nrome\nlima\n")
    ours, our_vars, our_spec = _run(fm, str(vocab))
    theirs, their_vars, their_spec = _run(tf1, str(vocab), session_config(tf1))
    assert our_vars == their_vars
    assert our_spec == their_spec
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_hash_bucket_fast_matches_tensorflow():
    tf1 = require_tensorflow()
    words = [b"", b"a", b"hello world", b"x" * 40, b"y" * 200, "héllo".encode()]
    with tf1.Session(config=session_config(tf1)) as sess:
        theirs = sess.run(tf1.strings.to_hash_bucket_fast(words, 1000003))
    with fm.Session() as sess:
        ours = sess.run(fm.strings.to_hash_bucket_fast(words, 1000003))
    np.testing.assert_array_equal(ours, theirs)


def test_bad_input_names_the_column_and_key():
    fc = fm.feature_column
    city = fc.categorical_column_with_vocabulary_list("city", ["a", "b"])
    with fm.Graph().as_default():
        with pytest.raises(fm.errors.InvalidArgumentError, match="'city'.*missing.*'age'"):
            fc.input_layer({"age": fm.constant([[1.0]])}, [fc.indicator_column(city)])
        with pytest.raises(fm.errors.InvalidArgumentError, match="embedding_column or indicator_column"):
            fc.input_layer({"city": fm.constant([["a"]])}, [city])
        with pytest.raises(fm.errors.InvalidArgumentError, match="dtype string, got int64"):
            fc.input_layer({"city": fm.constant([[1]], fm.int64)}, [fc.indicator_column(city)])
    with pytest.raises(fm.errors.InvalidArgumentError, match="duplicates"):
        fc.categorical_column_with_vocabulary_list("c", ["a", "a"])
    with pytest.raises(fm.errors.InvalidArgumentError, match="sorted"):
        fc.bucketized_column(fc.numeric_column("x"), [2.0, 1.0])


def test_identity_out_of_range_fails_at_run_time_naming_the_column():
    fc = fm.feature_column
    with fm.Graph().as_default():
        net = fc.input_layer({"c": fm.constant([[1], [9]], fm.int64)},
                             [fc.indicator_column(fc.categorical_column_with_identity("c", 4))])
        with fm.Session() as sess, pytest.raises(fm.errors.InvalidArgumentError, match="'c'"):
            sess.run(net)


def test_embedding_trains_through_input_layer():
    fc = fm.feature_column
    col = fc.embedding_column(fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c"]), 2)
    with fm.Graph().as_default():
        net = fc.input_layer({"w": fm.constant([["a", "b"], ["c", ""]])}, [col])
        loss = fm.reduce_sum(fm.square(net - 1.0))
        train = fm.train.GradientDescentOptimizer(0.5).minimize(loss)
        with fm.Session() as sess:
            sess.run(fm.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(20):
                sess.run(train)
            assert sess.run(loss) < 1e-3 < first
