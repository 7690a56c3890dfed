"""One trial: a process running ``SCRIPT ARGS --NAME=VALUE ...``, its reports parsed.

A local trial streams its output: every ``METRIC: value`` line becomes a report as it is
printed (early stopping acts on them). A remote trial (Spark, Ray) runs
:func:`run_command` on an executor and hands back all its reports when it ends.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf)"


def metric_pattern(metric: str) -> re.Pattern[str]:
    """Matches a ``METRIC: value`` (or ``METRIC=value``) line."""
    return re.compile(rf"^\s*{re.escape(metric)}\s*[:=]\s*{_NUMBER}\s*$")


def command(script: list[str], params: dict[str, Any]) -> list[str]:
    """The trial's command line: the script's, then one ``--NAME=VALUE`` per parameter."""
    return [*script, *(f"--{name}={value}" for name, value in params.items())]


@dataclass
class Outcome:
    """How a trial ended: exit code, its reports in order, seconds, last output lines."""

    code: int
    reports: list[float] = field(default_factory=list)
    seconds: float = 0.0
    tail: str = ""


def run_command(cmd: list[str], env: dict[str, str], metric: str, timeout: float | None = None) -> Outcome:
    """Runs a whole trial and collects its reports (the remote engines' trial body)."""
    pattern, start = metric_pattern(metric), time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace", timeout=timeout)
    lines = (done.stdout + done.stderr).splitlines()
    reports = [float(m.group(1)) for m in map(pattern.match, done.stdout.splitlines()) if m]
    return Outcome(done.returncode, reports, time.monotonic() - start, "\n".join(lines[-20:]))


class LocalTrial:
    """A trial on this machine; puts ``("report", i, value)`` and ``("exit", i, Outcome)``
    on ``events`` and writes its output to ``log_path``."""

    def __init__(self, index: int, cmd: list[str], env: dict[str, str], metric: str,
                 events: queue.Queue, log_path: str):
        self.index = index
        self.stopped = False
        self._events, self._pattern = events, metric_pattern(metric)
        self._start = time.monotonic()
        self._log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed by the reader
        self._proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, text=True, errors="replace",
                                      start_new_session=True)
        threading.Thread(target=self._read, daemon=True, name=f"sweep-trial-{index}").start()

    def stop(self, grace_s: float = 5.0) -> None:
        """Ends the trial early (SIGTERM to its process group, SIGKILL after ``grace_s``)."""
        self.stopped = True
        _signal_group(self._proc, signal.SIGTERM)
        try:
            self._proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            _signal_group(self._proc, signal.SIGKILL)

    def _read(self) -> None:
        reports: list[float] = []
        tail: list[str] = []
        assert self._proc.stdout is not None
        with self._log:
            for line in self._proc.stdout:
                self._log.write(line)
                tail = (tail + [line.rstrip()])[-20:]
                match = self._pattern.match(line)
                if match:
                    reports.append(float(match.group(1)))
                    self._events.put(("report", self.index, reports[-1]))
        code = self._proc.wait()
        outcome = Outcome(code, reports, time.monotonic() - self._start, "\n".join(tail))
        self._events.put(("exit", self.index, outcome))


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
