"""Epoch values of the loss and metrics from per-batch values, as tf-keras reports them.

The loss is averaged over samples (each batch weighs its size). A metric of a masked output
is a mean over the unmasked elements of the whole epoch (tf-keras's stateful ``Mean``
with the mask as sample weight), so its batches weigh their unmasked counts; the training
graph fetches those counts after the metrics (``metric_counts``, ``metric_count_slots``).
"""

from __future__ import annotations

from typing import Any


def count_fetches(graph: Any) -> list[Any]:
    """The extra tensors to fetch after the loss and metrics (unmasked counts)."""
    return list(getattr(graph, "metric_counts", []))


class EpochMeans:
    """Accumulates ``[loss, *metrics, *counts]`` batch values into epoch means."""

    def __init__(self, graph: Any, names: list[str]):
        self.size = len(names)
        self.slots = list(getattr(graph, "metric_count_slots", [])) or [None] * (self.size - 1)
        # Accumulating metrics (AUC...) report their value after the last batch; starting an
        # epoch (or an evaluation) resets them.
        self.last = {1 + k for k in getattr(graph, "stateful_slots", ())}
        reset = getattr(graph, "reset_stateful_metrics", None)
        if reset is not None and self.last:
            reset()
        self.sums = [0.0] * self.size
        self.weights = [0.0] * self.size
        self._by_size = all(slot is None for slot in self.slots)
        self._last: dict[int, float] = {}

    def add(self, values: Any, batch_size: int) -> list[float]:
        """Adds one batch; returns its ``[loss, *metrics]`` values."""
        values = [float(v) for v in values]
        main, counts = values[:self.size], values[self.size:]
        size = float(batch_size)
        if self._by_size:  # no masked metric: every value weighs the batch size
            weights = [size] * self.size
        else:  # graphs that fetch no counts (the distributed step) weigh every metric by batch size
            weights = [size] + [counts[slot] if slot is not None and slot < len(counts) else size
                                for slot in self.slots]
        sums, totals = self.sums, self.weights
        for i, (value, weight) in enumerate(zip(main, weights)):
            sums[i] += value * weight
            totals[i] += weight
        for i in self.last:
            self._last[i] = main[i]
        return main

    def means(self) -> list[float]:
        return [self._last[i] if i in self.last and i in self._last else float(s / w) if w > 0 else 0.0
                for i, (s, w) in enumerate(zip(self.sums, self.weights))]
