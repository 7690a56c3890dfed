"""fractional_max_pool / fractional_avg_pool: with integer ratios the windows are the same in
TensorFlow (values, sequences and gradients compared); fractional ratios (seeded,
deterministic) checked by finite differences and against a NumPy reference of the windows."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow


def _spec(kind, name, shape, ratio, pseudo=False, overlapping=False, oracle=True):
    def build(tf, x):
        fn = tf.nn.fractional_max_pool if kind == "max" else tf.nn.fractional_avg_pool
        return list(fn(x, ratio, pseudo, overlapping, deterministic=True, seed=1, seed2=2))
    x_input = Input(shape, kind="distinct") if kind == "max" else Input(shape)
    return OpSpec(f"fractional_{kind}_pool/{name}", build, (x_input,), oracle=oracle)


SPECS = [
    _spec("max", "ratio2", (2, 4, 6, 2), [1.0, 2.0, 2.0, 1.0]),
    _spec("max", "ratio2_pseudo_overlap", (1, 6, 4, 1), [1.0, 2.0, 2.0, 1.0], True, True),
    _spec("avg", "ratio2_overlap", (1, 4, 4, 2), [1.0, 2.0, 1.0, 1.0], overlapping=True),
    _spec("avg", "ratio3_pseudo", (1, 6, 9, 1), [1.0, 3.0, 3.0, 1.0], pseudo=True),
    _spec("max", "fractional", (1, 7, 5, 1), [1.0, 1.5, 1.4, 1.0], oracle=False),
    _spec("avg", "fractional_pseudo_overlap", (1, 7, 6, 2), [1.0, 1.6, 1.44, 1.0], True, True,
          oracle=False),
]
ORACLE = [s for s in SPECS if s.oracle]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE, ids=spec_ids(ORACLE))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


@pytest.mark.parametrize("pseudo", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
def test_windows_follow_the_returned_sequences(pseudo, overlapping):
    x = np.random.RandomState(0).randn(2, 11, 9, 3)
    with fm.Graph().as_default(), fm.Session() as sess:
        out, rows, cols = sess.run(fm.nn.fractional_max_pool(x, [1.0, 1.7, 1.3, 1.0], pseudo, overlapping))
    assert out.shape == (2, 6, 6, 3) and rows[0] == 0 and rows[-1] == 11 and cols[-1] == 9
    assert set(np.diff(rows)) <= {1, 2} and set(np.diff(cols)) <= {1, 2}
    for i in range(6):
        for j in range(6):
            r1 = rows[i + 1] + (1 if overlapping else 0)
            c1 = cols[j + 1] + (1 if overlapping else 0)
            window = x[:, rows[i]:min(r1, 11), cols[j]:min(c1, 9)]
            np.testing.assert_allclose(out[:, i, j], window.max(axis=(1, 2)))


def test_bad_ratio():
    with pytest.raises(InvalidArgumentError, match="batch and channel pooling"):
        fm.nn.fractional_avg_pool(np.zeros((1, 4, 4, 1), np.float32), [2.0, 2.0, 2.0, 1.0])
