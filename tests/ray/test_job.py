"""flowmesh.ray on a real local Ray instance: ps and all-reduce jobs as actors, restarts,
failures, and sweep trials as Ray tasks."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray", reason="ray not installed (pip install flowmesh[ray])")

import flowmesh.ray as fray  # noqa: E402
from tests.ray import tasks  # noqa: E402
from tests.spark import nodes  # noqa: E402

pytestmark = [pytest.mark.multiprocess, pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, configure_logging=False)
    for module in (tasks, nodes):  # the actors cannot import the tests package
        ray.cloudpickle.register_pickle_by_value(module)
    yield
    ray.shutdown()


def test_a_ps_job_trains_and_returns_the_chiefs_value():
    accuracy = fray.run(tasks.ps_digits(), num_ps=1, num_workers=2, strategy="ps")
    assert accuracy >= 0.9


def test_an_allreduce_job_keeps_the_ranks_in_step():
    outcome = fray.run(tasks.allreduce_digits, num_workers=2, strategy="allreduce")
    assert outcome["size"] == 2 and outcome["spread"] == 0.0


def test_a_killed_worker_actor_is_restarted():
    accuracy = fray.run(tasks.ps_digits(crash_worker=1), num_ps=1, num_workers=2, max_restarts=1)
    assert accuracy >= 0.9


def test_a_task_failing_past_its_restarts_fails_the_job_with_its_traceback():
    with pytest.raises(fray.JobFailedError, match="(?s)worker:0 failed after 1 restart.*cannot start"):
        fray.run(tasks.always_fails, num_workers=1, max_restarts=1)


def test_a_gang_that_does_not_fit_is_refused():
    with pytest.raises(TimeoutError, match="whole gang"):
        fray.run(tasks.always_fails, num_workers=2, resources_per_worker={"CPU": 3}, start_timeout=3)


def test_sweep_trials_run_as_ray_tasks(tmp_path, capsys):
    from pathlib import Path

    from flowmesh.cli.main import main

    script = str(Path(__file__).parents[1] / "sweep" / "trial_script.py")
    assert main(["sweep", "--grid", "lr=0.1,0.2", "--metric", "score", "--engine", "ray",
                 "--out", str(tmp_path), script]) == 0
    assert "best {'lr': 0.2}: score 0.2" in capsys.readouterr().out
