"""``tf.train.MonitoredTrainingSession``, ``MonitoredSession`` and ``SingularMonitoredSession``.

A monitored session is layered as in TensorFlow::

    MonitoredSession
      _RecoverableSession      re-creates the session after UnavailableError/AbortedError
        _CoordinatedSession    a Coordinator; re-raises errors reported by threads
          _HookedSession       calls the hooks around every run
            tf.Session

Example (the seeds' fault-tolerant loop):
    >>> with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
    ...         checkpoint_dir="/shared/run", hooks=[tf.train.StopAtStepHook(last_step=1000)]) as sess:
    ...     while not sess.should_stop():
    ...         sess.run(train_op)

When a step fails because a parameter server or peer was lost, the session is closed
and re-created; the chief restores the latest checkpoint, workers wait for it, the hooks'
``after_create_session`` runs again and the failed ``run`` is retried. Difference from
TensorFlow: recovery gives up (re-raising the last error) after
``FLOWMESH_RECOVERY_TIMEOUT_S`` seconds of consecutive failures instead of retrying
forever.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flowmesh import config as _config
from flowmesh.errors import AbortedError, OutOfRangeError, UnavailableError
from flowmesh.runtime.options import RunMetadata, RunOptions
from flowmesh.train import basic_session_run_hooks as hooks_lib
from flowmesh.train.coordinator import Coordinator
from flowmesh.train.scaffold import ChiefSessionCreator, Scaffold, SessionCreator, WorkerSessionCreator
from flowmesh.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

logger = logging.getLogger("flowmesh.train")

PREEMPTION_ERRORS = (AbortedError, UnavailableError)
USE_DEFAULT = object()


class _WrappedSession:
    """Forwards to a session; ``should_stop`` combines its own check with the inner one."""

    def __init__(self, sess: Any):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self) -> Any:
        return self._sess.graph

    @property
    def sess_str(self) -> str:
        return self._sess.sess_str

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        if self._sess is not None:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def _check_stop(self) -> bool:
        return False

    def close(self) -> None:
        if self._sess is not None:
            try:
                self._sess.close()
            except PREEMPTION_ERRORS as exc:
                logger.error("An error occurred when attempting to close the session. This may be due "
                             "to a preemption in a connected worker or parameter server. Error: %s", exc)
            finally:
                self._sess = None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._sess.run(*args, **kwargs)


class _HookedSession(_WrappedSession):
    """Calls the hooks' ``before_run``/``after_run`` around every ``run``."""

    def __init__(self, sess: Any, hooks: Sequence[SessionRunHook]):
        super().__init__(sess)
        self._hooks = list(hooks)
        self._should_stop = False

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(self, fetches: Any, feed_dict: dict | None = None, options: RunOptions | None = None,
            run_metadata: RunMetadata | None = None) -> Any:
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches: dict[Any, Any] = {"caller": fetches}
        run_context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._sess)
        options = options or RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata or RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options,
                                 run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(run_context, SessionRunValues(outputs.get(hook), options, run_metadata))
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context: SessionRunContext, fetch_dict: dict[Any, Any],
                              user_feed_dict: dict | None, options: RunOptions) -> dict | None:
        hook_feeds: dict[Any, Any] = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options is not None:
                options.timeout_in_ms = max(options.timeout_in_ms, request.options.timeout_in_ms)
                options.trace_level = max(options.trace_level, request.options.trace_level)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
        merged = dict(user_feed_dict)
        merged.update(hook_feeds)
        return merged


def _raise_if_feeds_intersect(a: dict, b: dict, message: str) -> None:
    common = set(a) & set(b)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {sorted(str(k) for k in common)}")


class _CoordinatedSession(_WrappedSession):
    """Owns a Coordinator: stops when it stops and re-raises what threads reported."""

    def __init__(self, sess: Any, coord: Coordinator, stop_grace_period_secs: float = 120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self) -> None:
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception:  # noqa: BLE001 - the coordinator's error (if any) matters more
                logger.debug("ignoring an error while closing", exc_info=True)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._sess.run(*args, **kwargs)
        except PREEMPTION_ERRORS:
            raise
        except Exception:
            # An error reported by a thread (a queue runner...) explains the failure better.
            self._coord.raise_requested_exception()
            raise


