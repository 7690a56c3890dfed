"""The standard session hooks of ``tf.train``.

=========================  ================================================================
hook                       what it does
=========================  ================================================================
``StopAtStepHook``         stops after ``num_steps`` more steps or at ``last_step``
``CheckpointSaverHook``    saves a checkpoint every N steps or seconds, at session creation
                           and at the end
``LoggingTensorHook``      logs tensor values every N steps / seconds / at the end
``NanTensorHook``          fails (or stops) when the loss becomes NaN
``StepCounterHook``        logs global steps per second (and writes them as a summary)
``SummarySaverHook``       writes the summary op's value every N steps or seconds
``FinalOpsHook``           runs ops when the session closes, keeps their values
``FeedFnHook``             feeds ``feed_fn()`` into every step
``GlobalStepWaiterHook``   delays a worker until the global step reaches a value
=========================  ================================================================

Hooks log through the ``flowmesh.train`` logger (INFO level). Hooks given an output
directory write event files through ``tf.summary.FileWriterCache`` (one file per
directory), as TensorFlow's do: the step rate as ``global_step/sec``, the summaries,
the graph and a ``CHECKPOINT`` session log after each save.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from flowmesh.checkpoint.state import latest_checkpoint
from flowmesh.core.graph import GraphKeys, Tensor, get_default_graph
from flowmesh.formats import filesystem as fs
from flowmesh.protos.summary import SessionLog, Summary, SummaryValue
from flowmesh.summary.writer import FileWriterCache
from flowmesh.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

logger = logging.getLogger("flowmesh.train")


class _HookTimer:
    """Base of the timers deciding when a periodic hook triggers."""

    def reset(self) -> None:
        pass

    def should_trigger_for_step(self, step: int) -> bool:
        raise NotImplementedError

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        raise NotImplementedError

    def last_triggered_step(self) -> int | None:
        raise NotImplementedError


class SecondOrStepTimer(_HookTimer):
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one).

    Raises:
        ValueError: neither or both given.
    """

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None):
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_steps or every_secs should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_steps and every_secs.")

    def reset(self) -> None:
        self._last_triggered_step: int | None = None
        self._last_triggered_time: float | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_triggered_step + self._every_steps

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        now = time.time()
        if self._last_triggered_time is None:
            elapsed: tuple[float | None, int | None] = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self) -> int | None:
        return self._last_triggered_step


class NeverTriggerTimer(_HookTimer):
    """A timer that never triggers."""

    def should_trigger_for_step(self, step: int) -> bool:
        return False

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        return (None, None)

    def last_triggered_step(self) -> int | None:
        return None


def _global_step_read(hook: str) -> Tensor:
    """The global step's value tensor; RuntimeError naming ``hook`` when there is none."""
    from flowmesh.train.training_util import get_global_step

    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook}. Call "
                           "tf.train.get_or_create_global_step() before creating the session.")
    return step.value()


def _as_graph_element(obj: Any) -> Any:
    """A tensor or op for ``obj`` (``"loss"`` means the tensor ``loss:0``)."""
    graph = get_default_graph()
    if isinstance(obj, str) and ":" not in obj:
        op = graph.get_operation_by_name(obj)
        return op.outputs[0] if len(op.outputs) == 1 else op
    return graph.as_graph_element(obj)


