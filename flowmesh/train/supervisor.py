"""``tf.train.Supervisor`` (deprecated in TensorFlow; prefer ``MonitoredTrainingSession``).

A thin layer over :class:`~flowmesh.train.session_manager.SessionManager` and a
:class:`~flowmesh.train.coordinator.Coordinator`: the chief restores or initializes the
model and runs background threads saving a checkpoint every ``save_model_secs`` and, with a
``logdir``, writing the summary op and ``global_step/sec`` every ``save_summaries_secs`` to
an event file (``summary_writer``); other workers wait for the model. Example::

    sv = tf.train.Supervisor(logdir="/tmp/run", is_chief=is_chief)
    with sv.managed_session(server.target) as sess:
        while not sv.should_stop():
            sess.run(train_op)
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.formats import filesystem as fs
from flowmesh.ops.control_flow_ops import group
from flowmesh.ops.summary_ops import merge_all
from flowmesh.ops.variables import (
    global_variables,
    global_variables_initializer,
    local_variables,
    local_variables_initializer,
    report_uninitialized_variables,
)
from flowmesh.protos.summary import SessionLog, Summary, SummaryValue
from flowmesh.summary.writer import FileWriter
from flowmesh.train.coordinator import Coordinator, LooperThread
from flowmesh.train.session_manager import SessionManager

logger = logging.getLogger("flowmesh.train")


def _first_in_collection(graph: Any, key: str) -> Any:
    items = graph.get_collection(key)
    return items[0] if items else None


class Supervisor:
    """Session management for a training program (``tf.train.Supervisor``).

    Args:
        graph: the graph (default: the default graph); it is finalized.
        ready_op, ready_for_local_init_op, init_op, local_init_op, saver, global_step:
            ``Supervisor.USE_DEFAULT`` takes them from the graph collections or builds
            TensorFlow's defaults; None disables them.
        is_chief: whether this worker initializes/restores and checkpoints the model.
        init_feed_dict, init_fn: extra initialization.
        logdir: where checkpoints are restored from and saved to, and where the chief's
            event file goes.
        summary_op: written every ``save_summaries_secs`` by the chief (default: the
            ``SUMMARY_OP`` collection, else ``tf.summary.merge_all()``).
        summary_writer: the chief's ``FileWriter`` (default: a new one in ``logdir``).
        save_summaries_secs: summary period of the chief's background thread (0: none).
        save_model_secs: checkpoint period of the chief's background thread (0: none).
        recovery_wait_secs: longest pause between readiness checks of other workers.
        stop_grace_secs: how long ``stop`` waits for threads.
        checkpoint_basename: checkpoint file prefix inside ``logdir``.
        session_manager: a custom :class:`SessionManager`.
    """

    USE_DEFAULT = 0

    def __init__(self, graph: Any = None, ready_op: Any = USE_DEFAULT, ready_for_local_init_op: Any = USE_DEFAULT,
                 is_chief: bool = True, init_op: Any = USE_DEFAULT, init_feed_dict: dict | None = None,
                 local_init_op: Any = USE_DEFAULT, logdir: str | None = None, summary_op: Any = USE_DEFAULT,
                 saver: Any = USE_DEFAULT, global_step: Any = USE_DEFAULT, save_summaries_secs: float = 120,
                 save_model_secs: float = 600, recovery_wait_secs: float = 30, stop_grace_secs: float = 120,
                 checkpoint_basename: str = "model.ckpt", session_manager: SessionManager | None = None,
                 summary_writer: Any = USE_DEFAULT, init_fn: Callable[[Any], None] | None = None,
                 local_init_run_options: Any = None):
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            self._ready_op, self._ready_for_local_init_op = self._default_ready_ops(ready_op, ready_for_local_init_op)
            self._init_op = self._default(init_op, GraphKeys.INIT_OP, global_variables_initializer)
            self._local_init_op = self._default(local_init_op, GraphKeys.LOCAL_INIT_OP, self._default_local_init)
            self._saver = self._default(saver, GraphKeys.SAVERS, self._default_saver)
            self._global_step = (_first_in_collection(self._graph, GraphKeys.GLOBAL_STEP)
                                 if global_step is Supervisor.USE_DEFAULT else global_step)
            self._summary_op = self._default(summary_op, GraphKeys.SUMMARY_OP, merge_all)
        self._graph.finalize()
        self._is_chief = is_chief
        self._init_feed_dict = init_feed_dict
        self._init_fn = init_fn
        self._logdir = logdir
        self._save_model_secs = save_model_secs
        self._save_summaries_secs = save_summaries_secs
        if summary_writer is Supervisor.USE_DEFAULT:
            summary_writer = FileWriter(logdir) if is_chief and logdir else None
        self._summary_writer = summary_writer
        self._graph_added_to_summary = False
        self._save_path = fs.join(logdir, checkpoint_basename) if logdir else None
        self._stop_grace_secs = stop_grace_secs
        self._coord = Coordinator()
        self._started_threads: list[Any] = []
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
            recovery_wait_secs=recovery_wait_secs, local_init_run_options=local_init_run_options)

    # --- defaults ----------------------------------------------------------------------------
    def _default(self, value: Any, key: str, make: Callable[[], Any]) -> Any:
        if value is not Supervisor.USE_DEFAULT:
            return value
        found = _first_in_collection(self._graph, key)
        if found is None:
            found = make()
            if found is not None:
                self._graph.add_to_collection(key, found)
        return found

    def _default_ready_ops(self, ready_op: Any, ready_for_local_init_op: Any) -> tuple[Any, Any]:
        ready = self._default(ready_op, GraphKeys.READY_OP, report_uninitialized_variables)
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:  # None unless in the collection, as in TF
            ready_for_local_init_op = _first_in_collection(self._graph, GraphKeys.READY_FOR_LOCAL_INIT_OP)
        return ready, ready_for_local_init_op

    def _default_local_init(self) -> Any:
        tables = self._graph.get_collection(GraphKeys.TABLE_INITIALIZERS)
        if not local_variables() and not tables:
            return None
        return group(local_variables_initializer(), *tables)

    @staticmethod
    def _default_saver() -> Any:
        from flowmesh.train.saver import Saver

        return Saver() if global_variables() else None

    # --- properties ----------------------------------------------------------------------------
    @property
    def session_manager(self) -> SessionManager:
        return self._session_manager

    @property
    def coord(self) -> Coordinator:
        return self._coord

    @property
    def is_chief(self) -> bool:
        return self._is_chief

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def init_feed_dict(self) -> dict | None:
        return self._init_feed_dict

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def global_step(self) -> Any:
        return self._global_step

    @property
    def save_model_secs(self) -> float:
        return self._save_model_secs

    @property
    def save_path(self) -> str | None:
        return self._save_path

    @property
    def summary_writer(self) -> FileWriter | None:
        return self._summary_writer

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def save_summaries_secs(self) -> float:
        return self._save_summaries_secs

    # --- sessions ------------------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master: str = "", config: Any = None, wait_for_checkpoint: bool = False,
                                    max_wait_secs: float = 7200, start_standard_services: bool = True) -> Any:
        """The chief restores or initializes the model (and starts the checkpoint thread);
        other workers wait until it is ready."""
        self._coord.clear_stop()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            if start_standard_services:
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def start_standard_services(self, sess: Any) -> list[Any]:
        """Starts the chief's threads: summaries, step rate, checkpoints; writes the graph.

        Raises:
            RuntimeError: called on a non-chief supervisor.
        """
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because only chief "
                               "supervisors can write events.")
        threads = []
        if self._summary_writer is not None:
            self._summary_writer.reopen()  # after an earlier stop() closed it: a new event file
            if not self._graph_added_to_summary:
                self._summary_writer.add_graph(self._graph)
                self._graph_added_to_summary = True
            if self._save_summaries_secs and self._summary_op is not None:
                threads.append(self.loop(self._save_summaries_secs, self._write_summaries, args=(sess,)))
            if self._save_summaries_secs and self._global_step is not None:
                threads.append(self.loop(self._save_summaries_secs, self._write_step_rate, args=(sess, [])))
        if self._save_path and self._save_model_secs and self._saver is not None:
            threads.append(self.loop(self._save_model_secs, self._save_checkpoint, args=(sess,)))
        return threads

    def _save_checkpoint(self, sess: Any) -> None:
        logger.info("Saving checkpoint to path %s", self._save_path)
        self._saver.save(sess, self._save_path, global_step=self._global_step)
        if self._summary_writer is not None:
            step = int(sess.run(self._global_step)) if self._global_step is not None else None
            self._summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)

    def _write_summaries(self, sess: Any) -> None:
        if self._global_step is not None:
            summary, step = sess.run([self._summary_op, self._global_step])
        else:
            summary, step = sess.run(self._summary_op), None
        self._summary_writer.add_summary(summary, step)

    def _write_step_rate(self, sess: Any, last: list[tuple[float, int]]) -> None:
        """``global_step/sec`` since the previous call (``last`` keeps that call's time, step)."""
        now, step = time.time(), int(sess.run(self._global_step))
        if last and now > last[0][0]:
            rate = (step - last[0][1]) / (now - last[0][0])
            tag = f"{self._global_step.op.name}/sec"
            self._summary_writer.add_summary(Summary(value=[SummaryValue(tag=tag, simple_value=rate)]), step)
        last[:] = [(now, step)]

    def summary_computed(self, sess: Any, summary: Any, global_step: int | None = None) -> None:
        """Writes a summary the program computed itself (at the current global step by default).

        Raises:
            RuntimeError: this supervisor has no summary writer (not the chief, or no logdir).
        """
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer (a chief Supervisor with a logdir).")
        if global_step is None and self._global_step is not None:
            global_step = int(sess.run(self._global_step))
        self._summary_writer.add_summary(summary, global_step)

    def start_queue_runners(self, sess: Any, queue_runners: Sequence[Any] | None = None) -> list[Any]:
        """Starts the graph's queue runners under this supervisor's coordinator."""
        runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS) if queue_runners is None else queue_runners
        threads = []
        for runner in runners:
            threads.extend(runner.create_threads(sess, coord=self._coord, daemon=True, start=True))
        self._started_threads.extend(threads)
        return threads

    def loop(self, timer_interval_secs: float, target: Callable[..., Any], args: Sequence[Any] | None = None,
             kwargs: dict[str, Any] | None = None) -> LooperThread:
        """Calls ``target`` every ``timer_interval_secs`` in a thread until stop."""
        looper = LooperThread(self._coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        self._started_threads.append(looper)
        return looper

    def stop(self, threads: Sequence[Any] | None = None, close_summary_writer: bool = True,
             ignore_live_threads: bool = False) -> None:
        """Stops the services and re-raises an exception a thread (or the loop) reported."""
        join = list(self._started_threads) + list(threads or [])
        self._coord.request_stop()
        try:
            self._coord.join(join, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex: Any = None) -> None:
        self._coord.request_stop(ex=ex)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def stop_on_exception(self) -> Any:
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    @contextlib.contextmanager
    def managed_session(self, master: str = "", config: Any = None, start_standard_services: bool = True,
                        close_summary_writer: bool = True) -> Iterator[Any]:
        """A session that is stopped and closed on exit; ``OutOfRangeError`` ends it cleanly,
        other exceptions are re-raised after the services stop."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator, re-raised by stop()
            self.request_stop(exc)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    with contextlib.suppress(Exception):
                        sess.close()
