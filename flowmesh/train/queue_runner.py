"""``tf.train.QueueRunner``: threads that keep running ops (enqueues) until told to stop.

A queue runner holds a list of ops; :meth:`QueueRunner.create_threads` starts one thread
per op that runs it in a loop, plus (with a coordinator) a thread that waits for the
stop request and then runs ``cancel_op`` (by default closing the queue and cancelling
pending enqueues) so that a thread blocked in its op wakes up. ``MonitoredSession``
starts the runners of the ``QUEUE_RUNNERS`` collection; ``SyncReplicasOptimizer``'s
chief runner aggregates gradients this way.

Example:
    >>> qr = tf.train.QueueRunner(queue, [enqueue_op] * 2)
    >>> coord = tf.train.Coordinator()
    >>> threads = qr.create_threads(sess, coord=coord, start=True)
    >>> ...
    >>> coord.request_stop(); coord.join(threads)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from flowmesh.core.graph import GraphKeys, Operation, get_default_graph
from flowmesh.errors import OutOfRangeError

logger = logging.getLogger("flowmesh.train")


class QueueRunner:
    """Runs ``enqueue_ops`` in threads (``tf.train.QueueRunner``).

    Args:
        queue: the queue the ops feed (its ``close`` ops are the defaults below).
        enqueue_ops: the ops to run, one thread each.
        close_op: run when every thread has seen the queue closed (default
            ``queue.close()``).
        cancel_op: run on a stop request (default
            ``queue.close(cancel_pending_enqueues=True)``).
        queue_closed_exception_types: errors meaning "the queue is closed, stop quietly"
            (default ``(tf.errors.OutOfRangeError,)``).

    Raises:
        ValueError: no ``queue`` or no ``enqueue_ops``.
    """

    def __init__(self, queue: Any = None, enqueue_ops: Sequence[Operation] | None = None,
                 close_op: Operation | None = None, cancel_op: Operation | None = None,
                 queue_closed_exception_types: Sequence[type] | None = None,
                 queue_runner_def: Any = None, import_scope: str | None = None):
        if queue_runner_def is not None:
            raise ValueError("queue_runner_def is not supported by flowmesh; pass the queue and ops")
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = tuple(queue_closed_exception_types or (OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs_per_session: dict[int, int] = {}
        self._exceptions_raised: list[BaseException] = []

    @property
    def queue(self) -> Any:
        return self._queue

    @property
    def enqueue_ops(self) -> list[Operation]:
        return list(self._enqueue_ops)

    @property
    def close_op(self) -> Operation:
        return self._close_op

    @property
    def cancel_op(self) -> Operation:
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple[type, ...]:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Exceptions raised by the threads (when they ran without a coordinator)."""
        return list(self._exceptions_raised)

    @property
    def name(self) -> str:
        return self._queue.name

    def create_threads(self, sess: Any, coord: Any = None, daemon: bool = False,
                       start: bool = False) -> list[threading.Thread]:
        """Creates (and optionally starts) the threads for ``sess``.

        Returns:
            The threads; empty when threads of this runner already run for ``sess``.
        """
        with self._lock:
            if self._runs_per_session.get(id(sess), 0) > 0:
                return []
            self._runs_per_session[id(sess)] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunner-{self.name}-{i}")
                   for i, op in enumerate(self._enqueue_ops)]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, coord), daemon=daemon,
                                            name=f"QueueRunner-{self.name}-cancel"))
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            if start:
                thread.start()
        return threads

    def _run(self, sess: Any, op: Operation, coord: Any) -> None:
        decremented = False
        try:
            while coord is None or not coord.should_stop():
                sess.run(op)
        except self._queue_closed_exception_types:
            decremented = True
            if self._finish_one(sess):
                try:
                    sess.run(self._close_op)
                except Exception as exc:  # noqa: BLE001 - closing is best effort
                    logger.info("Ignored exception while closing queue %s: %s", self.name, exc)
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator
            if coord is not None and coord.should_stop():  # e.g. cancelled by cancel_op
                logger.debug("QueueRunner %s stopped: %s", self.name, exc)
            elif coord is not None:
                coord.request_stop(exc)
            else:
                logger.error("Exception in QueueRunner %s: %s", self.name, exc)
                with self._lock:
                    self._exceptions_raised.append(exc)
                raise
        finally:
            if not decremented:
                self._finish_one(sess)

    def _finish_one(self, sess: Any) -> bool:
        """One thread is done; True when it was the last one for ``sess``."""
        with self._lock:
            left = self._runs_per_session.get(id(sess), 0) - 1
            self._runs_per_session[id(sess)] = max(left, 0)
            return left <= 0

    def _close_on_stop(self, sess: Any, coord: Any) -> None:
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception as exc:  # noqa: BLE001 - the session may already be closing
            logger.info("Ignored exception while cancelling queue runner %s: %s", self.name, exc)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds ``qr`` to a graph collection (``QUEUE_RUNNERS`` by default)."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess: Any = None, coord: Any = None, daemon: bool = True, start: bool = True,
                        collection: str = GraphKeys.QUEUE_RUNNERS) -> list[threading.Thread]:
    """Starts the threads of every queue runner in ``collection`` of ``sess``'s graph.

    Returns:
        The started threads.

    Raises:
        ValueError: no session given and no default session.
    """
    if sess is None:
        from flowmesh.core.default_session import get_default_session

        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: no default session is registered. Use "
                             "`with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    threads: list[threading.Thread] = []
    for qr in sess.graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]