class _RecoverableSession(_WrappedSession):
    """Re-creates the session when a run or the creation fails with a preemption error."""

    def __init__(self, sess_creator: _CoordinatedSessionCreator):
        self._sess_creator = sess_creator
        self._failing_since: float | None = None
        super().__init__(self._create_session())

    def _note_failure(self, exc: BaseException, what: str) -> None:
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        limit = _config.RECOVERY_TIMEOUT_S.get()
        if now - self._failing_since > limit:
            logger.error("Giving up recovery after %.0f s of failures (FLOWMESH_RECOVERY_TIMEOUT_S=%g)",
                         now - self._failing_since, limit)
            raise exc
        logger.warning("An error was raised %s. This may be due to a preemption of a connected worker "
                       "or parameter server. A new session will be created (giving up after %g s of "
                       "failures, FLOWMESH_RECOVERY_TIMEOUT_S). Error: %s: %s", what, limit,
                       type(exc).__name__, exc)

    def _create_session(self) -> Any:
        delay = 0.05
        while True:
            try:
                return self._sess_creator.create_session()
            except PREEMPTION_ERRORS as exc:
                self._note_failure(exc, "while a session was being created")
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _check_stop(self) -> bool:
        try:
            if self._sess is not None:
                return self._sess._check_stop()
            return True
        except PREEMPTION_ERRORS as exc:
            logger.info("An error was raised while considering whether the session is complete. This "
                        "may be due to a preemption in a connected worker or parameter server. The "
                        "current session will be closed and a new session will be created. Error: %s", exc)
            self.close()
            self._sess = self._create_session()
            return False

    def run(self, fetches: Any, feed_dict: dict | None = None, options: RunOptions | None = None,
            run_metadata: RunMetadata | None = None) -> Any:
        return self._retrying(lambda sess: sess.run(fetches, feed_dict=feed_dict, options=options,
                                                    run_metadata=run_metadata))

    def _retrying(self, call: Callable[[Any], Any]) -> Any:
        while True:
            if self._sess is None:  # retries (and gives up on) its own errors
                self._sess = self._create_session()
            try:
                result = call(self._sess)
            except PREEMPTION_ERRORS as exc:
                self._note_failure(exc, "while running a step")
                self.close()
                self._sess = None
                continue
            self._failing_since = None
            return result


class _CoordinatedSessionCreator(SessionCreator):
    """Creates the raw session, starts queue runners and wires hooks and coordinator."""

    def __init__(self, session_creator: SessionCreator, hooks: Sequence[SessionRunHook],
                 stop_grace_period_secs: float):
        self._session_creator = session_creator
        self._hooks = hooks
        self.coord: Coordinator | None = None
        self.tf_sess: Any = None
        self._stop_grace_period_secs = stop_grace_period_secs

    def create_session(self) -> _CoordinatedSession:
        self.tf_sess = self._session_creator.create_session()
        self.coord = Coordinator(clean_stop_exception_types=[])
        _start_queue_runners(self.tf_sess, self.coord)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                   self._stop_grace_period_secs)


def _start_queue_runners(sess: Any, coord: Coordinator) -> None:
    """Starts the threads of the graph's ``QUEUE_RUNNERS`` (objects with ``create_threads``)."""
    from flowmesh.core.graph import GraphKeys

    for runner in sess.graph.get_collection(GraphKeys.QUEUE_RUNNERS):
        runner.create_threads(sess, coord=coord, daemon=True, start=True)


class StepContext:
    """What a ``run_step_fn`` step function receives."""

    def __init__(self, session: Any, run_with_hooks_fn: Callable[..., Any]):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self) -> Any:
        """The raw session (runs without hooks)."""
        return self._session

    def run_with_hooks(self, *args: Any, **kwargs: Any) -> Any:
        """``run`` through the hooks, as ``MonitoredSession.run``."""
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self) -> None:
        """Stops the loop: ``should_stop()`` becomes True."""
        raise StopIteration("step_fn has requested the iterations to stop.")


