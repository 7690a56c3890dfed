"""How flowmesh uses the cores: OpenMP's wait policy, chosen before torch loads.

torch runs its CPU kernels on OpenMP (GNU libgomp here) teams whose idle threads, by
default, spin for a while at every barrier and between parallel regions. On a machine
whose cores are shared (another job, a data loader, the several tasks ``flowmesh launch``
starts per host) a spinning team waits at every barrier for a member the OS has
descheduled: a training step fell from hundreds of steps/s to 2-20 (benchmarks/RESULTS.md,
session 13). TensorFlow needs no user setting for this because it owns its thread pools;
flowmesh owns its threading the same way. :func:`configure_openmp`, run when this module
is imported (``import flowmesh`` does that first), chooses OpenMP's wait policy before
torch loads libgomp (which reads it once, at load): ``FLOWMESH_OMP_WAIT_POLICY`` unless
the user set ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` themselves. The default, ``AUTO``,
decides from the machine at import: ``PASSIVE`` (idle threads sleep at once) when it is
already oversubscribed (1-minute load average >= the CPUs this process may use), else
OpenMP's own default. Neither fixed policy holds both cases: on an idle machine PASSIVE
halved the MLP step (threads are woken at every op), while spinning collapsed steps when
ten or more processes shared two cores (benchmarks/RESULTS.md, session 13). If torch was imported before flowmesh it is too late; a
:class:`RuntimeWarning` says so and how to fix it. Child processes (``flowmesh launch``
tasks, test subprocesses) inherit the setting through the environment.

Measured and not kept (benchmarks/RESULTS.md, session 13): a small spin count
(``GOMP_SPINCOUNT``) instead of none, far slower than PASSIVE on an oversubscribed
machine; choosing each step's intra-op thread count by timing steps
with all threads and with one, where one thread measured faster per step in short probes
but got about half the CPU share of two (the scheduler shares cores per thread).

All settings are in :mod:`flowmesh.config`.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable

from flowmesh import config

_configured: list[str] = []  # what configure_openmp decided, for messages and tests


def configure_openmp(environ: dict[str, str] | None = None,
                     busy: Callable[[], bool] | None = None) -> str:
    """Sets OpenMP's wait policy for this process (and its children) before torch loads.

    Args:
        environ: the environment to change (default: this process's; tests pass a dict).
        busy: tells whether the machine is oversubscribed (``AUTO``; default
            :func:`machine_is_busy`).

    Returns:
        What was decided, in words (also kept for :func:`openmp_decision`).
    """
    policy = config.OMP_WAIT_POLICY.get(environ).strip().upper()
    user_set = [s.name for s in (config.USER_OMP_WAIT_POLICY, config.USER_GOMP_SPINCOUNT)
                if s.get(environ)]
    if policy not in ("AUTO", "NONE", "PASSIVE", "ACTIVE"):
        raise ValueError(f"FLOWMESH_OMP_WAIT_POLICY={policy!r} is not an OpenMP wait policy; "
                         f"use AUTO, PASSIVE, ACTIVE, or NONE to leave OpenMP's default")
    if policy == "AUTO" and not user_set:
        policy = "PASSIVE" if (busy or machine_is_busy)() else "NONE"
        if policy == "NONE":
            _configured[:] = ["OpenMP wait policy left to OpenMP (AUTO: the machine is not busy)"]
            return _configured[0]
    if policy == "NONE":
        decision = "OpenMP wait policy left to OpenMP (FLOWMESH_OMP_WAIT_POLICY=NONE)"
    elif user_set:
        decision = f"OpenMP wait policy left as the user set it ({', '.join(user_set)})"
    elif "torch" in sys.modules:
        decision = "OpenMP wait policy NOT set: torch was imported before flowmesh"
        warnings.warn(
            f"torch was imported before flowmesh, so flowmesh could not set "
            f"OMP_WAIT_POLICY={policy} (OpenMP reads it once, when torch loads): on a "
            f"machine whose cores are shared, torch's spinning OpenMP threads can make "
            f"steps 10-100x slower. Import flowmesh before torch, or set "
            f"OMP_WAIT_POLICY={policy} in the environment (FLOWMESH_OMP_WAIT_POLICY=NONE "
            f"silences this).", RuntimeWarning, stacklevel=3)
    else:
        config.USER_OMP_WAIT_POLICY.set(policy, environ)
        decision = f"OMP_WAIT_POLICY={policy} set before torch loads"
    _configured[:] = [decision]
    return decision


def machine_is_busy() -> bool:
    """True when the 1-minute load average already reaches the CPUs this process may use."""
    return load_per_cpu() >= 1.0


def load_per_cpu() -> float:
    """The 1-minute load average per CPU this process may use (0.0 where unknown)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    try:
        return os.getloadavg()[0] / max(1, cpus)
    except OSError:
        return 0.0


def openmp_decision() -> str:
    """What :func:`configure_openmp` decided in this process ('' if it never ran)."""
    return _configured[0] if _configured else ""


configure_openmp()  # at import: ``import flowmesh`` imports this module before torch