class StopAtStepHook(SessionRunHook):
    """Requests a stop at a global step.

    Args:
        num_steps: steps to run from the global step when the session is created.
        last_step: the global step to stop at. Give exactly one.
    """

    def __init__(self, num_steps: int | None = None, last_step: int | None = None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step_tensor = _global_step_read("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if int(run_values.results) + 1 >= self._last_step:
            step = int(run_context.session.run(self._global_step_tensor))
            if step >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Callbacks around the saves of a :class:`CheckpointSaverHook`.

    ``after_save`` may return True to request that training stops.
    """

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves checkpoints every ``save_steps`` steps or ``save_secs`` seconds.

    A checkpoint is also written right after the session is created (the state at that
    global step) and when the session ends. Unlike TensorFlow, the save at creation is
    skipped when the latest checkpoint already has that step: it is the one the session
    was just restored from, and in asynchronous training rewriting it could store a step
    more than its name says (another worker may count one between the read of the global
    step and the save).

    Args:
        checkpoint_dir: where to write ``checkpoint_basename-<step>`` checkpoints.
        save_secs / save_steps: the period (exactly one).
        saver: the Saver to use (default: the scaffold's, else the ``SAVERS`` collection).
        checkpoint_basename: the checkpoint file prefix.
        scaffold: take the saver from this scaffold.
        listeners: :class:`CheckpointSaverListener` objects.
        save_graph_def: also write the ``.meta`` graph with each checkpoint.

    Raises:
        ValueError: both ``saver`` and ``scaffold``, or a bad period.
    """

    def __init__(self, checkpoint_dir: str, save_secs: float | None = None, save_steps: int | None = None,
                 saver: Any = None, checkpoint_basename: str = "model.ckpt", scaffold: Any = None,
                 listeners: Sequence[CheckpointSaverListener] | None = None, save_graph_def: bool = True):
        logger.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = fs.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._steps_per_run = 1
        self._save_graph_def = save_graph_def

    def _set_steps_per_run(self, steps_per_run: int) -> None:
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        self._global_step_tensor = _global_step_read("CheckpointSaverHook")
        fs.makedirs(self._checkpoint_dir)
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            self._summary_writer.add_graph(get_default_graph())
        latest = latest_checkpoint(self._checkpoint_dir)
        if latest is not None and latest.endswith(f"-{global_step}"):
            logger.info("Checkpoint for step %d exists (%s); not rewriting it.", global_step, latest)
        else:
            self._save(session, global_step)  # the state at the step the session starts from
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)
        self._summary_writer.flush()

    def _save(self, session: Any, step: int) -> bool:
        """Saves; returns True when a listener asks to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        logger.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logger.info("A CheckpointSaverListener requested that training be stopped: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the "
                               "collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate "
                               "which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver


class LoggingTensorHook(SessionRunHook):
    """Logs tensor values every ``every_n_iter`` steps or ``every_n_secs`` seconds.

    Args:
        tensors: a dict ``tag -> tensor or name``, or a list of tensors/names.
        every_n_iter / every_n_secs: the period (exactly one unless ``at_end``).
        at_end: also log the values when the session ends.
        formatter: ``formatter(dict tag -> value) -> str`` instead of ``tag = value``.

    Raises:
        ValueError: no or both periods (without ``at_end``), or a non-positive period.
    """

    def __init__(self, tensors: Any, every_n_iter: int | None = None, every_n_secs: float | None = None,
                 at_end: bool = False, formatter: Callable[[dict[str, Any]], str] | None = None):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be "
                             "provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = [t if isinstance(t, str) else t.name for t in tensors]
            tensors = dict(zip(self._tag_order, tensors))
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._timer = NeverTriggerTimer() if only_log_at_end else \
            SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        self._log_at_end = at_end

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, values: dict[str, Any]) -> None:
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter is not None:
            logger.info(self._formatter(values))
            return
        with np.printoptions(suppress=True):
            stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
        if elapsed_secs is not None:
            logger.info("%s (%.3f sec)", stats, elapsed_secs)
        else:
            logger.info("%s", stats)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class NanLossDuringTrainingError(RuntimeError):
    """The loss became NaN (raised by :class:`NanTensorHook`)."""

    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Watches ``loss_tensor``: on NaN, raises :class:`NanLossDuringTrainingError`
    (``fail_on_nan_loss=True``) or requests a stop."""

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if np.isnan(run_values.results).any():
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                logger.error(message)
                raise NanLossDuringTrainingError
            logger.warning(message)
            run_context.request_stop()


class StepCounterHook(SessionRunHook):
    """Logs ``global_step/sec`` every ``every_n_steps`` steps or ``every_n_secs`` seconds,
    and writes it as a summary to ``summary_writer`` (or ``output_dir``'s shared writer)."""

    def __init__(self, every_n_steps: int | None = 100, every_n_secs: float | None = None,
                 output_dir: str | None = None, summary_writer: Any = None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir = output_dir
        self._summary_writer = summary_writer
        self._last_global_step: int | None = None
        self._steps_per_run = 1
        self._warnings = 0
        self.steps_per_sec: list[tuple[int, float]] = []  # (global step, rate) as logged

    def _set_steps_per_run(self, steps_per_run: int) -> None:
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        self._global_step_tensor = _global_step_read("StepCounterHook")
        from flowmesh.train.training_util import get_global_step

        self._summary_tag = f"{get_global_step().op.name}/sec"
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time:
                    rate = elapsed_steps / elapsed_time
                    self.steps_per_sec.append((global_step, rate))
                    if self._summary_writer is not None:
                        value = SummaryValue(tag=self._summary_tag, simple_value=rate)
                        self._summary_writer.add_summary(Summary(value=[value]), global_step)
                    logger.info("%s: %g", self._summary_tag, rate)
        if stale_global_step == self._last_global_step and self._warnings < 5:
            self._warnings += 1
            logger.warning(
                "It seems that global step (tf.train.get_global_step) has not been increased. "
                "Current value (could be stable): %s vs previous value: %s. You could increase the "
                "global step by passing tf.train.get_global_step() to Optimizer.apply_gradients or "
                "Optimizer.minimize.", stale_global_step, self._last_global_step)
        self._last_global_step = stale_global_step


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every ``save_steps`` steps or ``save_secs`` seconds and writes its
    value (``tf.train.SummarySaverHook``); the first step also logs a ``START`` session log.

    Args:
        save_steps / save_secs: the period (exactly one).
        output_dir: where the shared ``FileWriter`` writes (when ``summary_writer`` is None).
        summary_writer: a ``tf.summary.FileWriter``.
        scaffold: take the summary op from this scaffold (``Scaffold.summary_op``: every
            summary of the graph by default).
        summary_op: a summary tensor or a list of them. Give exactly one of ``scaffold``
            and ``summary_op``.

    Raises:
        ValueError: neither or both of ``scaffold`` and ``summary_op``, or a bad period.
    """

    def __init__(self, save_steps: int | None = None, save_secs: float | None = None,
                 output_dir: str | None = None, summary_writer: Any = None, scaffold: Any = None,
                 summary_op: Any = None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step: int | None = None
        self._global_step_tensor = _global_step_read("SummarySaverHook")

    def _summary_ops(self) -> list[Any] | None:
        op = self._scaffold.summary_op if self._scaffold is not None else self._summary_op
        if op is None:
            return None
        return list(op) if isinstance(op, (list, tuple)) else [op]

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests: dict[str, Any] = {"global_step": self._global_step_tensor}
        ops = self._summary_ops() if self._request_summary else None
        if ops:
            requests["summary"] = ops
        return SessionRunArgs(requests)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._summary_writer is None:
            return
        # The global step this run left. The read fetched with the step may come before or
        # after the step's own increment (TensorFlow does not order them either), so count
        # one step on from the last known value, or take the read when it is ahead (other
        # workers); re-read it exactly whenever a summary is written.
        stale = int(run_values.results["global_step"])
        global_step = stale if self._next_step is None else max(self._next_step, stale)
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session: Any) -> None:
        if self._summary_writer is not None:
            self._summary_writer.flush()


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` when the session ends; their values are in ``final_ops_values``."""

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict | None = None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values: Any = None

    @property
    def final_ops_values(self) -> Any:
        return self._final_ops_values

    def end(self, session: Any) -> None:
        if self._final_ops is not None:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)


class FeedFnHook(SessionRunHook):
    """Feeds the dict returned by ``feed_fn()`` into every run."""

    def __init__(self, feed_fn: Callable[[], dict]):
        self.feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first step until the global step reaches ``wait_until_step`` (lets the
    chief make progress before workers start, as TensorFlow's hook does)."""

    def __init__(self, wait_until_step: int, poll_secs: float = 0.5):
        self._wait_until_step = wait_until_step
        self._poll_secs = poll_secs

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step_tensor = _global_step_read("GlobalStepWaiterHook")

    def before_run(self, run_context: SessionRunContext) -> None:
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        logger.info("Waiting for global step %d before starting training.", self._wait_until_step)
        while True:
            current = int(run_context.session.run(self._global_step_tensor))
            if current >= self._wait_until_step:
                self._worker_is_started = True
                return None
            time.sleep(self._poll_secs)
