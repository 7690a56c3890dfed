"""benchmarks.lstm_kernel_variants still runs, and every variant computes the same gradients."""

from __future__ import annotations

from benchmarks import lstm_kernel_variants


def test_variants_agree_and_the_benchmark_runs() -> None:
    lstm_kernel_variants.check_agreement()
    records = lstm_kernel_variants.main(["--repeats", "1", "--steps", "1", "--warmup", "0", "--quiet"])
    assert [r["peer"] for r in records] == list(lstm_kernel_variants.PEERS)
    assert all(r["flowmesh"] > 0 and r["ratio"] > 0 for r in records)
