"""A warm spare interpreter that ``flowmesh launch`` turns into a restarted task.

Starting a task costs a new interpreter plus ``import flowmesh`` (torch, the op and kernel
registries): seconds on a loaded machine, most of a worker's recovery time. When restarts
are allowed the launcher keeps one standby process that has already imported flowmesh and
waits on its stdin; to restart a task it writes one JSON line::

    {"argv": ["train.py", "--steps", "100"], "env": {"TF_CONFIG": "...", ...}}

(``argv`` may also be ``["-m", "package.module", ...]``). The standby replaces its
environment with ``env``, points stdin at ``/dev/null`` and runs the script as
``__main__`` exactly as ``python train.py --steps 100`` would (``sys.argv``, ``sys.path[0]``,
exit status, tracebacks). Environment variables read while importing torch (such as
``OMP_NUM_THREADS``) are the ones the standby was started with, which the launcher keeps
equal to the tasks'. End of input without an assignment exits with status 0.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from collections.abc import Sequence
from typing import Any

from flowmesh import config


def _read_assignment() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    if not line.strip():
        return None
    spec = json.loads(line)
    if not isinstance(spec, dict) or not isinstance(spec.get("argv"), list) or not spec["argv"]:
        raise ValueError(f"standby: expected {{'argv': [...], 'env': {{...}}}}, got {line[:200]!r}")
    return spec


def _detach_stdin() -> None:
    """Points fd 0 (and ``sys.stdin``) at /dev/null, as the launcher does for cold starts."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as the process


def run_assignment(argv: Sequence[str]) -> None:
    """Runs ``script args...`` or ``-m module args...`` as ``__main__``."""
    if argv[0] == "-m":
        if len(argv) < 2:
            raise ValueError("standby: '-m' needs a module name")
        sys.argv = [argv[1], *argv[2:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = argv[0]
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


def main() -> int:
    """Imports flowmesh, waits for an assignment, runs it; returns the exit status."""
    import flowmesh  # noqa: F401 - the point of a standby: pay for the imports in advance

    spec = _read_assignment()
    if spec is None:
        return 0
    config.replace_process_environment(spec.get("env") or {})
    _detach_stdin()
    run_assignment([str(a) for a in spec["argv"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
