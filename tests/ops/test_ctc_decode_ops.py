"""CTC decoders and label helpers against TensorFlow: greedy and beam-search paths and scores,
collapse_repeated, ctc_unique_labels."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

_RNG = np.random.RandomState(7)
_LOGITS = (_RNG.randn(6, 3, 4) * 2).astype(np.float32)
_LENGTHS = np.array([6, 4, 0], np.int32)
_LONGER = np.array([6, 4, 3], np.int32)  # several paths need a step (as in TensorFlow)
_LABELS = np.array([[1, 1, 2, 2, 3], [4, 4, 4, 0, 0], [5, 6, 6, 5, 5]], np.int32)
_LABEL_LENGTHS = np.array([5, 3, 4], np.int32)


def _flatten(result):
    out = []
    for item in (result if isinstance(result, (list, tuple)) else [result]):
        if isinstance(item, (list, tuple)):
            out.extend(_flatten(item))
        elif hasattr(item, "indices"):
            out.extend([item.indices, item.values, item.dense_shape])
        else:
            out.append(item)
    return out


CASES = [
    ("greedy", lambda t: t.nn.ctc_greedy_decoder(_LOGITS, _LENGTHS)),
    ("greedy_no_merge", lambda t: t.nn.ctc_greedy_decoder(_LOGITS, _LENGTHS, merge_repeated=False)),
    ("greedy_blank0", lambda t: t.nn.ctc_greedy_decoder(_LOGITS.astype(np.float64), _LENGTHS,
                                                        blank_index=0)),
    ("beam_top1", lambda t: t.nn.ctc_beam_search_decoder(_LOGITS, _LENGTHS, beam_width=4)),
    ("beam_top3_merge", lambda t: t.nn.ctc_beam_search_decoder(_LOGITS, _LONGER, beam_width=5,
                                                               top_paths=3)),
    ("beam_v2_top2", lambda t: t.nn.ctc_beam_search_decoder_v2(_LOGITS * 0.3, _LONGER,
                                                               beam_width=3, top_paths=2)),
    ("beam_wide", lambda t: t.nn.ctc_beam_search_decoder_v2(_LOGITS, _LONGER, top_paths=4)),
    ("collapse_repeated", lambda t: t.nn.collapse_repeated(_LABELS, _LABEL_LENGTHS)),
    ("unique_labels", lambda t: t.nn.ctc_unique_labels(_LABELS)),
]


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_matches_tensorflow(name, build):
    tf1 = require_tensorflow()
    results = []
    for module, config in ((tf, None), (tf1, session_config(tf1))):
        with module.Graph().as_default(), module.Session(config=config) as sess:
            results.append(sess.run(_flatten(build(module))))
    for ours, theirs in zip(*results):
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours, theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_errors():
    with pytest.raises(InvalidArgumentError, match="top_paths <= beam_width"):
        tf.nn.ctc_beam_search_decoder(_LOGITS, _LENGTHS, beam_width=2, top_paths=3)
    with tf.Graph().as_default(), tf.Session() as sess:
        decoded, _ = tf.nn.ctc_greedy_decoder(_LOGITS, [7, 1, 1])
        with pytest.raises(InvalidArgumentError, match="sequence_length <= max_time"):
            sess.run(decoded[0].values)
        decoded, _ = tf.nn.ctc_beam_search_decoder(_LOGITS, _LENGTHS, top_paths=2)
        with pytest.raises(InvalidArgumentError, match="less leaves in the beam search"):
            sess.run(decoded[0].values)
