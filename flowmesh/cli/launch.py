"""Starts a local cluster: one process per task running SCRIPT, with TF_CONFIG per task.

Examples::

    flowmesh launch --ps 2 --workers 3 examples/distributed_mnist.py --sync
    flowmesh launch --ps 1 --workers 2 --chief --evaluator train.py --steps 100
    flowmesh launch --ps 1 --workers 3 --max-restarts 3 train.py --checkpoint_dir /shared/run

Every task gets free loopback ports and ``TF_CONFIG`` (cluster + its own task). Scripts
written for the classic flags also get ``--ps_hosts --worker_hosts --job_name
--task_index`` (``--flags auto`` passes them when the script mentions ``ps_hosts``,
``worker_hosts`` or ``job_name``). Each line a task prints is prefixed with
``[job:index]``; the launcher's own lines (``[launch] pids worker:0=123 ...``, exits,
restarts with the new pid) with ``[launch]``. Every task gets the job's secret
(``FLOWMESH_CLUSTER_SECRET_FILE``, a 0600 file created per job: ``flowmesh.launch.secret``),
so its servers refuse processes that are not part of the job. When the chief (or every worker) has
finished, the launcher waits for the evaluator to finish its last evaluation (up to
``EVALUATOR_WAIT_S``), then stops the tasks still running (SIGTERM, then SIGKILL); ps tasks
of ``tf.estimator.train_and_evaluate`` and of a ``ParameterServerStrategy`` exit by themselves
once every trainer is done (a ps that stopped serving gets ``PS_EXIT_WAIT_S`` to exit). The
exit status is the chief's (worker 0's without ``--chief``), or the evaluator's when it
failed after a successful chief; without ``--max-restarts``, if the chief fails, the other
tasks are stopped at once.

Fault tolerance (``--max-restarts K``, or ``JOB=K`` per job, e.g. ``ps=5,worker=2``): a
task that exits with a non-zero status or is killed is restarted with the same identity
(same job, index, port, TF_CONFIG and flags; ``FLOWMESH_RESTART_COUNT`` tells it how many
times it was restarted). A restarted worker rejoins; a restarted ps comes back empty, the
workers' ``MonitoredTrainingSession`` re-creates its session and the chief restores the
ps variables from the last checkpoint in its ``checkpoint_dir``. A task failing after K
restarts fails the job: every task is stopped and the launcher exits with the failed
task's status (128 + N when killed by signal N). With restarts allowed, a warm standby
interpreter (flowmesh already imported) takes over a failed task's identity, so a
restart does not pay for a new interpreter and its imports (``--no-standby`` to turn
it off). The supervision is :mod:`flowmesh.launch.supervisor`'s; this module turns the
command line into the tasks' specs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

from flowmesh.launch.restart_policy import RestartPolicy
from flowmesh.launch.roles import classic_flags, local_cluster, tasks
from flowmesh.launch.supervisor import RESTART_COUNT_VAR, Launcher, LaunchOptions, TaskSpec

HELP = "start a local ps/worker cluster running a training script (TF_CONFIG per task)"
_FLAG_WORDS = ("ps_hosts", "worker_hosts", "job_name")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ps", type=int, default=1, help="number of parameter-server tasks")
    parser.add_argument("--workers", type=int, default=1, help="number of worker tasks")
    parser.add_argument("--chief", action="store_true", help="add a 'chief' task")
    parser.add_argument("--evaluator", action="store_true", help="add an 'evaluator' task")
    parser.add_argument("--flags", choices=("auto", "always", "never"), default="auto",
                        help="pass --ps_hosts/--worker_hosts/--job_name/--task_index")
    parser.add_argument("--ps-server", action="store_true",
                        help="run ps tasks as `flowmesh server` instead of the script")
    parser.add_argument("--host", default="localhost", help="host name used in the cluster spec")
    parser.add_argument("--timeout", type=float, default=0, help="stop everything after N seconds")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL")
    parser.add_argument("--max-restarts", action="append", metavar="K|JOB=K",
                        help="restart a failed task up to K times (all jobs, or JOB=K for one job; "
                             "repeat or comma-separate); the job fails after that")
    parser.add_argument("--standby", action=argparse.BooleanOptionalAction, default=True,
                        help="keep a warm interpreter ready for restarts (default: on when "
                             "restarts are allowed)")
    parser.add_argument("script", help="the training script (or 'python SCRIPT')")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")


def make_cluster(args: argparse.Namespace) -> dict[str, list[str]]:
    """The cluster dict on free loopback ports (chief, worker, ps; evaluator is not a job)."""
    return local_cluster({"chief": 1 if args.chief else 0, "worker": args.workers, "ps": args.ps},
                         args.host)


def script_argv(args: argparse.Namespace) -> list[str]:
    """``[python, script, args...]`` for ``script.py args`` or ``python script.py args``."""
    rest = list(args.args)
    if os.path.basename(args.script).startswith("python") and rest:
        return [sys.executable, *rest]
    return [sys.executable, args.script, *rest]


def wants_flags(args: argparse.Namespace, argv: Sequence[str]) -> bool:
    if args.flags != "auto":
        return args.flags == "always"
    script = next((a for a in argv[1:] if a.endswith(".py")), None)
    try:
        with open(script or "", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    return any(word in text for word in _FLAG_WORDS)


def task_specs(args: argparse.Namespace, cluster: dict[str, list[str]],
               base_env: dict[str, str]) -> list[TaskSpec]:
    """Every task of the job ``args`` describe: the script (or ``flowmesh server`` for ps
    tasks with ``--ps-server``) with the task's ``TF_CONFIG``, and the classic flags when
    the script wants them; intra-op threads shared out over the tasks."""
    from flowmesh.distributed import tf_config

    argv = script_argv(args)
    flags = wants_flags(args, argv)
    roles = tasks(cluster, evaluators=1 if args.evaluator else 0)
    base = dict(base_env)
    base.setdefault("OMP_NUM_THREADS", str(_threads_per_task(len(roles))))
    base.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    specs = []
    for job, index in roles:
        env = dict(base, TF_CONFIG=tf_config.dumps(cluster, job, index), **{RESTART_COUNT_VAR: "0"})
        if job == "ps" and args.ps_server:
            cmd = [sys.executable, "-m", "flowmesh.cli.main", "server", "--job", "ps", "--task", str(index)]
        else:
            cmd = argv + (classic_flags(cluster, job, index) if flags and job != "evaluator" else [])
        specs.append(TaskSpec(job, index, cmd, env))
    return specs


def _threads_per_task(tasks: int) -> int:
    """Intra-op threads per task so the local tasks share the cores instead of
    oversubscribing them (the user's OMP_NUM_THREADS wins): OpenMP threads that spin
    while waiting would take the cores from the other tasks."""
    return max(1, (os.cpu_count() or 1) // max(1, tasks))


def run(args: argparse.Namespace) -> int:
    if args.workers < 1 or args.ps < 0:
        print("flowmesh launch: need --workers >= 1 and --ps >= 0", file=sys.stderr)
        return 2
    try:
        RestartPolicy.parse(getattr(args, "max_restarts", None))
    except ValueError as exc:
        print(f"flowmesh launch: {exc}", file=sys.stderr)
        return 2
    options = LaunchOptions(args.timeout, args.grace, args.max_restarts, args.standby)
    launcher = Launcher(make_cluster(args), options)
    launcher.start(task_specs(args, launcher.cluster, launcher.base_env))
    launcher.say("cluster " + " ".join(f"{j}={','.join(a)}" for j, a in launcher.cluster.items()))
    launcher.say("pids " + " ".join(f"{t.name}={t.proc.pid}" for t in launcher.tasks))
    if launcher.secret.path:
        launcher.say(f"cluster secret in {launcher.secret.path} (FLOWMESH_CLUSTER_SECRET_FILE "
                     "for clients started by hand; deleted when the job ends)")
    interrupted: list[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        status = launcher.wait()
    except KeyboardInterrupt:
        status = 128 + (interrupted[0] if interrupted else signal.SIGINT)
    finally:
        signal.signal(signal.SIGTERM, previous)
        launcher.stop_all()
    return status
