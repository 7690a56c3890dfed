"""Feature columns over tf.train.Examples parsed with make_parse_example_spec (so the
categorical features arrive as SparseTensors), against TensorFlow on the same bytes."""

from __future__ import annotations

import numpy as np

import flowmesh as fm
from flowmesh.protos.example import Example
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

ROWS = [
    {"age": [23.0], "city": [b"paris", b"rome", b""], "code": [3, 7], "w": [0.5, 2.0]},
    {"age": [51.0], "city": [], "code": [11], "w": [1.5]},
    {"age": [35.0], "city": [b"lima"], "code": [], "w": []},
]


def _serialized() -> list[bytes]:
    out = []
    for row in ROWS:
        ex = Example()
        ex.features.feature["age"].float_list.value.extend(row["age"])
        ex.features.feature["city"].bytes_list.value.extend(row["city"])
        ex.features.feature["code"].int64_list.value.extend(row["code"])
        ex.features.feature["w"].float_list.value.extend(row["w"])
        out.append(ex.SerializeToString())
    return out


def _run(tf, config=None):
    fc = tf.feature_column
    age = fc.numeric_column("age")
    city = fc.categorical_column_with_vocabulary_list("city", ["paris", "rome", "lima"], num_oov_buckets=1)
    code = fc.categorical_column_with_identity("code", 12)
    weighted = fc.weighted_categorical_column(code, "w")
    cross = fc.crossed_column(["city", fc.bucketized_column(age, [30.0])], 17)
    dense = [age, fc.embedding_column(city, 2), fc.indicator_column(weighted), fc.indicator_column(cross),
             fc.indicator_column(fc.categorical_column_with_hash_bucket("city", 5))]
    linear = [age, city, weighted, cross]
    with tf.Graph().as_default():
        spec = fc.make_parse_example_spec(dense + linear)
        features = tf.parse_example(tf.constant(_serialized()), spec)
        net = fc.input_layer(features, dense)
        logits = fc.linear_model(features, linear)
        with tf.Session(config=config) as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            rng = np.random.default_rng(5)
            for v in sorted(tf.global_variables(), key=lambda v: v.op.name):
                v.load(rng.standard_normal(v.shape.as_list()).astype(np.float32), sess)
            return sess.run([net, logits])


def test_parsed_examples_match_tensorflow():
    tf1 = require_tensorflow()
    ours = _run(fm)
    theirs = _run(tf1, session_config(tf1))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
