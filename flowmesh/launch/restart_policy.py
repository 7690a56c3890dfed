"""When ``flowmesh launch`` restarts a failed task, and when it gives up.

``--max-restarts K`` lets every task fail (exit with a non-zero status, or be killed by a
signal) and be restarted with the same identity up to ``K`` times; ``--max-restarts
ps=5,worker=2`` (or the option repeated) sets a budget per job, and a bare number is
the default for jobs not named. A task that fails once more after its budget is spent
fails the whole job: the launcher stops every task and exits with a non-zero status.

A task that exits with status 0 has finished and is never restarted. Without
``--max-restarts`` the launcher keeps its original behaviour: nothing is restarted, a
failed chief (worker 0 without ``--chief``) stops the job, other failures are reported.

Example:
    >>> policy = RestartPolicy.parse(["2", "ps=5"])
    >>> policy.limit("ps"), policy.limit("worker")
    (5, 2)
"""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


def describe_exit(code: int) -> str:
    """``"exited with status 3"`` or ``"was killed by SIGKILL"`` for a ``Popen.returncode``."""
    if code >= 0:
        return f"exited with status {code}"
    try:
        return f"was killed by {signal.Signals(-code).name}"
    except ValueError:
        return f"was killed by signal {-code}"


def shell_status(code: int) -> int:
    """The exit status a shell reports for ``code`` (128 + N for a signal), never 0."""
    if code < 0:
        return 128 + (-code)
    return code or 1


@dataclass(frozen=True)
class RestartPolicy:
    """How many times a task of each job may be restarted.

    Attributes:
        default: the budget of jobs not named in ``per_job``; None when restarts are off
            for them.
        per_job: budgets by job name.
    """

    default: int | None = None
    per_job: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for job, limit in [("(default)", self.default), *self.per_job.items()]:
            if limit is not None and limit < 0:
                raise ValueError(f"--max-restarts for {job} must be >= 0, got {limit}")

    @property
    def enabled(self) -> bool:
        """Whether any failure is handled by this policy (else: the legacy behaviour)."""
        return self.default is not None or bool(self.per_job)

    @property
    def allows_restarts(self) -> bool:
        """Whether some task may be restarted at all."""
        return bool(self.default) or any(v > 0 for v in self.per_job.values())

    def limit(self, job: str) -> int | None:
        """The restart budget of ``job`` (None: the policy does not cover it)."""
        return self.per_job.get(job, self.default)

    @classmethod
    def parse(cls, values: Sequence[str] | None) -> RestartPolicy:
        """The policy from ``--max-restarts`` values: ``"3"``, ``"ps=5,worker=2"``.

        Raises:
            ValueError: a value is neither ``K`` nor ``JOB=K`` with an integer ``K >= 0``.
        """
        default: int | None = None
        per_job: dict[str, int] = {}
        for value in values or ():
            for item in filter(None, (s.strip() for s in value.split(","))):
                job, sep, count = item.rpartition("=")
                try:
                    number = int(count)
                except ValueError:
                    raise ValueError(f"--max-restarts {value!r}: expected K or JOB=K (e.g. 3 or "
                                     f"ps=5,worker=2) with an integer K >= 0") from None
                if sep and not job:
                    raise ValueError(f"--max-restarts {value!r}: missing the job name before '='")
                if sep:
                    per_job[job] = number
                else:
                    default = number
        return cls(default, per_job)


@dataclass(frozen=True)
class Decision:
    """What to do with a task that exited: ``action`` is ``"done"`` (finished),
    ``"restart"``, ``"fail"`` (stop the job) or ``"ignore"`` (legacy: report only)."""

    action: str
    message: str


class RestartTracker:
    """Counts restarts per task and applies a :class:`RestartPolicy` to each exit."""

    def __init__(self, policy: RestartPolicy):
        self.policy = policy
        self.restarts: dict[str, int] = {}

    def decide(self, job: str, name: str, code: int) -> Decision:
        """The decision for task ``name`` (of ``job``) that exited with ``code``."""
        how = describe_exit(code)
        if code == 0:
            return Decision("done", f"{name} exited with status 0")
        limit = self.policy.limit(job) if self.policy.enabled else None
        if limit is None:
            return Decision("ignore", f"{name} {how}")
        done = self.restarts.get(name, 0)
        if done < limit:
            self.restarts[name] = done + 1
            return Decision("restart", f"{name} {how}; restarting it with the same "
                                       f"identity (restart {done + 1} of {limit})")
        times = "time" if done == 1 else "times"
        return Decision("fail", f"{name} {how} after being restarted {done} {times} "
                                f"(--max-restarts allows {limit} for job '{job}'); stopping every task")
