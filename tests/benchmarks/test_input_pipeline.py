"""benchmarks/input_pipeline.py still runs (tiny sizes; speed is measured elsewhere)."""

from __future__ import annotations

from benchmarks import harness, input_pipeline

TINY = ["--repeats", "1", "--steps", "2", "--warmup", "1", "--threads", "1", "--quiet"]


def test_input_pipeline_runs_on_a_tiny_file(tmp_path) -> None:
    path = str(tmp_path / "tiny.tfrecord")
    input_pipeline.write_records(path, 300, 784)
    settings = harness.parse_settings("", input_pipeline.PEERS, TINY + ["--peers", "raw_read"])
    records = input_pipeline.run_pipeline(settings, path)
    assert [r["peer"] for r in records] == ["raw_read"] and records[0]["flowmesh"] > 0
    settings = harness.parse_settings("", input_pipeline.PEERS, TINY + ["--peers", ""])
    training = input_pipeline.run_training(settings, str(tmp_path / "digits.tfrecord"))
    assert training[0]["peer"] == "from_memory" and training[0]["ratio"] > 0
    assert training[1]["peer"] == "from_memory" and training[1]["ratio"] > 0  # the TF1 queue pipeline
