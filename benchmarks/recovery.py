"""Recovery time of parameter-server training: SIGKILL a worker or the ps, time the comeback.

    python -m benchmarks.recovery [--repeats 5] [--kinds worker,ps] [--modes standby,cold,tf]

Runs ``flowmesh launch --ps 1 --workers 2 --max-restarts N tests/fault_tolerance/ps_trainer.py``
(async training of a small linear model, the chief checkpointing every 50 global steps,
every task logging timestamped records; see ``tests/fault_tolerance/harness.py``), and
``--repeats`` times per kind, alternating kinds: waits until every worker trains, SIGKILLs
``worker:1`` or ``ps:0`` by pid, and measures

* worker: kill -> the restarted worker's first completed step (it rejoined);
* ps: kill -> the first completed step after the chief restored the ps variables from
  the last checkpoint (training resumed), and -> every worker stepping again.

Each recovery is split into phases from the tasks' records: ``spawn`` (kill -> the script
starts running: the launcher notices the exit, then starts a process or hands the task to
the standby), ``imports`` (-> ``import flowmesh`` done; ~0 in a warm standby),
``server`` / ``session`` (-> the task serves / the monitored session is re-created,
including the chief's restore) and ``step`` (-> first step). Modes: ``standby`` (the
launcher's default with restarts: a warm interpreter takes over the task) and ``cold``
(``--no-standby``: a new interpreter), one job per mode; and ``tf``: the peer,
TensorFlow's own ps runtime (``tf.compat.v1`` ``Server`` + ``MonitoredTrainingSession``,
``benchmarks/tf_ps_trainer.py``, the same model, records and launcher, cold restarts since
TensorFlow has no standby). Goals (issue 7): <= 5 s for a worker, <= 10 s for a ps
(median of 5).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.fault_tolerance.harness import TRAINER, LaunchedJob

ENV = {"FLOWMESH_HEARTBEAT_S": "1", "FLOWMESH_RPC_DEADLINE_S": "5"}
TF_TRAINER = str(Path(__file__).with_name("tf_ps_trainer.py"))
# what a worker logs when a step failed and its session will be re-created
_FAILED_STEP = ("while running a step",  # flowmesh
                "may be due to a preemption")  # TensorFlow's MonitoredSession
PHASES = {"worker": ("spawn", "imports", "session", "step"),
          "ps": ("detect", "spawn", "imports", "server", "session", "step")}


def _first(records: list[dict[str, Any]], after: float = float("-inf")) -> dict[str, Any] | None:
    later = [r for r in records if r["t"] > after]
    return min(later, key=lambda r: r["t"]) if later else None


def _incarnation(job: LaunchedJob, task: str, restart: int, kind: str) -> list[dict[str, Any]]:
    return [r for r in job.records(task, kind) if r["restart"] == restart]


def worker_phases(job: LaunchedJob, killed: float, restart: int) -> dict[str, float]:
    """Phases of the restarted ``worker:1`` (seconds; they add up to ``total``)."""
    start = _incarnation(job, "worker:1", restart, "start")[0]
    session = _incarnation(job, "worker:1", restart, "session")[0]
    step = min(_incarnation(job, "worker:1", restart, "step"), key=lambda r: r["t"])
    return {"spawn": start["began"] - killed, "imports": start["t"] - start["began"],
            "session": session["t"] - start["t"], "step": step["t"] - session["t"],
            "total": step["t"] - killed}


def ps_phases(job: LaunchedJob, killed: float, restart: int) -> dict[str, float]:
    """Phases of a ps recovery: detection by the workers, the new ps, the chief's new
    session (restore included) and the first step; ``all`` is every worker stepping."""
    start = _incarnation(job, "ps:0", restart, "start")[0]
    serving = _incarnation(job, "ps:0", restart, "serving")[0]
    detect = _first([r for r in job.records(kind="log")
                     if any(m in r["message"] for m in _FAILED_STEP)], killed)
    session = _first(job.records("worker:0", "session"), serving["t"])
    firsts = [_first(job.steps(w), session["t"]) for w in ("worker:0", "worker:1")]
    assert detect and session and all(firsts), "incomplete records"
    first = min(r["t"] for r in firsts)
    return {"detect": detect["t"] - killed, "spawn": start["began"] - killed,
            "imports": start["t"] - start["began"],
            "server": serving["t"] - start["t"], "session": session["t"] - serving["t"],
            "step": first - session["t"], "total": first - killed,
            "all": max(r["t"] for r in firsts) - killed}


def _all_training(job: LaunchedJob) -> bool:
    now = time.time()
    return all(any(r["t"] > now - 0.5 for r in job.steps(w)[-3:]) for w in ("worker:0", "worker:1"))


def kill_worker(job: LaunchedJob, restart: int) -> dict[str, float]:
    """SIGKILLs ``worker:1``; waits for the step of its incarnation ``restart``."""
    killed = job.kill("worker:1")
    job.wait_for(lambda: _incarnation(job, "worker:1", restart, "step"), 120, "the worker to rejoin")
    return worker_phases(job, killed, restart)


def kill_ps(job: LaunchedJob, restart: int) -> dict[str, float]:
    """SIGKILLs ``ps:0``; waits until its incarnation ``restart`` serves and both workers step."""
    killed = job.kill("ps:0")

    def resumed() -> bool:
        return bool(_incarnation(job, "ps:0", restart, "serving")) and all(
            _first(job.steps(w), killed + 0.01) for w in ("worker:0", "worker:1"))

    job.wait_for(resumed, 120, "training to resume")
    return ps_phases(job, killed, restart)


def measure_mode(mode: str, kinds: Sequence[str], repeats: int, settle: float) -> dict[str, list[dict]]:
    """One job; ``repeats`` kills of each kind, alternating; returns the phases per kill."""
    results: dict[str, list[dict]] = {k: [] for k in kinds}
    kill = {"worker": kill_worker, "ps": kill_ps}
    with tempfile.TemporaryDirectory(prefix="flowmesh-recovery-") as tmp:
        trainer = {"tf": TF_TRAINER}.get(mode, TRAINER)
        with LaunchedJob(Path(tmp), workers=2, max_restarts=str(repeats + 1), standby=mode == "standby",
                         env=ENV, timeout=0, trainer=trainer,
                         args=["--steps", "100000000", "--sleep", "0.01", "--save_steps", "50"]) as job:
            for round_ in range(repeats):
                for kind in (kinds if round_ % 2 == 0 else list(reversed(kinds))):
                    time.sleep(settle)  # failures are rare: a standby is warm again by then
                    job.wait_for(lambda: _all_training(job), 120, "every worker training")
                    results[kind].append(kill[kind](job, len(results[kind]) + 1))
    return results


def summarize(mode: str, kind: str, runs: list[dict[str, float]]) -> dict[str, Any]:
    keys = [*PHASES[kind], "total"] + (["all"] if kind == "ps" else [])
    return {"mode": mode, "kind": kind, "n": len(runs),
            **{k: round(statistics.median(r[k] for r in runs), 3) for k in keys},
            "min_total": round(min(r["total"] for r in runs), 3),
            "totals": [round(r["total"], 3) for r in runs]}


def report(summaries: list[dict[str, Any]], goals: dict[str, float]) -> list[dict[str, Any]]:
    """Prints the table and one JSON line per kind (flowmesh vs TensorFlow, and the cold
    restart); returns the lines."""
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; seconds, median of "
          f"{summaries[0]['n'] if summaries else 0}")
    for s in summaries:
        phases = "  ".join(f"{k} {s[k]:.2f}" for k in PHASES[s["kind"]])
        extra = f"  (all workers {s['all']:.2f})" if s["kind"] == "ps" else ""
        print(f"{s['kind']:>6} kill, {s['mode']:<7}: total {s['total']:.2f} (min {s['min_total']:.2f}){extra}"
              f"   = {phases}")
    lines = []
    by = {(s["mode"], s["kind"]): s for s in summaries}
    for kind in goals:
        main = by.get(("standby", kind)) or by.get(("cold", kind))
        if main is None:
            continue
        line = {"bench": "recovery", "config": f"{kind} SIGKILL, 1 ps + 2 workers, async, seconds to the "
                                              f"first step after recovery (lower is better)",
                "flowmesh": main["total"], "mode": main["mode"], "goal_s": goals[kind],
                "meets_goal": main["total"] <= goals[kind]}
        tf_peer, cold = by.get(("tf", kind)), by.get(("cold", kind))
        if tf_peer is not None:
            line.update(peer="tensorflow ps runtime (cold restart)", peer_value=tf_peer["total"],
                        ratio=round(tf_peer["total"] / main["total"], 2))
        if cold is not None and cold is not main:
            line.update(cold_restart=cold["total"])
        print(json.dumps(line))
        lines.append(line)
    return lines


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--kinds", default="worker,ps")
    p.add_argument("--modes", default="standby,cold")
    p.add_argument("--settle", type=float, default=6.0, help="seconds of training between kills")
    args = p.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    summaries = []
    for mode in [m for m in args.modes.split(",") if m]:
        runs = measure_mode(mode, kinds, args.repeats, args.settle)
        summaries += [summarize(mode, kind, runs[kind]) for kind in kinds]
    return report(summaries, {k: {"worker": 5.0, "ps": 10.0}[k] for k in kinds})


if __name__ == "__main__":
    main()
