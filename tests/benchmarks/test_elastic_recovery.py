"""benchmarks/elastic_recovery.py: the summary arithmetic and the process-tree cleanup (the
real kills are timed by `python -m benchmarks.elastic_recovery`; tests/collective/elastic
runs the same recoveries for correctness)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from benchmarks import elastic_recovery


def test_summary_takes_medians_and_keeps_every_total():
    runs = [{"detect": d, "total": t, "redone": r} for d, t, r in ((0.1, 0.2, 2), (0.3, 0.5, 4), (0.2, 0.1, 3))]
    summary = elastic_recovery.summarize("flowmesh", runs)
    assert summary == {"kind": "flowmesh", "n": 3, "detect": 0.2, "total": 0.2, "min_total": 0.1,
                       "totals": [0.2, 0.5, 0.1], "redone": 3}


def test_descendants_finds_grandchildren_that_never_reported():
    parent = subprocess.Popen(["bash", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        deadline = time.monotonic() + 10
        found: set[int] = set()
        while len(found) < 2 and time.monotonic() < deadline:
            found = elastic_recovery._descendants(parent.pid)
            time.sleep(0.05)
        assert len(found) == 2 and parent.pid not in found
    finally:
        for pid in elastic_recovery._descendants(parent.pid):
            os.kill(pid, signal.SIGKILL)
        parent.kill()
        parent.wait(10)
