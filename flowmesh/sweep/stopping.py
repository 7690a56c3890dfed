"""Early stopping from the metric values trials report along the way.

``median``: a trial is stopped at its r-th report when its best value so far is worse
than the median of what the other trials reported at their r-th report (at least
``min_trials`` of them), after a ``grace`` of reports (Vizier's median rule).

``asha``: successive halving without waiting (ASHA). Rungs sit at ``grace * eta**k``
reports; a trial reaching a rung goes on only while its value there is in the top
``1/eta`` of the values every trial reached at that rung.
"""

from __future__ import annotations

import statistics
from collections import defaultdict


class Stopper:
    """Keeps every trial's reports; ``should_stop`` decides after each new one."""

    def __init__(self, rule: str, mode: str, grace: int = 1, min_trials: int = 3, eta: int = 3):
        if rule not in ("median", "asha"):
            raise ValueError(f"--early-stop {rule!r}: median or asha")
        self.rule, self.grace, self.min_trials, self.eta = rule, max(1, grace), min_trials, eta
        self._better = (lambda a, b: a > b) if mode == "max" else (lambda a, b: a < b)
        self._reports: dict[int, list[float]] = defaultdict(list)

    def should_stop(self, trial: int, value: float) -> bool:
        """Records ``trial``'s next report; True when the trial should stop now."""
        reports = self._reports[trial]
        reports.append(value)
        step = len(reports)
        if step < self.grace:
            return False
        if self.rule == "median":
            return self._median_stop(trial, step)
        return self._asha_stop(trial, step)

    def _median_stop(self, trial: int, step: int) -> bool:
        others = [r[step - 1] for t, r in self._reports.items() if t != trial and len(r) >= step]
        if len(others) < self.min_trials:
            return False
        best = self._best(self._reports[trial])
        median = statistics.median(others)
        return self._better(median, best)

    def _asha_stop(self, trial: int, step: int) -> bool:
        rung = self.grace
        while rung < step:
            rung *= self.eta
        if rung != step:
            return False
        at_rung = sorted((r[step - 1] for r in self._reports.values() if len(r) >= step),
                         reverse=self._better(1.0, 0.0))
        if len(at_rung) < self.eta:
            return False
        keep = at_rung[: max(1, len(at_rung) // self.eta)]
        return not any(v == self._reports[trial][step - 1] for v in keep)

    def _best(self, values: list[float]) -> float:
        best = values[0]
        for v in values[1:]:
            if self._better(v, best):
                best = v
        return best
