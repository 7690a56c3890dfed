"""embedding_lookup_sparse / safe_embedding_lookup_sparse against TensorFlow: values and
(IndexedSlices) gradients for each combiner, weights, partitioned params, pruned ids and
weights, empty rows, default ids and rank-3 ids."""

from __future__ import annotations

import numpy as np
import pytest

from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

_IDX = [[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]]
_IDS = [1, 4, 2, 4, 0, 4]
_IDX3 = [[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 1, 2]]
_IDS3 = [3, -1, 2, 0, 5]


def _sp(tf, values, indices=_IDX, shape=(4, 3)):
    return tf.SparseTensor(indices, values, list(shape))


def _lookup(combiner, weighted, parts=1, strategy="mod"):
    def build(tf, *args):
        params, w = list(args[:parts]), (args[parts] if weighted else None)
        weights = _sp(tf, w) if weighted else None
        return tf.nn.embedding_lookup_sparse(params if parts > 1 else params[0], _sp(tf, _IDS), weights,
                                             partition_strategy=strategy, combiner=combiner)
    inputs = [Input((3, 2)) for _ in range(parts)] if parts > 1 else [Input((6, 2))]
    if weighted:
        inputs.append(Input((6,), low=0.5, high=2.0))
    name = f"embedding_lookup_sparse/{combiner}{'_weighted' if weighted else ''}{'_parts' if parts > 1 else ''}"
    return OpSpec(name, build, tuple(inputs), dynamic=False)


def _safe(name, combiner, weighted, default_id=None, rank3=False):
    def build(tf, params, *w):
        idx, ids, shape = (_IDX3, _IDS3, (2, 2, 3)) if rank3 else (_IDX, [1, -3, 2, 4, 0, 4], (5, 3))
        weights = _sp(tf, w[0], idx, shape) if weighted else None
        return tf.nn.safe_embedding_lookup_sparse(params, _sp(tf, ids, idx, shape), weights,
                                                  combiner=combiner, default_id=default_id)
    values = np.array([1.0, -0.5, 0.7, 1.3, 0.9, 0.4][:5 if rank3 else 6], np.float32)
    inputs = [Input((6, 2))] + ([Input(values.shape, maker=lambda rng: values)] if weighted else [])
    return OpSpec(f"safe_embedding_lookup_sparse/{name}", build, tuple(inputs), dynamic=False)


SPECS = [
    _lookup("mean", False), _lookup("sum", False), _lookup("sqrtn", False),
    _lookup("mean", True), _lookup("sum", True), _lookup("sqrtn", True),
    _lookup("sum", True, parts=2), _lookup("mean", False, parts=2, strategy="div"),
    _safe("mean_pruned_empty_rows", "mean", True),
    _safe("sum_default_id", "sum", True, default_id=5),
    _safe("sqrtn_unweighted", "sqrtn", False),
    _safe("rank3", "mean", True, rank3=True),
]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())
