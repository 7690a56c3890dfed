"""A group of supervised processes: spawned with a label, their output read line by line,
stopped together.

Every launcher of flowmesh runs tasks the same way: each task is a process leading its
own session (so signalling its group reaches what it started too), its output is pumped
line by line by a thread and handed, with the task's label, to one handler under one lock
(the launcher prefixes and prints the lines, or keeps them for a test), and at the end
every live task gets SIGTERM (and SIGCONT, so a stopped task sees it), then SIGKILL after
a grace period. ``flowmesh launch`` adds restarts and a warm standby on top,
``flowmesh run`` ranks and failure policies, ``flowmesh.testing`` waiting for lines.

Example:
    >>> group = ProcessGroup(lambda label, stream, line: print(f"[{label}] {line}"))
    >>> worker = group.spawn([sys.executable, "train.py"], dict(os.environ), "worker:0")
    >>> group.stop(grace=5.0)
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

LineHandler = Callable[[str, str, str], None]  # (label, "stdout" | "stderr", line)


class Supervised:
    """One process of a group and the label its lines carry (mutable: a warm standby
    takes over the label of the task it replaces)."""

    def __init__(self, proc: subprocess.Popen, label: str):
        self.proc = proc
        self.label = label

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def signal(self, sig: int) -> None:
        """Signals the process's whole group (it leads its own session)."""
        signal_group(self.proc, sig)


class ProcessGroup:
    """Processes whose output lines go to ``on_line``, one line at a time.

    Args:
        on_line: ``fn(label, stream, line)``, called under the group's lock (lines of
            different processes never interleave); ``stream`` is ``"stderr"`` only when
            ``merge_stderr`` is False.
        merge_stderr: read standard error together with standard output.
    """

    def __init__(self, on_line: LineHandler, merge_stderr: bool = True):
        self.on_line = on_line
        self.merge_stderr = merge_stderr
        self.lock = threading.Lock()
        self.members: list[Supervised] = []
        self._pumps: list[threading.Thread] = []

    def spawn(self, argv: Sequence[str], env: Mapping[str, str], label: str,
              stdin: Any = subprocess.DEVNULL, cwd: str | None = None) -> Supervised:
        """Starts ``argv`` as a new member (``stdin``: a ``subprocess`` constant, e.g.
        ``PIPE`` to write to it, ``None`` to inherit this process's)."""
        proc = subprocess.Popen(list(argv), env=dict(env), stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if self.merge_stderr else subprocess.PIPE,
                                text=True, errors="replace", start_new_session=True, cwd=cwd)
        member = Supervised(proc, label)
        self.members.append(member)
        streams = [(proc.stdout, "stdout")] + ([] if self.merge_stderr else [(proc.stderr, "stderr")])
        for stream, name in streams:
            pump = threading.Thread(target=self._pump, args=(member, stream, name), daemon=True,
                                    name=f"flowmesh-pump-{label}")
            pump.start()
            self._pumps.append(pump)
        return member

    def _pump(self, member: Supervised, stream: Any, name: str) -> None:
        for line in stream:
            with self.lock:
                self.on_line(member.label, name, line.rstrip("\n"))

    def alive(self) -> list[Supervised]:
        return [m for m in self.members if m.poll() is None]

    def stop(self, grace: float, members: Sequence[Supervised] | None = None) -> None:
        """SIGTERM (and SIGCONT) to every live member's group, SIGKILL to those still
        running after ``grace`` seconds; reaps them and lets their output drain."""
        stop_processes([m.proc for m in (self.alive() if members is None else members)], grace)
        for pump in self._pumps:
            pump.join(timeout=2.0)


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Signals ``proc``'s process group (gone already: nothing to do)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_processes(procs: Sequence[subprocess.Popen], grace: float) -> None:
    """SIGTERM (and SIGCONT) to each live process's group, SIGKILL after ``grace``, reaped."""
    procs = [p for p in procs if p.poll() is None]
    for proc in procs:
        signal_group(proc, signal.SIGTERM)
        signal_group(proc, signal.SIGCONT)  # a stopped (hung) process must see it too
    end = time.monotonic() + grace
    while time.monotonic() < end and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    for proc in procs:
        if proc.poll() is None:
            signal_group(proc, signal.SIGKILL)
        try:
            proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            pass
