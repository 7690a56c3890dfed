"""``tf.distribute.experimental.ParameterServerStrategy``: between-graph, asynchronous
training with the variables on the ps tasks (TensorFlow 1.x's strategy, driven by
``TF_CONFIG``).

Every task runs the same program (``flowmesh launch --ps N --workers M``):

* **ps tasks**: creating the strategy starts the task's ``tf.train.Server``, serves its
  variables until every trainer (chief and workers) has finished, then ends the process
  with status 0 (``SystemExit(0)``): a ps runs none of the program after the
  constructor, as TensorFlow's ps tasks only ``server.join()``.
* **trainers** (the ``chief`` and ``worker`` tasks): creating the strategy starts the
  task's server; variables created in ``strategy.scope()`` are placed round robin on the
  ps tasks (``/job:ps/task:k``, in creation order, so every trainer puts each variable on
  the same task; optimizer slots go next to their variable); every other op runs on the
  trainer. Each trainer computes gradients on its own batches and applies them on the ps
  at once, without waiting for the others (``num_replicas_in_sync`` is 1). The chief
  (the ``chief`` task, else worker 0) initializes the variables; the other trainers wait
  for them. When a trainer's process exits it tells every ps task it has finished.

Without a cluster (no ``TF_CONFIG``) the strategy is one local trainer.

Where TensorFlow 2 differs: TF2's ``ParameterServerStrategy`` is coordinator-based (the
chief alone runs the program and dispatches steps to workers through a
``ClusterCoordinator``; workers and ps only serve). flowmesh implements the TF1
between-graph semantics above, which ``tf.compat.v1`` programs and ``flowmesh launch``
scripts expect.

Example (the same script on every task)::

    strategy = tf.distribute.experimental.ParameterServerStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([...])
        model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=64, epochs=3)   # each worker trains on its rows, async
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from flowmesh import config as _config
from flowmesh.core import dtypes
from flowmesh.core.graph import Graph, get_default_graph
from flowmesh.distribute import distribute_lib
from flowmesh.distribute.cluster_resolver.base import ClusterResolver, TFConfigClusterResolver
from flowmesh.errors import DeadlineExceededError, OpError

logger = logging.getLogger("flowmesh.distribute")

DONE_COUNTER = "flowmesh_ps_strategy_trainers_done"
POLL_SECS = 0.1
_TRAINERS = ("chief", "worker")
_BY_GRAPH: weakref.WeakKeyDictionary[Graph, ParameterServerStrategy] = weakref.WeakKeyDictionary()


def strategy_for_graph(graph: Graph) -> ParameterServerStrategy | None:
    """The ParameterServerStrategy whose scope was entered with ``graph`` as the default
    graph (its sessions must connect to the cluster), else None."""
    return _BY_GRAPH.get(graph)


class ParameterServerExtended(distribute_lib.StrategyExtended):
    """This task's place in the cluster, the ps devices and the trainer's lifecycle."""

    def __init__(self, strategy: distribute_lib.Strategy, resolver: ClusterResolver):
        spec = resolver.cluster_spec()
        self.cluster = spec if spec.jobs else None
        self.task_type = resolver.task_type if self.cluster is not None else None
        self.task_id = int(resolver.task_id or 0)
        if self.cluster is not None and self.task_type not in _TRAINERS + ("ps",):
            raise ValueError(f"ParameterServerStrategy runs on 'chief', 'worker' and 'ps' tasks; this task is "
                             f"{self.task_type!r} (TF_CONFIG's task.type)")
        jobs = self.cluster.jobs if self.cluster is not None else []
        self.num_ps = self.cluster.num_tasks("ps") if "ps" in jobs else 0
        self.trainers = [(job, i) for job in _TRAINERS if job in jobs for i in range(self.cluster.num_tasks(job))]
        worker = f"/job:{self.task_type}/task:{self.task_id}" if self.cluster is not None else "/device:CPU:0"
        super().__init__(strategy, (worker,))
        self._ps_devices = tuple(f"/job:ps/task:{i}/device:CPU:0" for i in range(self.num_ps))
        self._next_ps = 0
        self.server: Any = None

    @property
    def experimental_between_graph(self) -> bool:
        return True

    @property
    def parameter_devices(self) -> tuple[str, ...]:
        return self._ps_devices or self._devices

    @property
    def is_chief(self) -> bool:
        """The ``chief`` task, or worker 0 in a cluster without one (or no cluster)."""
        if not self.trainers:
            return True
        return (self.task_type, self.task_id) == self.trainers[0]

    @property
    def should_checkpoint(self) -> bool:
        return self.is_chief

    @property
    def should_init(self) -> bool:
        return self.is_chief

    @property
    def session_target(self) -> str:
        """``grpc://`` address of this task's server (``""`` without a cluster)."""
        return self.server.target if self.server is not None else ""

    # --- variables ------------------------------------------------------------------------
    def create_variable(self, next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        graph = get_default_graph()
        if not self._ps_devices or graph._colocation_stack:  # slots stay next to their variable
            return next_creator(**kwargs)
        device = self._ps_devices[self._next_ps % len(self._ps_devices)]
        self._next_ps += 1
        with graph.device(device):
            return next_creator(**kwargs)

    def initialize_or_wait(self, session: Any, variables: Sequence[Any]) -> None:
        """Makes ``variables`` (not initialized in ``session`` yet) usable: the chief
        initializes them; another trainer initializes only its own (not on a ps) and waits
        for the chief to initialize those on the ps tasks.

        Raises:
            DeadlineExceededError: the chief did not initialize them within
                ``FLOWMESH_RECOVERY_TIMEOUT_S`` seconds.
        """
        from flowmesh.ops import variables as variables_lib

        shared = [v for v in variables if "/job:ps" in (v.device or "")]
        own = [v for v in variables if v not in shared] if not self.is_chief else list(variables)
        if own:
            session.run(variables_lib.variables_initializer(own))
        if self.is_chief or not shared:
            return
        checks = [variables_lib.is_variable_initialized(v) for v in shared]
        deadline = time.monotonic() + _config.RECOVERY_TIMEOUT_S.get()
        while True:
            flags = session.run(checks)
            if all(flags):
                return
            if time.monotonic() > deadline:
                missing = [v.name for v, ok in zip(shared, flags) if not ok]
                raise DeadlineExceededError(
                    None, None, f"Trainer {self.task_type}:{self.task_id} waited "
                    f"{_config.RECOVERY_TIMEOUT_S.get():g} s for the chief to initialize {missing} on the ps "
                    "tasks; make sure the chief runs the same program (FLOWMESH_RECOVERY_TIMEOUT_S)")
            time.sleep(POLL_SECS)

    # --- lifecycle ------------------------------------------------------------------------
    def start_server(self) -> None:
        from flowmesh.distributed.server import Server

        if self.cluster is not None and self.server is None:
            self.server = Server(self.cluster, job_name=self.task_type, task_index=self.task_id)

    def serve(self) -> None:
        """(ps task) Serves until every trainer reported that it finished, then stops."""
        from flowmesh.runtime.session import Session

        with Graph().as_default():
            counter = _counter(self.task_id)
            with Session(self.session_target) as sess:
                sess.run(counter.initializer)
                logger.info("ps %d serving until %d trainers finish", self.task_id, len(self.trainers))
                while int(sess.run(counter.read_value())) < len(self.trainers):
                    time.sleep(POLL_SECS)
        time.sleep(2 * POLL_SECS)  # let the last trainer's update be answered
        self.server.stop()

    def report_done(self) -> None:
        """(trainer, at exit) Adds 1 to every ps task's trainer counter, retrying while a
        ps is not serving yet (up to ``FLOWMESH_CONNECT_TIMEOUT_S``)."""
        from flowmesh.runtime.session import Session

        if not self.num_ps or self.server is None:
            return
        with Graph().as_default():
            pending = [(i, _counter(i).assign_add(1)) for i in range(self.num_ps)]  # each ps once
            deadline = time.monotonic() + _config.CONNECT_TIMEOUT_S.get()
            last: list[int] = []
            with Session(self.session_target) as sess:
                while pending:
                    try:
                        if int(sess.run(pending[0][1])) >= len(self.trainers):
                            last.append(pending[0][0])
                        pending.pop(0)
                    except OpError as exc:  # the ps is not serving (or counting) yet
                        if time.monotonic() > deadline:
                            logger.warning("could not tell the ps tasks that %s:%d finished: %s",
                                           self.task_type, self.task_id, exc)
                            return
                        time.sleep(POLL_SECS)
        for index in last:  # the last trainer to finish lets the ps stop before it exits
            self._wait_until_stopped(index)

    def _wait_until_stopped(self, ps_index: int) -> None:
        """Waits (up to ``FLOWMESH_CONNECT_TIMEOUT_S``) until ps ``ps_index`` no longer
        accepts connections, so a launcher that stops the remaining tasks once the
        trainers have exited finds the ps already gone (with status 0)."""
        import socket

        from flowmesh.distributed.cluster_spec import split_address

        host, port = split_address(self.cluster.task_address("ps", ps_index))
        deadline = time.monotonic() + _config.CONNECT_TIMEOUT_S.get()
        while time.monotonic() < deadline:
            try:
                socket.create_connection((host, int(port)), timeout=1.0).close()
            except OSError:
                return
            time.sleep(POLL_SECS)


def _counter(ps_index: int) -> Any:
    from flowmesh.core.graph import device
    from flowmesh.ops.variables import Variable

    with device(f"/job:ps/task:{ps_index}"):
        # one name per ps task: counters of several ps tasks built in one graph must not be
        # renamed ``..._1`` (the ps would not know that name)
        return Variable(0, dtype=dtypes.int64, name=f"{DONE_COUNTER}_ps{ps_index}", trainable=False,
                        collections=[])


class ParameterServerStrategy(distribute_lib.Strategy):
    """Asynchronous between-graph training with variables on the ps tasks (TF1 semantics;
    see the module docstring for each task's role and how TF2 differs).

    Args:
        cluster_resolver: the cluster and this task (default: ``TF_CONFIG``).
        variable_partitioner: not supported (must be None).

    Raises:
        ValueError: this task is not a chief, worker or ps task.
        NotImplementedError: a ``variable_partitioner`` was given.
        SystemExit: (status 0, on a ps task) after serving until the trainers finished.
    """

    def __init__(self, cluster_resolver: ClusterResolver | None = None, variable_partitioner: Any = None):
        if variable_partitioner is not None:
            raise NotImplementedError("ParameterServerStrategy(variable_partitioner=...) is not supported by "
                                      "flowmesh; create partitioned variables with tf.get_variable(partitioner=...) "
                                      "under tf.train.replica_device_setter instead")
        self._cluster_resolver = cluster_resolver or TFConfigClusterResolver()
        extended = ParameterServerExtended(self, self._cluster_resolver)
        super().__init__(extended)
        extended.start_server()
        if extended.task_type == "ps":
            extended.serve()
            logger.info("ps %d: every trainer finished; exiting", extended.task_id)
            raise SystemExit(0)
        if extended.server is not None:
            atexit.register(extended.report_done)

    @property
    def extended(self) -> ParameterServerExtended:
        return self._extended  # type: ignore[return-value]

    @property
    def num_replicas_in_sync(self) -> int:
        """1: each trainer applies its own gradients (asynchronous training)."""
        return 1

    @property
    def cluster_resolver(self) -> ClusterResolver:
        return self._cluster_resolver

    @contextlib.contextmanager
    def scope(self) -> Iterator[distribute_lib.Strategy]:
        """Variables created inside go to the ps tasks; sessions of this graph made by
        Keras connect to this task's server."""
        _BY_GRAPH[get_default_graph()] = self
        with super().scope():
            yield self
