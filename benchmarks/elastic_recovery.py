"""Elastic all-reduce: seconds from a SIGKILLed rank to the survivors' first completed step.

    python -m benchmarks.elastic_recovery [--repeats 5] [--peers torchrun|none]
    python -m benchmarks.recovery --kinds elastic          # the same, from the recovery bench

One job per contender, 3 ranks training an MLP 784-256-256-10 (global batch 120, one
intra-op thread per rank; ``benchmarks/elastic_workers.py``), ``--repeats`` kills each:

* flowmesh: ``flowmesh run --min-np 2 --max-np 3 -np 3 --restart-failed``; a commit every
  10 steps (in memory). Measured: kill -> the first step completed by the 2 survivors
  (they rolled back to the last commit and re-formed the group), split into ``detect``
  (kill -> a survivor caught the failure), ``regroup`` (-> new group formed) and
  ``resume`` (-> state synced and first step done); also kill -> the replacement rank
  trained in a group of 3 again (``rejoin``: a new interpreter plus the next commit).
* peer ``torchrun``: torch ``DistributedDataParallel`` on gloo under ``torchrun
  --nproc-per-node 3 --max-restarts N --monitor-interval 0.1``, rank 0 checkpointing every
  10 steps (``torch.save``); torchrun restarts every rank on a failure and they reload the
  checkpoint: kill -> the first step of the restarted group, split into ``restart`` (kill
  -> the new processes are initialized) and ``resume`` (-> checkpoint loaded, first step).

Kills rotate over the ranks (rank 0 included); the victim is SIGKILLed by pid at whatever
point of its step it is. Prints a table and one JSON line (median of the repeats).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NP = 3
_WAIT_S = 120.0


class Job:
    """One launched job and the records of its processes (read incrementally)."""

    def __init__(self, kind: str, out: Path, repeats: int):
        self.kind, self.out = kind, out
        worker = [sys.executable, "-m", "benchmarks.elastic_workers", kind, "--out", str(out)]
        if kind == "flowmesh":
            cmd = [sys.executable, "-m", "flowmesh.cli.main", "run", "--min-np", "2", "--max-np",
                   str(NP), "-np", str(NP), "--restart-failed", "--max-restarts", str(repeats),
                   "--timeout", "900", "--", *worker]
        else:
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   "--nproc-per-node", str(NP), "--max-restarts", str(repeats),
                   "--monitor-interval", "0.1", "-m", "benchmarks.elastic_workers", kind,
                   "--out", str(out)]
        env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE",
                   PYTHONPATH=str(ROOT))
        self.log = open(out / f"{kind}.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.records: list[dict[str, Any]] = []
        self._offsets: dict[str, int] = {}

    def read(self) -> list[dict[str, Any]]:
        for path in glob.glob(str(self.out / f"{self.kind}_*.jsonl")):
            with open(path) as f:
                f.seek(self._offsets.get(path, 0))
                chunk = f.read()
            complete = chunk[:chunk.rfind("\n") + 1]
            self._offsets[path] = self._offsets.get(path, 0) + len(complete)
            self.records += [json.loads(line) for line in complete.splitlines() if line]
        return self.records

    def wait_for(self, found: Callable[[], Any], what: str) -> Any:
        deadline = time.monotonic() + _WAIT_S
        while time.monotonic() < deadline:
            self.read()
            value = found()
            if value:
                return value
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        tail = (self.out / f"{self.kind}.log").read_text()[-3000:]
        raise RuntimeError(f"{self.kind}: gave up waiting for {what}; launcher log:\n{tail}")

    def latest(self, window: float = 1.0) -> dict[int, dict[str, Any]]:
        """The last step record of every process that stepped in the last ``window`` s."""
        now, last = time.time(), {}
        for r in self.records:
            if r["kind"] == "step" and r["t"] > now - window:
                last[r["pid"]] = r
        return last

    def stop(self) -> None:
        """Asks the ranks to stop soon (same step everywhere), then waits for the job."""
        steps = [r["step"] for r in self.read() if r["kind"] == "step"]
        (self.out / "stop_at.tmp").write_text(str(max(steps, default=0) + 60))
        os.replace(self.out / "stop_at.tmp", self.out / "stop_at")
        try:
            self.proc.wait(90)
        except subprocess.TimeoutExpired:
            self.kill_all()
        self.log.close()

    def kill_all(self) -> None:
        """Last resort: kills the launcher, every process below it (ranks that never
        wrote a record included) and every rank it recorded."""
        pids = {r["pid"] for r in self.read()} | _descendants(self.proc.pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(10)


def _descendants(root: int) -> set[int]:
    """Pids of every live process below ``root`` (from /proc; empty where there is none)."""
    parents: dict[int, int] = {}
    for entry in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parents[int(entry.split("/")[2])] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def kill_once(job: Job, victim_rank: int, settle: float) -> dict[str, float]:
    """Waits until NP ranks train, SIGKILLs the one at ``victim_rank``, measures."""
    job.wait_for(lambda: len({r["rank"] for r in job.latest().values() if r["size"] == NP}) == NP,
                 f"{NP} ranks training")
    time.sleep(settle)
    job.read()
    victim = next(p for p, r in job.latest().items() if r["rank"] == victim_rank and r["size"] == NP)
    before = max(r["step"] for r in job.records if r["kind"] == "step")
    generation = max(r.get("restart", 0) for r in job.records)
    killed = time.time()
    os.kill(victim, signal.SIGKILL)
    if job.kind == "flowmesh":
        return _flowmesh_phases(job, victim, killed, before)
    return _torchrun_phases(job, killed, before, generation)


def _first_after(job: Job, killed: float, accept: Callable[[dict[str, Any]], bool]) -> Any:
    later = [r for r in job.records if r["t"] > killed and accept(r)]
    return min(later, key=lambda r: r["t"]) if later else None


def _flowmesh_phases(job: Job, victim: int, killed: float, before: int) -> dict[str, float]:
    first = job.wait_for(lambda: _first_after(job, killed, lambda r: r["kind"] == "step"
                                              and r["size"] == NP - 1), "the survivors' first step")
    reset = min((r for r in job.records if r["kind"] == "reset" and r["pid"] == first["pid"]
                 and r["formed"] > killed), key=lambda r: r["formed"])
    rejoin = job.wait_for(lambda: _first_after(job, killed, lambda r: r["kind"] == "step"
                                               and r["size"] == NP and r["pid"] != victim
                                               and r["t"] > first["t"]), "the replacement to join")
    return {"detect": reset["began"] - killed, "regroup": reset["formed"] - reset["began"],
            "resume": first["t"] - reset["formed"], "total": first["t"] - killed,
            "rejoin": rejoin["t"] - killed, "redone": before - first["step"] + 1}


def _torchrun_phases(job: Job, killed: float, before: int, generation: int) -> dict[str, float]:
    def restarted(r: dict[str, Any]) -> bool:
        return r.get("restart", 0) > generation

    first = job.wait_for(lambda: _first_after(job, killed, lambda r: r["kind"] == "step"
                                              and restarted(r)), "the restarted group's first step")
    start = max(r["t"] for r in job.records if r["kind"] == "start" and restarted(r))
    return {"restart": start - killed, "resume": first["t"] - start, "total": first["t"] - killed,
            "redone": before - first["step"] + 1}


def measure(kind: str, repeats: int, settle: float) -> list[dict[str, float]]:
    """One job of ``kind``; ``repeats`` kills rotating over the ranks."""
    with tempfile.TemporaryDirectory(prefix=f"flowmesh-elastic-{kind}-") as tmp:
        job = Job(kind, Path(tmp), repeats)
        try:
            runs = [kill_once(job, i % NP, settle) for i in range(repeats)]
        except BaseException:
            job.kill_all()
            raise
        job.stop()
        return runs


def summarize(kind: str, runs: list[dict[str, float]]) -> dict[str, Any]:
    keys = [k for k in runs[0] if k != "redone"]
    return {"kind": kind, "n": len(runs), **{k: round(statistics.median(r[k] for r in runs), 3) for k in keys},
            "min_total": round(min(r["total"] for r in runs), 3),
            "totals": [round(r["total"], 3) for r in runs],
            "redone": statistics.median(r["redone"] for r in runs)}


def report(summaries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {NP} ranks, seconds, "
          f"median of {next(iter(summaries.values()))['n']}")
    for kind, s in summaries.items():
        phases = "  ".join(f"{k} {v:.2f}" for k, v in s.items()
                           if k not in ("kind", "n", "total", "min_total", "totals", "redone"))
        print(f"{kind:>9}: kill -> first step {s['total']:.2f} (min {s['min_total']:.2f})  = {phases}"
              f"  (steps redone {s['redone']:g})")
    mine, peer = summaries.get("flowmesh"), summaries.get("torchrun")
    if mine is None:
        return []
    line: dict[str, Any] = {
        "bench": "recovery", "config": f"elastic rank loss: SIGKILL 1 of {NP} all-reduce ranks "
        "(MLP 784-256-256-10), seconds to the survivors' first step (lower is better)",
        "flowmesh": mine["total"], "rejoin_s": mine["rejoin"]}
    if peer is not None:
        line.update(peer="torchrun (restart every rank, reload checkpoint)", peer_value=peer["total"],
                    ratio=round(peer["total"] / mine["total"], 2))
    print(json.dumps(line))
    return [line]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--peers", default="torchrun", help="torchrun or none")
    p.add_argument("--skip-flowmesh", action="store_true", help="measure the peer only")
    p.add_argument("--settle", type=float, default=3.0, help="seconds of training before a kill")
    args = p.parse_args(argv)
    summaries = {} if args.skip_flowmesh else {
        "flowmesh": summarize("flowmesh", measure("flowmesh", args.repeats, args.settle))}
    if args.peers == "torchrun":
        summaries["torchrun"] = summarize("torchrun", measure("torchrun", args.repeats, args.settle))
    return report(summaries)


if __name__ == "__main__":
    main()