class _MonitoredSession:
    """Implementation shared by MonitoredSession and SingularMonitoredSession."""

    def __init__(self, session_creator: SessionCreator | None, hooks: Sequence[SessionRunHook] | None,
                 should_recover: bool, stop_grace_period_secs: float = 120):
        from flowmesh.core.graph import get_default_graph

        self._graph_was_finalized = get_default_graph().finalized
        self._hooks = list(hooks or [])
        self._stop_requested_in_step_fn = False
        for hook in self._hooks:
            hook.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator or ChiefSessionCreator(), self._hooks, stop_grace_period_secs)
        self._sess: Any = (_RecoverableSession(self._coordinated_creator) if should_recover
                           else self._coordinated_creator.create_session())

    @property
    def graph(self) -> Any:
        return self._tf_sess().graph

    def run(self, fetches: Any, feed_dict: dict | None = None, options: RunOptions | None = None,
            run_metadata: RunMetadata | None = None) -> Any:
        """Runs ``fetches`` with the hooks (and recovery, for ``MonitoredSession``)."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)

    def run_step_fn(self, step_fn: Callable[[StepContext], Any]) -> Any:
        """Calls ``step_fn(step_context)``; ``step_context.run_with_hooks`` runs with hooks.

        Raises:
            ValueError: ``step_fn`` does not take exactly one ``step_context`` argument.
        """
        params = [p for p in inspect.signature(step_fn).parameters if p != "self"]
        if params != ["step_context"]:
            raise ValueError("`step_fn` may either have one `step_context` argument, or `self` and "
                             f"`step_context` arguments if it's an instance method. Got {params} instead.")
        try:
            return step_fn(StepContext(self._tf_sess(), self.run))
        except StopIteration:
            self._stop_requested_in_step_fn = True
            return None

    def should_stop(self) -> bool:
        return self._sess is None or self._stop_requested_in_step_fn or self._sess.should_stop()

    def close(self) -> None:
        self._close_internal()

    def __enter__(self) -> _MonitoredSession:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type in (OutOfRangeError, StopIteration):
            exc_type = None
        self._close_internal(exc_type)
        return exc_type is None  # suppress OutOfRangeError / StopIteration, as TensorFlow does

    def _tf_sess(self) -> Any:
        return self._coordinated_creator.tf_sess

    def _close_internal(self, exception_type: Any = None) -> None:
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    from flowmesh.core.graph import get_default_graph

                    get_default_graph()._unsafe_unfinalize()


class MonitoredSession(_MonitoredSession):
    """A session that runs hooks, initializes or restores the model and recovers from
    lost parameter servers or peers (``tf.train.MonitoredSession``).

    Args:
        session_creator: a :class:`ChiefSessionCreator` (default) or
            :class:`WorkerSessionCreator`.
        hooks: :class:`SessionRunHook` objects.
        stop_grace_period_secs: how long ``close`` waits for coordinated threads.
    """

    def __init__(self, session_creator: SessionCreator | None = None,
                 hooks: Sequence[SessionRunHook] | None = None, stop_grace_period_secs: float = 120):
        super().__init__(session_creator, hooks, should_recover=True,
                         stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A monitored session for a single process, without recovery
    (``tf.train.SingularMonitoredSession``); ``raw_session()`` gives the ``tf.Session``."""

    def __init__(self, hooks: Sequence[SessionRunHook] | None = None, scaffold: Scaffold | None = None,
                 master: str = "", config: Any = None, checkpoint_dir: str | None = None,
                 stop_grace_period_secs: float = 120, checkpoint_filename_with_path: str | None = None):
        creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                      checkpoint_dir=checkpoint_dir,
                                      checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self) -> Any:
        return self._tf_sess()


