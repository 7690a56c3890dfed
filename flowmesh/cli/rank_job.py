"""The processes of one ``flowmesh run`` launch: spawning ranks, pumping their output with
a ``[rank]`` prefix, the stop-everyone-on-failure policy, and how a launch ended.

``cli/run.py`` (fixed worlds) and ``cli/elastic_job.py`` (elastic worlds, a subclass)
both use it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO

from flowmesh.launch.processes import ProcessGroup

_GRACE_S = 3.0


@dataclass
class RunResult:
    """How a launch ended.

    Attributes:
        returncode: 0, or the status of the first rank that failed.
        failed_rank: that rank, or None.
        returncodes: every rank's status (None when it was killed by the launcher).
        output: captured ``(rank, stream, line)`` tuples when capturing.
    """

    returncode: int
    failed_rank: int | None
    returncodes: list[int | None]
    output: list[tuple[int, str, str]] = field(default_factory=list)



def resolve_command(command: Sequence[str]) -> list[str]:
    """``SCRIPT.py ARGS`` and ``python SCRIPT ARGS`` run with this interpreter.

    Raises:
        ValueError: an empty command.
    """
    command = list(command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise ValueError("empty command: give `python SCRIPT [ARGS]` or `SCRIPT.py [ARGS]`")
    if command[0] in ("python", "python3"):
        return [sys.executable, *command[1:]]
    if command[0].endswith(".py"):
        return [sys.executable, *command]
    return command


class RankJob:
    """The ranks of one launch, their output and the failure policy (on a
    :class:`~flowmesh.launch.processes.ProcessGroup`)."""

    def __init__(self, np: int, argv: list[str], env: dict[str, str], prefix: bool,
                 sink: IO[str] | None, capture: bool, first_rank: int = 0, kind: str = "rank"):
        self.output: list[tuple[int, str, str]] = []
        self.capture = capture
        self.sink = sink
        self.prefix = prefix
        self.group = ProcessGroup(self._line, merge_stderr=False)
        self.lock = self.group.lock
        self.procs: list[subprocess.Popen] = []
        self.first_rank = first_rank
        self.kind = kind  # what a process is, in reports: "rank", or "node" for -H launchers
        for local in range(np):
            rank = first_rank + local
            self.spawn(argv, dict(env, FLOWMESH_RANK=str(rank), FLOWMESH_LOCAL_RANK=str(local)), rank)

    def spawn(self, argv: list[str], env: dict[str, str], label: int,
              stdin: bool = False) -> subprocess.Popen:
        """Starts one process whose output lines are prefixed with ``[label]`` (``stdin``:
        a pipe to write to, e.g. a secret for ssh, instead of this process's input)."""
        member = self.group.spawn(argv, env, str(label), stdin=subprocess.PIPE if stdin else None)
        self.procs.append(member.proc)
        return member.proc

    def _line(self, label: str, stream: str, line: str) -> None:
        """A rank's line: kept when capturing, printed (prefixed) to the sink; standard
        error goes to this process's standard error when the sink is standard output."""
        if self.capture:
            self.output.append((int(label), stream, line))
        if self.sink is not None:
            text = f"[{label}] {line}" if self.prefix else line
            target = sys.stderr if (stream == "stderr" and self.sink is sys.stdout) else self.sink
            print(text, file=target, flush=True)

    def wait(self, timeout: float | None, failure_grace: float,
             elsewhere: Callable[[], str | None] | None = None) -> RunResult:
        """Waits for the ranks; the first failure (or, with ``elsewhere``, a failure another
        launcher of the job reports) stops the others.

        Args:
            timeout: seconds before every rank is killed (status 124).
            failure_grace: seconds the other ranks get to report a failure and exit.
            elsewhere: polled about once a second; returns why the job failed on another
                node, or None.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        next_poll = time.monotonic() + 1.0
        while True:
            codes = [p.poll() for p in self.procs]
            failed = next((r for r, c in enumerate(codes) if c not in (None, 0)), None)
            if failed is not None:
                rank = self.first_rank + failed
                self._report(f"{self.kind} {rank} exited with status {codes[failed]}; stopping "
                             f"the other {self.kind}s")
                self._drain(failure_grace)
                return self._finish(codes[failed] or 1, rank)
            if all(c == 0 for c in codes):
                return self._finish(0, None)
            if deadline is not None and time.monotonic() > deadline:
                self._report(f"timed out after {timeout:g}s; killing every rank")
                return self._finish(124, None)
            if elsewhere is not None and time.monotonic() > next_poll:
                reason = elsewhere()
                if reason is not None:
                    self._report(f"the job failed on another node ({reason}); stopping this "
                                 "node's ranks")
                    self._drain(failure_grace)
                    return self._finish(1, None)
                next_poll = time.monotonic() + 1.0
            time.sleep(0.05)

    def _drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and any(p.poll() is None for p in self.procs):
            time.sleep(0.05)

    def _finish(self, code: int, failed: int | None) -> RunResult:
        self.kill_all()
        codes = [p.poll() for p in self.procs]
        return RunResult(code, failed, codes, list(self.output))

    def _report(self, message: str) -> None:
        with self.lock:
            print(f"flowmesh run: {message}", file=sys.stderr, flush=True)

    def kill_all(self) -> None:
        """Terminates the ranks still running (their process groups), then kills them."""
        self.group.stop(_GRACE_S)
