"""``tf.estimator.Exporter``, ``LatestExporter``, ``BestExporter`` and ``FinalExporter``:
what ``train_and_evaluate`` runs after an evaluation (``EvalSpec(exporters=...)``), writing
SavedModels under ``model_dir/export/<name>/<timestamp>`` (the model_dir of the process that
evaluates: the evaluator's own one when it reads checkpoints through the chief)."""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Callable
from typing import Any

from flowmesh import gfile
from flowmesh.errors import InvalidArgumentError

logger = logging.getLogger("flowmesh.estimator")


class Exporter:
    """Base class: ``export(estimator, export_path, checkpoint_path, eval_result,
    is_the_final_export)`` returns the written directory or None."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> Any:
        raise NotImplementedError


class LatestExporter(Exporter):
    """Exports after every evaluation and keeps the newest ``exports_to_keep`` exports."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: Any = None,
                 as_text: bool = False, exports_to_keep: int | None = 5):
        if not name:
            raise InvalidArgumentError("an exporter needs a name (its export directory)")
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise InvalidArgumentError(f"exports_to_keep must be positive or None, got {exports_to_keep}")
        self._name = name
        self._receiver_fn = serving_input_receiver_fn
        self._as_text = as_text
        self._assets_extra = assets_extra
        self._keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._name

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> Any:
        written = estimator.export_saved_model(export_path, self._receiver_fn, assets_extra=self._assets_extra,
                                               as_text=self._as_text, checkpoint_path=checkpoint_path)
        self._garbage_collect(export_path)
        return written

    def _garbage_collect(self, export_path: str) -> None:
        if self._keep is None:
            return
        stamps = sorted(int(d) for d in os.listdir(export_path) if d.isdigit())
        for stamp in stamps[:-self._keep]:
            gfile.DeleteRecursively(os.path.join(export_path, str(stamp)))


class FinalExporter(LatestExporter):
    """Exports once, after the final evaluation."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: Any = None,
                 as_text: bool = False):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text, exports_to_keep=None)

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> Any:
        if not is_the_final_export:
            return None
        return super().export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)


def _loss_smaller(best_eval_result: dict, current_eval_result: dict) -> bool:
    """TensorFlow's default ``compare_fn``: the current ``loss`` is smaller than the best."""
    for result in (best_eval_result, current_eval_result):
        if not result or "loss" not in result:
            raise InvalidArgumentError("BestExporter's default compare_fn needs a 'loss' in the "
                                       "evaluation results; give compare_fn to compare other metrics")
    return float(current_eval_result["loss"]) < float(best_eval_result["loss"])


class BestExporter(LatestExporter):
    """Exports after an evaluation better than every earlier one (``compare_fn(best,
    current)``, default: smaller ``loss``). On its first evaluation it reads the best
    earlier result from the event files ``model_dir/<event_file_pattern>`` (so a restarted
    evaluator remembers it); keeps the newest ``exports_to_keep`` exports."""

    def __init__(self, name: str = "best_exporter", serving_input_receiver_fn: Callable | None = None,
                 event_file_pattern: str | None = "eval/*.tfevents.*", compare_fn: Callable = _loss_smaller,
                 assets_extra: Any = None, as_text: bool = False, exports_to_keep: int | None = 5):
        if serving_input_receiver_fn is None:
            raise InvalidArgumentError("BestExporter needs a serving_input_receiver_fn")
        if not callable(compare_fn):
            raise InvalidArgumentError(f"BestExporter: compare_fn must be callable, got {compare_fn!r}")
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text, exports_to_keep)
        self._compare = compare_fn
        self._pattern = event_file_pattern
        self._best: dict | None = None
        self._read_events = False

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: dict,
               is_the_final_export: bool) -> Any:
        if not self._read_events:
            self._read_events = True
            self._best = self._best_in_events(estimator.model_dir, eval_result)
        if self._best is not None and not self._compare(self._best, eval_result):
            return None
        self._best = dict(eval_result)
        return super().export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)

    def _best_in_events(self, model_dir: str, current: dict) -> dict | None:
        """The best result in the event files, not counting ``current`` (already written)."""
        from flowmesh.summary.reader import summary_iterator

        if not self._pattern:
            return None
        results: dict[int, dict] = {}
        for path in sorted(glob.glob(os.path.join(model_dir, self._pattern))):
            for event in summary_iterator(path):
                if not event.HasField("summary"):
                    continue
                values = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")}
                if values:
                    results.setdefault(int(event.step), {}).update(values, global_step=int(event.step))
        step = int(current.get("global_step", -1))
        best = None
        for result in (r for s, r in sorted(results.items()) if s != step):
            if best is None or self._compare(best, result):
                best = result
        if best is not None:
            logger.info("BestExporter %s: best earlier evaluation %s", self.name, best)
        return best
