"""tf.io.SparseFeature in parse_example / parse_single_example against TensorFlow: one and two
index keys, unsorted indices, with a requested helper key kept."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def _example(module, ix, iy, values):
    ex = module.train.Example()
    ex.features.feature["ix"].int64_list.value.extend(ix)
    ex.features.feature["iy"].int64_list.value.extend(iy)
    ex.features.feature["val"].float_list.value.extend(values)
    return ex.SerializeToString()


def _features(module):
    return {"one": module.io.SparseFeature("ix", "val", module.float32, 10),
            "two": module.io.SparseFeature(["ix", "iy"], "val", module.float32, [10, 4]),
            "ix": module.io.VarLenFeature(module.int64)}


@pytest.mark.parametrize("single", [False, True])
def test_matches_tensorflow(single):
    tf1 = require_tensorflow()
    results = []
    for module, config in ((tf, None), (tf1, session_config(tf1))):
        records = [_example(module, [7, 2, 5], [0, 3, 1], [1.5, 2.5, 3.5]), _example(module, [1], [2], [9.0])]
        with module.Graph().as_default(), module.Session(config=config) as sess:
            if single:
                parsed = module.io.parse_single_example(records[0], _features(module))
            else:
                parsed = module.io.parse_example(np.array(records, dtype=object), _features(module))
            results.append(sess.run(parsed))
    ours, theirs = results
    assert sorted(ours) == sorted(theirs) == ["ix", "one", "two"]
    for key in ours:
        for field in ("indices", "values", "dense_shape"):
            np.testing.assert_array_equal(getattr(ours[key], field), getattr(theirs[key], field))


def test_conflicting_specs():
    with pytest.raises(ValueError, match="conflicts"):
        tf.io.parse_example([b""], {"s": tf.io.SparseFeature("ix", "val", tf.float32, 3),
                                    "ix": tf.io.VarLenFeature(tf.float32)})