def MonitoredTrainingSession(master: str = "", is_chief: bool = True, checkpoint_dir: str | None = None,  # noqa: N802
                             scaffold: Scaffold | None = None, hooks: Sequence[SessionRunHook] | None = None,
                             chief_only_hooks: Sequence[SessionRunHook] | None = None,
                             save_checkpoint_secs: Any = USE_DEFAULT, save_summaries_steps: Any = USE_DEFAULT,
                             save_summaries_secs: Any = USE_DEFAULT, config: Any = None,
                             stop_grace_period_secs: float = 120, log_step_count_steps: int | None = 100,
                             max_wait_secs: float = 7200, save_checkpoint_steps: Any = USE_DEFAULT,
                             summary_dir: str | None = None, save_graph_def: bool = True) -> MonitoredSession:
    """A :class:`MonitoredSession` set up for (distributed) training.

    The chief restores the latest checkpoint in ``checkpoint_dir`` (or initializes the
    model) and saves checkpoints every ``save_checkpoint_secs`` (default 600) or
    ``save_checkpoint_steps``; other workers wait up to ``max_wait_secs`` for the chief.

    Args:
        master: the session target (``''`` or ``grpc://host:port``, e.g. ``server.target``).
        is_chief: whether this worker initializes, restores and checkpoints the model.
        checkpoint_dir: where checkpoints are restored from and saved to.
        scaffold: a :class:`Scaffold` (default: a new one).
        hooks: hooks for every worker.
        chief_only_hooks: hooks used only when ``is_chief``.
        save_checkpoint_secs / save_checkpoint_steps: checkpoint period (None: never).
        save_summaries_steps / save_summaries_secs: how often the chief writes the
            scaffold's summary op (every summary of the graph by default) to ``summary_dir``
            (default every 100 steps; None or 0: never).
        config: a ``ConfigProto``.
        stop_grace_period_secs: how long ``close`` waits for coordinated threads.
        log_step_count_steps: log global steps/sec this often (chief, with a directory).
        max_wait_secs: how long a non-chief waits for the model to be ready.
        summary_dir: where the chief writes event files: summaries, ``global_step/sec``,
            the graph (default ``checkpoint_dir``).
        save_graph_def: write a ``.meta`` graph with each checkpoint.

    Returns:
        A :class:`MonitoredSession`.

    Example:
        >>> hooks = [tf.train.StopAtStepHook(last_step=1000)]
        >>> with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task == 0),
        ...                                        checkpoint_dir="/shared/ckpt", hooks=hooks) as sess:
        ...     while not sess.should_stop():
        ...         sess.run(train_op)
    """
    save_checkpoint_steps, save_checkpoint_secs = _period(save_checkpoint_steps, save_checkpoint_secs, (None, 600))
    save_summaries_steps, save_summaries_secs = _period(save_summaries_steps, save_summaries_secs, (100, None))
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)
    creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config)
    periods = _Periods(log_step_count_steps, save_summaries_steps, save_summaries_secs, save_checkpoint_steps,
                       save_checkpoint_secs)
    all_hooks = list(chief_only_hooks or []) + _chief_hooks(
        scaffold, checkpoint_dir, summary_dir or checkpoint_dir, periods, save_graph_def) + list(hooks or [])
    return MonitoredSession(session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)


def _period(steps: Any, secs: Any, default: tuple[Any, Any]) -> tuple[Any, Any]:
    """TensorFlow's rule for a ``(steps, secs)`` pair: ``default`` when neither is given,
    else the one given (the other becomes None)."""
    if steps is USE_DEFAULT and secs is USE_DEFAULT:
        return default
    return (None if steps is USE_DEFAULT else steps), (None if secs is USE_DEFAULT else secs)


@dataclass(frozen=True)
class _Periods:
    """How often the chief's hooks log the step rate, write summaries and checkpoint (None:
    never; a non-positive period means never too)."""

    log_step_count_steps: int | None
    save_summaries_steps: int | None
    save_summaries_secs: float | None
    save_checkpoint_steps: int | None
    save_checkpoint_secs: float | None

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value is not None and value <= 0:
                object.__setattr__(self, name, None)


def _chief_hooks(scaffold: Scaffold, checkpoint_dir: str | None, summary_dir: str | None, periods: _Periods,
                 save_graph_def: bool) -> list[SessionRunHook]:
    """The step counter, summary saver and checkpoint saver hooks MonitoredTrainingSession
    adds for the chief."""
    added: list[SessionRunHook] = []
    if summary_dir and periods.log_step_count_steps:
        added.append(hooks_lib.StepCounterHook(output_dir=summary_dir, every_n_steps=periods.log_step_count_steps))
    if summary_dir and (periods.save_summaries_steps or periods.save_summaries_secs):
        added.append(hooks_lib.SummarySaverHook(
            scaffold=scaffold, save_steps=periods.save_summaries_steps, save_secs=periods.save_summaries_secs,
            output_dir=summary_dir))
    if checkpoint_dir and (periods.save_checkpoint_secs or periods.save_checkpoint_steps):
        added.append(hooks_lib.CheckpointSaverHook(
            checkpoint_dir, save_steps=periods.save_checkpoint_steps, save_secs=periods.save_checkpoint_secs,
            scaffold=scaffold, save_graph_def=save_graph_def))
    return added
