"""tf.io.parse_sequence_example against TensorFlow: batched context (dense and sparse), padded
dense feature lists with their lengths, sparse feature lists."""

from __future__ import annotations

import numpy as np

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _record(module, label, tokens, scores, tags):
    ex = module.train.SequenceExample()
    ex.context.feature["label"].int64_list.value.append(label)
    ex.context.feature["tags"].bytes_list.value.extend(tags)
    for t in tokens:
        ex.feature_lists.feature_list["tokens"].feature.add().int64_list.value.append(t)
    for s in scores:
        ex.feature_lists.feature_list["scores"].feature.add().float_list.value.extend(s)
    return ex.SerializeToString()


def _specs(module, default):
    context = {"label": module.io.FixedLenFeature([], module.int64),
               "tags": module.io.VarLenFeature(module.string)}
    sequence = {"tokens": module.io.FixedLenSequenceFeature([], module.int64, default_value=default),
                "scores": module.io.VarLenFeature(module.float32)}
    return context, sequence


def test_matches_tensorflow():
    tf1 = require_tensorflow()
    records = np.array([_record(tf1, 1, [4, 5, 6], [[0.5], [1.5, 2.5]], [b"a"]),
                        _record(tf1, 2, [7], [], []),
                        _record(tf1, 3, [8, 9], [[3.0, 4.0, 5.0]], [b"b", b"c"])], dtype=object)
    results = []
    for module, config in ((tf, None), (tf1, session_config(tf1))):
        with module.Graph().as_default(), module.Session(config=config) as sess:
            context, lists, lengths = module.io.parse_sequence_example(records, *_specs(module, None))
            results.append(sess.run([context["label"], context["tags"], lists["tokens"],
                                     lists["scores"], lengths["tokens"]]))
    ours, theirs = results
    for a, b in zip(ours, theirs):
        if hasattr(b, "indices"):
            for x, y in zip((a.indices, a.values, a.dense_shape), (b.indices, b.values, b.dense_shape)):
                np.testing.assert_array_equal(x, y)
        else:
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_array_equal(a, b)
