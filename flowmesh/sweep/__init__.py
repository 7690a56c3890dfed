"""``flowmesh sweep``: parallel hyperparameter experiments.

Each trial runs ``SCRIPT ARGS --NAME=VALUE ...`` and reports metrics by printing
``NAME: <float>`` lines (or calling :func:`report`); the last line of the sweep's metric
is the trial's result, the earlier ones feed early stopping. See ``flowmesh/cli/sweep.py``.
"""

from __future__ import annotations

import sys


def report(**metrics: float) -> None:
    """Reports metrics from inside a trial (one ``NAME: value`` line each, flushed), e.g.
    ``flowmesh.sweep.report(accuracy=0.93)`` once per epoch."""
    for name, value in metrics.items():
        print(f"{name}: {float(value)!r}", file=sys.stdout, flush=True)


__all__ = ["report"]
