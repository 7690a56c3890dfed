"""fixed_unigram_candidate_sampler / learned_unigram_candidate_sampler: expected counts equal
TensorFlow's (non-unique draws, where they do not depend on the random draws; the learned
sampler's counts over consecutive runs), frequencies follow the distorted counts, reserved
ids and shards, unique draws."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

_TRUE = np.array([[0, 3], [2, 5], [5, 5]], np.int64)
_COUNTS = [5.0, 1.0, 0.0, 3.0, 8.0, 2.0]


def _fixed(t, vocab_file="", **kw):
    args = dict(num_true=2, num_sampled=4, unique=False, range_max=6, seed=3)
    args.update(kw)
    if vocab_file:
        return t.nn.fixed_unigram_candidate_sampler(_TRUE, vocab_file=vocab_file, **args)
    return t.nn.fixed_unigram_candidate_sampler(_TRUE, unigrams=_COUNTS[:6 - args.get(
        "num_reserved_ids", 0)], **args)


def _run(t, build, runs=1, config=None):
    with t.Graph().as_default(), t.Session(config=config) as sess:
        out = build(t)
        return [sess.run(out) for _ in range(runs)]


CASES = [
    ("fixed", lambda t: _fixed(t)),
    ("fixed_distortion", lambda t: _fixed(t, distortion=0.5)),
    ("fixed_reserved", lambda t: _fixed(t, num_reserved_ids=2)),
    ("learned", lambda t: t.random.learned_unigram_candidate_sampler(_TRUE, 2, 3, False, 7, seed=1)),
]


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_true_expected_counts_equal_tensorflows(name, build):
    tf1 = require_tensorflow()
    ours = _run(tf, build, runs=3)
    theirs = _run(tf1, build, runs=3, config=session_config(tf1))
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.true_expected_count, b.true_expected_count, rtol=1e-6)
        assert a.sampled_candidates.dtype == b.sampled_candidates.dtype


def test_vocab_file_shards_and_frequencies(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("".join(f"w{i},{c}\n" for i, c in enumerate(_COUNTS)))
    tf1 = require_tensorflow()
    build = lambda t: _fixed(t, vocab_file=str(vocab), num_sampled=4000)  # noqa: E731
    ours = _run(tf, build)[0]
    theirs = _run(tf1, build, config=session_config(tf1))[0]
    np.testing.assert_allclose(ours.true_expected_count, theirs.true_expected_count, rtol=1e-6)
    freq = np.bincount(ours.sampled_candidates, minlength=6) / 4000
    np.testing.assert_allclose(freq, np.array(_COUNTS) / sum(_COUNTS), atol=0.03)
    shard = _run(tf, lambda t: _fixed(t, vocab_file=str(vocab), num_shards=2, shard=1,
                                      num_sampled=3000, range_max=6))[0]
    assert set(shard.sampled_candidates.tolist()) <= {0, 1, 2}  # indices into the shard's 3 words
    np.testing.assert_allclose(np.bincount(shard.sampled_candidates, minlength=3) / 3000,
                               [1 / 6, 3 / 6, 2 / 6], atol=0.04)


def test_unique_draws_and_errors():
    out = _run(tf, lambda t: _fixed(t, unique=True, num_sampled=4))[0]
    assert len(set(out.sampled_candidates.tolist())) == 4 and 2 not in out.sampled_candidates
    assert (out.sampled_expected_count <= 1.0).all()
    with pytest.raises(InvalidArgumentError, match="exactly one of vocab_file and unigrams"):
        tf.nn.fixed_unigram_candidate_sampler(_TRUE, 2, 2, False, 6)
    with pytest.raises(InvalidArgumentError, match="must equal range_max"):
        tf.nn.fixed_unigram_candidate_sampler(_TRUE, 2, 2, False, 9, unigrams=_COUNTS)
