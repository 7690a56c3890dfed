"""``results.csv``: one row per finished trial, appended as each ends (so a sweep that
crashes keeps what it finished, and a rerun with the same arguments skips those trials),
and ``sweep.png``: the metric of every trial and the best so far."""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from typing import Any

from flowmesh.sweep.space import typed

FIXED = ("trial", "status", "seconds")


@dataclass
class Row:
    trial: int
    status: str  # done, stopped (early), failed
    value: float | None
    seconds: float
    params: dict[str, Any]


def key(params: dict[str, Any]) -> str:
    """A trial's identity: its parameters."""
    return repr(sorted((k, str(v)) for k, v in params.items()))


def load(path: str, metric: str) -> list[Row]:
    """Rows of an earlier run of the sweep (none when there is no file)."""
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        rows = []
        for record in csv.DictReader(f):
            value = record.pop(metric, "")
            params = {k: typed(v) for k, v in record.items() if k not in FIXED}
            rows.append(Row(int(record["trial"]), record["status"], float(value) if value else None,
                            float(record["seconds"]), params))
        return rows


def append(path: str, metric: str, row: Row) -> None:
    """Adds ``row`` (writing the header first into a new file), flushed to disk."""
    names = list(row.params)
    new = not os.path.exists(path)
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        if new:
            writer.writerow([*FIXED[:2], metric, FIXED[2], *names])
        value = "" if row.value is None else repr(row.value)
        writer.writerow([row.trial, row.status, value, f"{row.seconds:.2f}", *(row.params[n] for n in names)])
        f.flush()
        os.fsync(f.fileno())


def best(rows: list[Row], mode: str) -> Row | None:
    """The best finished trial (stopped trials count with their last value)."""
    scored = [r for r in rows if r.value is not None and not math.isnan(r.value)]
    if not scored:
        return None
    return (max if mode == "max" else min)(scored, key=lambda r: r.value)


def plot(path: str, rows: list[Row], metric: str, mode: str) -> bool:
    """Writes ``sweep.png``; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return False
    rows = sorted(rows, key=lambda r: r.trial)
    fig, ax = plt.subplots(figsize=(7, 4))
    for status, color in (("done", "tab:blue"), ("stopped", "tab:orange"), ("failed", "tab:red")):
        points = [(r.trial, r.value) for r in rows if r.status == status and r.value is not None]
        if points:
            ax.scatter(*zip(*points), color=color, label=status)
    running, best_so_far = None, []
    for r in rows:
        if r.value is not None and (running is None or (r.value > running if mode == "max" else r.value < running)):
            running = r.value
        best_so_far.append(running)
    ax.step([r.trial for r in rows], best_so_far, where="post", color="black", label=f"best ({mode})")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel("trial")
    ax.set_ylabel(metric)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
