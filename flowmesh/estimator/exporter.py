"""``tf.estimator.Exporter``, ``LatestExporter`` and ``FinalExporter``: what
``train_and_evaluate`` runs after an evaluation (``EvalSpec(exporters=...)``), writing
SavedModels under ``model_dir/export/<name>/<timestamp>``."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from flowmesh import gfile
from flowmesh.errors import InvalidArgumentError


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
