"""examples/digits_queues.py: TF1 queue input from the TFRecord shards, ending after --epochs."""

from __future__ import annotations


def test_trains_from_queues_and_stops_after_the_epochs(example, tmp_path):
    dq = example("digits_queues")
    result = dq.main(["--data_dir", str(tmp_path), "--shards", "3", "--epochs", "20"])
    assert result["steps"] == 1437 * 20 // 64  # every record 20 times; the partial batch dropped
    assert result["accuracy"] >= 0.93, result  # 0.978 here; the stated 0.95 with room for other CPUs
