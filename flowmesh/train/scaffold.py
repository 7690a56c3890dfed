"""``tf.train.Scaffold`` and the session creators used by ``MonitoredSession``.

A :class:`Scaffold` gathers what a training session needs beyond the model: the init
op, the readiness ops, the local init op and the Saver. :meth:`Scaffold.finalize` fills
in TensorFlow's defaults (taken from the graph collections when present) and finalizes
the graph. :class:`ChiefSessionCreator` restores or initializes the model;
:class:`WorkerSessionCreator` waits until the chief did.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.ops.control_flow_ops import group
from flowmesh.ops.summary_ops import merge_all
from flowmesh.ops.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from flowmesh.train.session_manager import SessionManager

logger = logging.getLogger("flowmesh.train")


class Scaffold:
    """The ops and Saver a monitored training session uses.

    Args:
        init_op: initializes the model when no checkpoint is restored (default: every
            global variable's initializer).
        init_feed_dict: feeds for ``init_op``.
        init_fn: ``init_fn(scaffold, session)`` called after ``init_op``.
        ready_op: reports uninitialized variables (default
            ``report_uninitialized_variables()``).
        ready_for_local_init_op: checked before ``local_init_op`` (default: uninitialized
            global variables).
        local_init_op: run in every session (default: local variables initializer).
        summary_op: summaries to write (default: ``tf.summary.merge_all()``, None when the
            graph has no summary).
        saver: the Saver (default: the ``SAVERS`` collection's, else a new
            ``Saver(sharded=True, allow_empty=True)``).
        copy_from_scaffold: take the unspecified fields from this scaffold.
    """

    def __init__(self, init_op: Any = None, init_feed_dict: dict | None = None,
                 init_fn: Callable[[Scaffold, Any], None] | None = None, ready_op: Any = None,
                 ready_for_local_init_op: Any = None, local_init_op: Any = None, summary_op: Any = None,
                 saver: Any = None, copy_from_scaffold: Scaffold | None = None,
                 local_init_feed_dict: dict | None = None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            src = copy_from_scaffold
            init_op = init_op if init_op is not None else src.init_op
            init_feed_dict = init_feed_dict if init_feed_dict is not None else src.init_feed_dict
            init_fn = init_fn if init_fn is not None else src._user_init_fn
            ready_op = ready_op if ready_op is not None else src.ready_op
            ready_for_local_init_op = (ready_for_local_init_op if ready_for_local_init_op is not None
                                       else src.ready_for_local_init_op)
            local_init_op = local_init_op if local_init_op is not None else src.local_init_op
            summary_op = summary_op if summary_op is not None else src.summary_op
            saver = saver if saver is not None else src.saver
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver
        self._finalized = False

    def finalize(self) -> Scaffold:
        """Creates the missing ops from the graph's collections or defaults; finalizes
        the graph. Calling it again does nothing."""
        if self._finalized:
            return self
        graph = get_default_graph()
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP, global_variables_initializer)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default("ready_op", GraphKeys.READY_OP,
                                                     report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default("local_init_op", GraphKeys.LOCAL_INIT_OP,
                                                          Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = _get_saver_or_default()
        self._saver.build()
        graph.finalize()
        logger.info("Graph was finalized.")
        self._finalized = True
        return self

    @property
    def init_fn(self) -> Callable[[Any], None] | None:
        return self._init_fn

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def local_init_op(self) -> Any:
        return self._local_init_op

    @property
    def local_init_feed_dict(self) -> dict | None:
        return self._local_init_feed_dict

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def init_feed_dict(self) -> dict | None:
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor: Callable[[], Any]) -> Any:
        """The single item of a collection, or a new default that is added to it.

        Raises:
            RuntimeError: the collection holds more than one item.
        """
        elements = get_default_graph().get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please indicate which one '
                    f"to use by passing it to the tf.Scaffold constructor as:  tf.Scaffold({arg_name}="
                    "item to use)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            get_default_graph().add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op() -> Any:
        """Initializes the local variables (and, in TensorFlow, tables)."""
        return group(local_variables_initializer(), *get_default_graph().get_collection(
            GraphKeys.TABLE_INITIALIZERS))


def _get_saver_or_default() -> Any:
    """The ``SAVERS`` collection's only saver, or a new sharded one added to it."""
    from flowmesh.train.saver import Saver

    savers = get_default_graph().get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which "
                               "one to use by passing it to the constructor.")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    get_default_graph().add_to_collection(GraphKeys.SAVERS, saver)
    return saver


class SessionCreator:
    """Creates a ``tf.Session`` (base class)."""

    def create_session(self) -> Any:
        raise NotImplementedError(f"create_session is not implemented for {self}.")


def _session_manager(scaffold: Scaffold) -> SessionManager:
    return SessionManager(
        local_init_op=scaffold.local_init_op,
        local_init_feed_dict=scaffold.local_init_feed_dict,
        ready_op=scaffold.ready_op,
        ready_for_local_init_op=scaffold.ready_for_local_init_op,
        graph=get_default_graph())


class ChiefSessionCreator(SessionCreator):
    """Creates a session for the chief: restores the latest checkpoint or initializes.

    Args:
        scaffold: the Scaffold (default: a new one).
        master: the session target (``''`` or ``grpc://host:port``).
        config: a ``ConfigProto``.
        checkpoint_dir: restore the latest checkpoint found here.
        checkpoint_filename_with_path: restore this checkpoint prefix instead.
    """

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config: Any = None,
                 checkpoint_dir: str | None = None, checkpoint_filename_with_path: str | None = None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager: SessionManager | None = None
        self._master = master
        self._config = config

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            self._session_manager = _session_manager(self._scaffold)
        return self._session_manager

    def create_session(self) -> Any:
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn)


class WorkerSessionCreator(SessionCreator):
    """Creates a session for a non-chief worker: waits until the model is ready.

    Args:
        scaffold: the Scaffold (default: a new one).
        master: the session target.
        config: a ``ConfigProto``.
        max_wait_secs: give up with ``DeadlineExceededError`` after this long.
    """

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config: Any = None,
                 max_wait_secs: float = 30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._session_manager: SessionManager | None = None
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            self._session_manager = _session_manager(self._scaffold)
        return self._session_manager

    def create_session(self) -> Any:
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)
