"""``tf.train.ProfilerHook``: every N steps or seconds, traces one step (``FULL_TRACE``) and
writes its timeline as Chrome trace JSON (``<output_dir>/timeline-<step>.json``, open it in
``chrome://tracing`` or Perfetto), plus the step's ``RunMetadata`` into the directory's
event file (TensorBoard's "Session runs"), as TensorFlow's hook does."""

from __future__ import annotations

import logging
import os
from typing import Any

from flowmesh.runtime.options import RunOptions
from flowmesh.runtime.timeline import Timeline
from flowmesh.summary.writer import FileWriterCache
from flowmesh.train.basic_session_run_hooks import SecondOrStepTimer, _global_step_read
from flowmesh.train.session_run_hook import SessionRunArgs, SessionRunHook

_log = logging.getLogger("flowmesh.train")


class ProfilerHook(SessionRunHook):
    """Captures a traced step every ``save_steps`` steps or ``save_secs`` seconds.

    Args:
        save_steps: trace every this many steps (exactly one of ``save_steps``/``save_secs``).
        save_secs: trace every this many seconds.
        output_dir: where ``timeline-<global step>.json`` files are written.
        show_dataflow: draw arrows between producers and consumers across devices.
        show_memory: accepted for compatibility (flowmesh's traces hold no allocator data).

    Raises:
        ValueError: both or neither of ``save_steps`` and ``save_secs`` are given.
        RuntimeError: (at ``begin``) the graph has no global step.
    """

    def __init__(self, save_steps: int | None = None, save_secs: float | None = None,
                 output_dir: str = "", show_dataflow: bool = True, show_memory: bool = False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._next_step: int | None = None
        self._request_summary = False

    def begin(self) -> None:
        self._next_step = None
        self._global_step_tensor = _global_step_read("ProfilerHook")

    def before_run(self, run_context: Any) -> SessionRunArgs:
        self._request_summary = (self._next_step is not None
                                 and self._timer.should_trigger_for_step(self._next_step))
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        stale_global_step = int(run_values.results["global_step"])
        if self._next_step is None:
            # Do not trace before N steps or seconds have passed.
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step),
                       run_values.run_metadata)
        self._next_step = global_step + 1

    def _save(self, step: int, path: str, run_metadata: Any) -> None:
        _log.info("Saving timeline for %d into '%s'.", step, path)
        trace = Timeline(run_metadata.step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory)
        if self._output_dir:
            os.makedirs(self._output_dir, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(trace)
        FileWriterCache.get(self._output_dir).add_run_metadata(run_metadata, f"step_{step}", step)

