"""``flowmesh run`` elastic mode: flags, environment and the launcher's failure policy.

The scripts here are plain Python (they never join the rendezvous), so these tests check
the launcher alone, fast; tests/collective/elastic covers real elastic training.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from flowmesh.cli.elastic_job import ElasticJob, ElasticPolicy
from flowmesh.cli.main import main
from flowmesh.cli.run import launch
from flowmesh.collective.backends.torch_dist import connect_store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = [sys.executable, "-m", "flowmesh.cli.main", "run"]

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(60)]


def write(tmp_path, name: str, source: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return str(path)


def stderr_lines(result) -> list[str]:
    return [line for _, stream, line in result.output if stream == "stderr"]


def test_bounds_are_checked_with_a_clear_message(capsys, monkeypatch):
    with pytest.raises(ValueError, match="need 1 <= min-np <= max-np"):
        ElasticPolicy(3, 2)
    with pytest.raises(ValueError, match="-np 4 must lie between --min-np 1 and --max-np 3"):
        launch(4, ["true"], elastic=ElasticPolicy(1, 3))
    assert main(["run", "--min-np", "3", "-np", "2", "true"]) == 2
    assert "-np 2 must lie between --min-np 3 and --max-np 3" in capsys.readouterr().err
    monkeypatch.setenv("FLOWMESH_CONNECT_TIMEOUT_S", "0.5")
    assert main(["run", "--join", "127.0.0.1:1", "-np", "1", "true"]) == 2
    assert "--join 127.0.0.1:1: no elastic job answers there" in capsys.readouterr().err


def test_ranks_get_the_elastic_environment_and_member_prefixes(tmp_path):
    script = write(tmp_path, "env.py", """
        import os
        keys = ["FLOWMESH_ELASTIC", "FLOWMESH_ELASTIC_ID", "FLOWMESH_MIN_NP", "FLOWMESH_MAX_NP"]
        print(*[os.environ.get(k) for k in keys], os.environ.get("FLOWMESH_RANK"),
              os.environ["FLOWMESH_RENDEZVOUS"])
    """)
    result = launch(2, [script], elastic=ElasticPolicy(1, 4), capture=True, timeout=40,
                    env={"FLOWMESH_RANK": "7"})
    assert result.returncode == 0 and result.returncodes == [0, 0]
    lines = sorted((label, line) for label, stream, line in result.output if stream == "stdout")
    assert [label for label, _ in lines] == [0, 1]
    for label, line in lines:
        assert re.fullmatch(rf"1 {label} 1 4 None 127\.0\.0\.1:\d+", line), line


def test_a_lost_rank_does_not_stop_the_others_above_min_np(tmp_path):
    script = write(tmp_path, "lose.py", """
        import os, sys, time
        if os.environ["FLOWMESH_ELASTIC_ID"] == "1":
            sys.exit(3)
        time.sleep(1.5)
        print("survivor done")
    """)
    result = launch(2, [script], elastic=ElasticPolicy(1, 2), capture=True, timeout=40)
    assert result.returncode == 0 and result.returncodes == [0, 3]
    assert (0, "stdout", "survivor done") in result.output


def test_below_min_np_the_job_stops_with_the_lost_rank_status(tmp_path):
    script = write(tmp_path, "below.py", """
        import os, sys, time
        if os.environ["FLOWMESH_ELASTIC_ID"] == "1":
            sys.exit(3)
        time.sleep(60)
    """)
    result = launch(2, [script], elastic=ElasticPolicy(2, 2), capture=True, timeout=40,
                    failure_grace=0.5)
    assert result.returncode == 3 and result.failed_rank == 1
    assert result.returncodes[0] is not None  # the survivor was stopped, not left running


def test_restart_failed_starts_a_replacement_within_the_budget(tmp_path):
    script = write(tmp_path, "flaky.py", """
        import os, sys
        sys.exit(5 if os.environ["FLOWMESH_ELASTIC_ID"] in ("1", "2") else 0)
    """)
    result = launch(2, [script], elastic=ElasticPolicy(1, 2, restart_failed=True, max_restarts=1),
                    capture=True, timeout=40)
    assert result.returncode == 0 and result.returncodes == [0, 5, 5]  # member 2 replaced 1
    assert [label for label, _, _ in result.output] == []  # nothing printed by the scripts


def exits_in_order(tmp_path, first: str, first_status: int, then_status: int) -> str:
    """A 2-member script: member ``first`` exits with ``first_status``; the other exits with
    ``then_status`` only after the launcher has reaped ``first`` (its /proc entry is gone)
    and had 0.5 s to report it, so the launcher sees the two exits in that order."""
    return write(tmp_path, "ordered_exits.py", f"""
        import os, sys, time
        marker = {str(tmp_path / "first.pid")!r}
        if os.environ["FLOWMESH_ELASTIC_ID"] == {first!r}:
            with open(marker + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.replace(marker + ".tmp", marker)
            sys.exit({first_status})
        deadline = time.monotonic() + 30
        while not os.path.exists(marker) and time.monotonic() < deadline:
            time.sleep(0.01)
        pid = open(marker).read()
        while os.path.exists(f"/proc/{{pid}}") and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)
        sys.exit({then_status})
    """)


def run_elastic_cli(script: str) -> subprocess.CompletedProcess:
    """``flowmesh run --min-np 1 --max-np 2 -np 2 script``; the job must succeed."""
    out = subprocess.run(CLI + ["--min-np", "1", "--max-np", "2", "-np", "2", script],
                         capture_output=True, text=True, timeout=50, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out


def test_cli_reports_losses_and_rounds_on_stderr(tmp_path):
    # the loss of member 0 is reported while member 1 still runs: "1 rank(s) remain"
    script = exits_in_order(tmp_path, "0", 4, 0)
    out = run_elastic_cli(script)
    assert re.search(r"elastic job: 2 rank\(s\), --min-np 1, --max-np 2; add ranks with "
                     r"`FLOWMESH_CLUSTER_SECRET_FILE=\S+/secret flowmesh run --join 127\.0\.0\.1:\d+ "
                     r"-np 1 \.\.\.`", out.stderr)  # joining ranks need the job's secret
    assert re.search(r"member 0 \(pid \d+\) exited with status 4; 1 rank\(s\) remain "
                     r"\(--min-np 1\)", out.stderr)
    assert "elastic job finished; lost members along the way: 0 (exited with status 4)" in out.stderr


def test_a_loss_after_another_member_finished_says_so_and_the_job_succeeds(tmp_path):
    # member 0 fails only after the launcher reaped member 1, which finished its work
    script = exits_in_order(tmp_path, "1", 0, 4)
    out = run_elastic_cli(script)
    assert re.search(r"member 0 \(pid \d+\) exited with status 4; 0 rank\(s\) remain, 1 finished "
                     r"\(--min-np 1\)", out.stderr), out.stderr


def test_the_coordinator_hears_how_a_child_ended_before_it_sees_it_stop(tmp_path):
    # a child that died between two launcher ticks still counts as running until the
    # launcher reaps it, so a round closed in between never reports a bare "exited"
    store = connect_store("127.0.0.1", 0, True, None, 10.0)
    job = ElasticJob(1, [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), "
                         "signal.SIGKILL)"], dict(os.environ), True, None, True, store,
                     ElasticPolicy(1, 1))
    try:
        job.members["0"].wait(20)
        assert job.coordinator.live_count() == 1  # dead, not reaped yet
        job.coordinator.members = ["0"]  # as if a round had made it a member
        job.wait(5, 0.1)
        assert job.coordinator._gone == {"0": "was killed by SIGKILL (status -9)"}
    finally:
        job.kill_all()
