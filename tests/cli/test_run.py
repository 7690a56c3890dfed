"""``flowmesh run``: local ranks with rank/size environment, prefixed output, failure policy."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time

import pytest

from flowmesh.cli.rank_job import resolve_command
from flowmesh.cli.run import launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = [sys.executable, "-m", "flowmesh.cli.main", "run"]

pytestmark = pytest.mark.multiprocess


def write(tmp_path, name: str, source: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def test_resolve_command_uses_this_interpreter():
    assert resolve_command(["python", "a.py", "-x"]) == [sys.executable, "a.py", "-x"]
    assert resolve_command(["train.py", "1"]) == [sys.executable, "train.py", "1"]
    assert resolve_command(["--", "echo", "hi"]) == ["echo", "hi"]
    with pytest.raises(ValueError, match="empty command"):
        resolve_command([])
    with pytest.raises(ValueError, match="-np must be at least 1"):
        launch(0, ["true"])


@pytest.mark.timeout(120)
def test_ranks_get_environment_and_prefixed_output(tmp_path):
    script = write(tmp_path, "env.py", """
        import os
        keys = ["FLOWMESH_RANK", "FLOWMESH_SIZE", "FLOWMESH_LOCAL_RANK", "FLOWMESH_LOCAL_SIZE"]
        print(" ".join(os.environ[k] for k in keys), os.environ["FLOWMESH_RENDEZVOUS"])
    """)
    out = subprocess.run(CLI + ["-np", "3", "python", script], capture_output=True, text=True,
                         timeout=100, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = sorted(out.stdout.splitlines())
    assert len(lines) == 3
    addresses = set()
    for rank, line in enumerate(lines):
        match = re.fullmatch(rf"\[{rank}\] {rank} 3 {rank} 3 (127\.0\.0\.1:\d+)", line)
        assert match, line
        addresses.add(match.group(1))
    assert len(addresses) == 1  # one rendezvous store for the job


@pytest.mark.timeout(120)
def test_a_failing_rank_stops_the_others_with_its_status(tmp_path):
    pid_file = tmp_path / "sleeper.pid"
    script = write(tmp_path, "fail.py", f"""
        import os, sys, time
        if os.environ["FLOWMESH_RANK"] == "1":
            print("rank 1 fails", file=sys.stderr)
            sys.exit(3)
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(60)
    """)
    start = time.monotonic()
    result = launch(2, [script], capture=True, failure_grace=0.5, timeout=90)
    assert result.returncode == 3 and result.failed_rank == 1
    assert time.monotonic() - start < 30
    assert (1, "stderr", "rank 1 fails") in result.output
    assert result.returncodes[0] is not None  # rank 0 was terminated, not left running
    sleeper = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(sleeper, 0)


@pytest.mark.timeout(120)
def test_timeout_kills_every_rank(tmp_path):
    script = write(tmp_path, "hang.py", "import time\ntime.sleep(60)\n")
    result = launch(2, [sys.executable, script], capture=True, timeout=1.0)
    assert result.returncode == 124
    assert all(code is not None for code in result.returncodes)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_allreduce_mnist_example_trains_on_two_ranks():
    example = os.path.join(ROOT, "examples", "allreduce_mnist.py")
    out = subprocess.run(CLI + ["-np", "2", example, "--steps", "150"], capture_output=True,
                         text=True, timeout=220, cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-2000:]
    finals = re.findall(r"^\[(\d)\] rank \d/2: test accuracy ([\d.]+)\s+weights checksum ([\d.]+)",
                        out.stdout, re.M)
    assert sorted(rank for rank, _, _ in finals) == ["0", "1"]
    assert all(float(acc) >= 0.95 for _, acc, _ in finals)
    assert finals[0][2] == finals[1][2]  # both ranks hold the same weights


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_lr_scaling_example_shows_the_linear_scaling_rule():
    example = os.path.join(ROOT, "examples", "lr_scaling.py")
    out = subprocess.run(CLI + ["-np", "2", example, "--epochs", "3"], capture_output=True,
                         text=True, timeout=280, cwd=ROOT, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-2000:]
    gaps = re.search(r"same lr ([+-][\d.]+), linearly scaled lr ([+-][\d.]+)", out.stdout)
    assert gaps, out.stdout
    same_lr, scaled = float(gaps.group(1)), float(gaps.group(2))
    assert abs(scaled) < same_lr / 2  # the scaled run tracks the baseline, the other lags
