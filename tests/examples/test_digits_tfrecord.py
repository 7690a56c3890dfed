"""examples/digits_tfrecord.py: shards written once, training from tf.data, and under launch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from flowmesh.testing.cluster import REPO, child_env


def test_single_process_trains_from_the_shards(example, tmp_path):
    dt = example("digits_tfrecord")
    data_dir = str(tmp_path / "data")
    result = dt.main(["--data_dir", data_dir, "--shards", "3"])
    assert result["accuracy"] >= dt.STATED_ACCURACY, result
    shards = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert shards == ["test.tfrecord"] + [f"train-0000{i}-of-00003.tfrecord" for i in range(3)]
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "data").iterdir()}
    dt.write_shards(data_dir, 3)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "data").iterdir()} == before


@pytest.mark.slow
@pytest.mark.multiprocess
@pytest.mark.timeout(200)
def test_launch_each_worker_reads_its_own_shards(example, tmp_path):
    dt = example("digits_tfrecord")
    cmd = [sys.executable, "-m", "flowmesh.cli.main", "launch", "--ps", "1", "--workers", "2",
           "--flags", "never", "examples/digits_tfrecord.py", "--data_dir", str(tmp_path), "--json"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=170, cwd=REPO,
                            env=child_env())
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    for index in (0, 1):
        assert f"auto-shard: FILE policy: worker {index} of 2 reads 2 of 4 files" in out, out[-3000:]
    chief = [json.loads(line.partition("] ")[2]) for line in result.stdout.splitlines()
             if line.startswith("[worker:0] {")][0]
    assert chief["accuracy"] >= dt.STATED_ACCURACY and chief["global_step"] >= 600
