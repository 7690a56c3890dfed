"""``tf.train.SessionManager``: create a session whose model is initialized or restored.

The chief calls :meth:`SessionManager.prepare_session`: it restores the latest
checkpoint when there is one, otherwise runs the init op. Other workers call
:meth:`SessionManager.wait_for_session`: they create sessions until ``ready_op`` (by
default ``report_uninitialized_variables()``) reports nothing, i.e. the chief has
initialized or restored the shared variables, and give up with
``DeadlineExceededError`` after ``max_wait_secs``.

Differences from TensorFlow (deliberate, for fast recovery): workers poll with a
backoff from 50 ms up to 1 s (or ``recovery_wait_secs`` if smaller) instead of sleeping
``recovery_wait_secs`` between checks; a worker that cannot reach the cluster at all
gives up after ``FLOWMESH_RECOVERY_TIMEOUT_S`` of consecutive errors (not only after
``max_wait_secs``, 2 hours by default), so recovery from a task that never comes back
ends for every worker; and when the latest checkpoint turns out to be corrupted
(``DataLossError``) the chief falls back to the previous kept checkpoint, logging an
error, instead of failing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh import config as _config
from flowmesh.checkpoint.state import get_checkpoint_state
from flowmesh.core.graph import Graph, get_default_graph
from flowmesh.errors import (
    AbortedError,
    DataLossError,
    DeadlineExceededError,
    FailedPreconditionError,
    OpError,
    UnavailableError,
)
from flowmesh.runtime.session import Session

logger = logging.getLogger("flowmesh.train")

_FIRST_POLL_SECS = 0.05
# A readiness check is one cheap step: polling each second costs nothing, and a worker
# waiting for a restored ps resumes within a second of the chief (not up to 30 s later).
_MAX_POLL_SECS = 1.0


def _maybe_name(obj: Any) -> str:
    if obj is None:
        return "None"
    return getattr(obj, "name", None) or f"<{type(obj).__name__}>"


class SessionManager:
    """Creates sessions and makes sure their model is ready.

    Args:
        local_init_op: run in every new session once ``ready_for_local_init_op`` is
            satisfied (local variables, tables).
        ready_op: a string tensor naming what is not ready (empty when ready).
        ready_for_local_init_op: like ``ready_op``, checked before ``local_init_op``.
        graph: the graph (default: the default graph).
        recovery_wait_secs: the longest pause between readiness checks (at most 1 s is
            used for non-chief workers' checks).
        local_init_run_options / local_init_feed_dict: for running ``local_init_op``.

    Raises:
        ValueError: ``ready_for_local_init_op`` without ``local_init_op``.
    """

    def __init__(self, local_init_op: Any = None, ready_op: Any = None, ready_for_local_init_op: Any = None,
                 graph: Graph | None = None, recovery_wait_secs: float = 30,
                 local_init_run_options: Any = None, local_init_feed_dict: dict | None = None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a local_init_op , "
                             f"ready_for_local_init_op [{ready_for_local_init_op}]")
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target: str | None = None

    # --- restoring ------------------------------------------------------------------------------
    def _restore_checkpoint(self, master: str, saver: Any = None, checkpoint_dir: str | None = None,
                            checkpoint_filename_with_path: str | None = None, wait_for_checkpoint: bool = False,
                            max_wait_secs: float = 7200, config: Any = None) -> tuple[Session, bool]:
        """Creates a session and restores the latest checkpoint; returns (sess, restored)."""
        self._target = master
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        sess = Session(master, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        try:
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            state = self._wait_for_checkpoint_state(checkpoint_dir, wait_for_checkpoint, max_wait_secs)
            if state is None:
                return sess, False
            self._restore_newest_readable(sess, saver, state)
            saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
            return sess, True
        except BaseException:
            _safe_close(sess)
            raise

    def _wait_for_checkpoint_state(self, checkpoint_dir: str, wait: bool, max_wait_secs: float) -> Any:
        deadline = time.monotonic() + max_wait_secs
        state = get_checkpoint_state(checkpoint_dir)
        delay = _FIRST_POLL_SECS
        while state is None or not state.model_checkpoint_path:
            if not wait or time.monotonic() >= deadline:
                return None
            logger.info("Waiting for checkpoint to be available.")
            time.sleep(delay)
            delay = min(delay * 2, self._recovery_wait_secs)
            state = get_checkpoint_state(checkpoint_dir)
        return state

    @staticmethod
    def _restore_newest_readable(sess: Session, saver: Any, state: Any) -> None:
        """Restores the latest checkpoint, falling back to older kept ones on data loss."""
        candidates = [state.model_checkpoint_path] + [
            p for p in reversed(state.all_model_checkpoint_paths) if p != state.model_checkpoint_path]
        first_error: DataLossError | None = None
        for path in candidates:
            try:
                saver.restore(sess, path)
                if first_error is not None:
                    logger.error("Restored the older checkpoint %s instead.", path)
                return
            except DataLossError as exc:
                logger.error("Checkpoint %s is corrupted, trying an older one: %s", path, exc.message)
                first_error = first_error or exc
        assert first_error is not None
        raise first_error

    def prepare_session(self, master: str, init_op: Any = None, saver: Any = None,
                        checkpoint_dir: str | None = None, wait_for_checkpoint: bool = False,
                        max_wait_secs: float = 7200, config: Any = None, init_feed_dict: dict | None = None,
                        init_fn: Callable[[Session], None] | None = None,
                        checkpoint_filename_with_path: str | None = None) -> Session:
        """A session with the model restored from a checkpoint or initialized (the chief).

        Raises:
            RuntimeError: nothing to initialize the model with, or it is still not ready.
            OpError: creating the session, restoring or initializing failed.
        """
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                       "local_init_op was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ok, msg = self._try_run_local_init_op(sess)
            if not ok:
                raise RuntimeError(f"Init operations did not make model ready for local_init.  Init op: "
                                   f"{_maybe_name(init_op)}, init fn: {init_fn}, error: {msg}")
            ready, msg = self._model_ready(sess)
            if not ready:
                raise RuntimeError(f"Init operations did not make model ready.  Init op: {_maybe_name(init_op)}"
                                   f", init fn: {init_fn}, local_init_op: {_maybe_name(self._local_init_op)}"
                                   f", error: {msg}")
        except BaseException:
            _safe_close(sess)
            raise
        return sess

    def recover_session(self, master: str, saver: Any = None, checkpoint_dir: str | None = None,
                        wait_for_checkpoint: bool = False, max_wait_secs: float = 7200, config: Any = None,
                        checkpoint_filename_with_path: str | None = None) -> tuple[Session, bool]:
        """A session restored from a checkpoint if possible; returns ``(sess, initialized)``."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config)
        ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        if not ok:
            logger.info("Restoring model from %s did not make model ready for local init: %s",
                        checkpoint_dir or checkpoint_filename_with_path, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            logger.info("Restoring model from %s did not make model ready: %s",
                        checkpoint_dir or checkpoint_filename_with_path, msg)
            return sess, False
        logger.info("Restored model from %s", checkpoint_dir or checkpoint_filename_with_path)
        return sess, True

    # --- waiting (non-chief workers) -------------------------------------------------------------
    def wait_for_session(self, master: str, config: Any = None, max_wait_secs: float | None = float("inf")) -> Session:
        """Creates sessions until the model is ready (initialized by the chief).

        While the cluster is reachable but the model is not ready, waits up to
        ``max_wait_secs``; while a task is unreachable (``UnavailableError`` and the like),
        gives up sooner, after ``FLOWMESH_RECOVERY_TIMEOUT_S`` seconds in a row (flowmesh).

        Raises:
            DeadlineExceededError: still not ready after ``max_wait_secs``.
            UnavailableError / AbortedError / DeadlineExceededError: the last error, after
                ``FLOWMESH_RECOVERY_TIMEOUT_S`` seconds of failing to reach the cluster.
        """
        self._target = master
        max_wait = float("inf") if max_wait_secs is None else max_wait_secs
        deadline = time.monotonic() + max_wait
        delay = _FIRST_POLL_SECS
        unreachable_since: float | None = None
        while True:
            sess, reason, error = self._poll_ready(master, config)
            if sess is not None:
                return sess
            now = time.monotonic()
            if error is None:
                unreachable_since = None
            else:
                unreachable_since = now if unreachable_since is None else unreachable_since
                if now - unreachable_since > _config.RECOVERY_TIMEOUT_S.get():
                    logger.error("Giving up waiting for the model after %.0f s of errors "
                                 "(FLOWMESH_RECOVERY_TIMEOUT_S): %s", now - unreachable_since, reason)
                    raise error
            if deadline - now < delay:
                raise DeadlineExceededError(
                    None, None,
                    f"Session was not ready after waiting {max_wait:g} secs ({reason}). Make sure the "
                    "chief worker is running and initializes or restores the model.")
            if error is None:
                logger.info("Waiting for model to be ready: %s", reason)
            else:  # a task does not answer: say so at each attempt
                logger.warning("Waiting for model to be ready (giving up after %g s without reaching "
                               "the cluster, FLOWMESH_RECOVERY_TIMEOUT_S): %s",
                               _config.RECOVERY_TIMEOUT_S.get(), reason)
            time.sleep(delay)
            delay = min(delay * 2, self._recovery_wait_secs, _MAX_POLL_SECS)

    def _poll_ready(self, master: str, config: Any) -> tuple[Session | None, str, OpError | None]:
        """One readiness check: ``(ready session, "", None)``, or ``(None, why, error or None)``."""
        reason = "the session could not be created"
        sess = None
        try:
            sess = Session(master, graph=self._graph, config=config)
            ok, reason = self._try_run_local_init_op(sess)
            if ok:
                ready, reason = self._model_ready(sess)
                if ready:
                    return sess, "", None
            error = None
        except (UnavailableError, AbortedError, DeadlineExceededError) as exc:
            reason, error = f"{type(exc).__name__}: {exc.message}", exc
        if sess is not None:
            _safe_close(sess)
        return None, str(reason), error

    # --- readiness --------------------------------------------------------------------------------
    def _try_run_local_init_op(self, sess: Session) -> tuple[bool, str | None]:
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        logger.debug("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        return True, None

    def _model_ready(self, sess: Session) -> tuple[bool, str | None]:
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess: Session) -> tuple[bool, str | None]:
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")


def _ready(op: Any, sess: Session, msg: str) -> tuple[bool, str | None]:
    """Runs a readiness op: (True, None) when it reports nothing, else (False, why)."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except FailedPreconditionError as exc:
        if "uninitialized" not in str(exc):
            logger.warning("%s : error [%s]", msg, exc)
            raise
        return False, str(exc)
    if value is None or np.asarray(value).size == 0 or np.asarray(value).dtype == np.int32:
        return True, None
    names = ", ".join(v.decode() if isinstance(v, bytes) else str(v) for v in np.asarray(value).reshape(-1))
    return False, f"Variables not initialized: {names}"


def _safe_close(sess: Session) -> None:
    try:
        sess.close()
    except Exception:  # noqa: BLE001 - closing a broken session must not hide the real error
        logger.debug("ignoring an error while closing a session", exc_info=True)
