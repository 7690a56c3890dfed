"""Drives ``flowmesh launch`` running ``ps_trainer.py`` and reads what its tasks recorded.

Used by the fault-tolerance tests and by ``benchmarks/recovery.py``::

    with LaunchedJob(tmp_path, workers=2, max_restarts="2", args=["--steps", "200"]) as job:
        job.wait_for(lambda: job.max_step() >= 40, 30, "training to start")
        killed_at = job.kill("ps:0")
        status = job.finish(60)

The launcher runs as a child process; every task pid it announces (``[launch] pids``,
``[launch] ... restarted (pid N ...)``) is remembered, so ``close`` can SIGKILL, by pid,
any task left behind if the launcher itself had to be killed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from flowmesh.testing.cluster import Child, child_env

TRAINER = str(Path(__file__).with_name("ps_trainer.py"))
_RESTARTED = re.compile(r"\[launch\] (\S+) restarted \(pid (\d+)")


class LaunchedJob:
    """``flowmesh launch --ps P --workers W [--max-restarts K] ps_trainer.py ...`` in a child.

    Args:
        workdir: where logs (``logs/``) and checkpoints (``ckpt/``) go.
        ps / workers: cluster size.
        max_restarts: the ``--max-restarts`` value, or None for none.
        args: more ``ps_trainer.py`` arguments.
        env: extra environment (``FLOWMESH_*`` deadlines...).
        timeout: the launcher's own ``--timeout`` (it stops everything after it).
        standby: pass ``--no-standby`` when False.
        trainer: the script to run (default ``ps_trainer.py``; the recovery benchmark's
            TensorFlow peer runs its own).
    """

    def __init__(self, workdir: Path, *, ps: int = 1, workers: int = 2, max_restarts: str | None = "2",
                 args: Sequence[str] = (), env: dict[str, str] | None = None, timeout: float = 90,
                 standby: bool = True, trainer: str = TRAINER):
        self.logs = Path(workdir) / "logs"
        self.ckpt = Path(workdir) / "ckpt"
        self.logs.mkdir(parents=True, exist_ok=True)
        self._cache: dict[Path, tuple[int, list[dict[str, Any]]]] = {}
        argv = [sys.executable, "-m", "flowmesh.cli.main", "launch", "--ps", str(ps), "--workers", str(workers),
                "--flags", "never", "--grace", "2", "--timeout", str(timeout)]
        if max_restarts is not None:
            argv += ["--max-restarts", max_restarts]
        if not standby:
            argv.append("--no-standby")
        self.trainer = trainer
        argv += [trainer, "--log_dir", str(self.logs), "--checkpoint_dir", str(self.ckpt), *args]
        self.started = time.time()
        self.child = Child(argv, child_env(env), name="flowmesh launch")
        try:
            line = self.child.wait_for_line("[launch] pids ", 60)
        except BaseException:
            self.close()
            raise
        self._pids = dict(item.split("=") for item in line.split("[launch] pids ", 1)[1].split())
        self._all_pids = {int(p) for p in self._pids.values()}

    # --- tasks ---------------------------------------------------------------------------
    def pid(self, task: str) -> int:
        """The current pid of ``task`` (``"worker:1"``), following restarts."""
        pid = int(self._pids[task])
        for line in list(self.child.lines):
            m = _RESTARTED.search(line)
            if m:
                self._all_pids.add(int(m.group(2)))
                if m.group(1) == task:
                    pid = int(m.group(2))
        return pid

    def kill(self, task: str, sig: int = signal.SIGKILL) -> float:
        """Signals ``task``'s current process (by pid); returns ``time.time()`` of the kill."""
        pid = self.pid(task)
        now = time.time()
        os.kill(pid, sig)
        return now

    # --- records -------------------------------------------------------------------------
    def records(self, task: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        """Every JSON record the tasks wrote (oldest first per file), optionally filtered.
        Files are read incrementally (only complete lines), so polling stays cheap."""
        out = []
        for path in sorted(self.logs.glob("*.jsonl")):
            for rec in self._read(path):
                if (task is None or rec["task"] == task) and (kind is None or rec["kind"] == kind):
                    out.append(rec)
        return out

    def _read(self, path: Path) -> list[dict[str, Any]]:
        offset, parsed = self._cache.get(path, (0, []))
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
        complete = data[:data.rfind(b"\n") + 1]
        for line in complete.splitlines():
            try:
                parsed.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        self._cache[path] = (offset + len(complete), parsed)
        return parsed

    def steps(self, task: str | None = None) -> list[dict[str, Any]]:
        return self.records(task, "step")

    def max_step(self) -> int:
        return max((r["step"] for r in self.steps()), default=0)

    def wait_for(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        """Polls ``predicate`` until it is truthy; fails with the launcher's output otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if self.child.proc.poll() is not None:
                raise AssertionError(f"the launcher exited ({self.child.proc.returncode}) before {what}:\n"
                                     f"{self.output()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout} s:\n{self.output()}")
            time.sleep(0.02)

    def finish(self, timeout: float) -> int:
        """Waits for the launcher; returns its exit status."""
        return self.child.wait(timeout)

    def output(self) -> str:
        return self.child.output()[-6000:]

    # --- cleanup -------------------------------------------------------------------------
    def close(self) -> None:
        """Stops the launcher (SIGTERM: it stops its tasks); if it had to be stopped, also
        SIGKILLs any of its tasks left behind (by pid, checking the pid is still ours)."""
        if self.child.proc.poll() is not None:
            return
        self.child.kill(signal.SIGTERM)
        for task in list(getattr(self, "_pids", {})):
            self.pid(task)  # collect restarted pids too
        for pid in getattr(self, "_all_pids", ()):
            if _is_our_task(pid, self.trainer):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def __enter__(self) -> LaunchedJob:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _is_our_task(pid: int, trainer: str) -> bool:
    """Whether ``pid`` still runs a task of ours (not a recycled pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().decode(errors="replace")
    except OSError:
        return False
    return trainer in cmdline or "flowmesh.cli.standby" in cmdline
