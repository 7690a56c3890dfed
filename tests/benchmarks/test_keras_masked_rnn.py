"""benchmarks.keras_masked_rnn still runs on a tiny size (flowmesh masked vs unmasked)."""

from __future__ import annotations

import numpy as np

from benchmarks import harness, keras_masked_rnn


def test_masked_rnn_benchmark_runs_on_a_tiny_size() -> None:
    settings = harness.parse_settings("", keras_masked_rnn.PEERS,
                                      ["--repeats", "1", "--steps", "1", "--warmup", "1",
                                       "--threads", "1", "--peers", "flowmesh_unmasked"])
    records = keras_masked_rnn.run(settings, batch=4)
    assert records[0]["peer"] == "flowmesh_unmasked" and records[0]["flowmesh"] > 0


def test_data_is_right_padded_with_zeros() -> None:
    for ids, labels in keras_masked_rnn.make_data(8, batches=2):
        lengths = (ids != 0).sum(axis=1)
        assert np.all(lengths >= 8)
        assert np.all((np.arange(ids.shape[1])[None, :] < lengths[:, None]) == (ids != 0))
        assert labels.shape == (8, 1)
