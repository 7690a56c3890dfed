"""TensorFlowOnSpark's ``TFCluster`` module on flowmesh: a TensorFlow cluster as one
barrier stage of Spark tasks.

    from flowmesh.spark import TFCluster

    cluster = TFCluster.run(sc, map_fun, args, num_executors=3, num_ps=1,
                            input_mode=TFCluster.InputMode.SPARK)
    cluster.train(data_rdd, num_epochs=2)
    cluster.shutdown()

One Spark task slot holds one TensorFlow node for the whole job (so ``local[N]`` needs
N >= num_executors). Differences from TensorFlowOnSpark, each deliberate:

* InputMode.SPARK starts the nodes with ``train``/``inference`` (the stage reads the
  data), so each cluster takes one ``train`` or one ``inference`` call. The rows reach
  the training nodes through a shuffle (round robin), nothing is lost or duplicated, and
  each epoch ends with a partial batch instead of running into the next one.
* ``inference`` returns an RDD with one result per row, in the input's order; it runs
  when an action asks for it (as every RDD does).
* Every task ends when the training nodes are done: ps nodes are stopped, so the job
  never hangs on ``server.join()``; a failing node fails the job on the driver with its
  traceback (``TaskError``), and ``shutdown(timeout=...)`` cancels a job that overruns.
"""

from __future__ import annotations

import logging
import secrets
import threading
import uuid
from dataclasses import replace
from typing import Any

from flowmesh.spark.feed import pack_chunks
from flowmesh.spark.node_task import FAILURE_MARKER, NodeSpec, run_node
from flowmesh.spark.roles import cluster_template, training_executors

log = logging.getLogger("flowmesh.spark")


class InputMode:
    """Where the nodes' input comes from."""

    TENSORFLOW = 0  # the nodes read files themselves (tf.data)
    SPARK = 1  # the nodes are fed an RDD's rows through TFNode.DataFeed


class TaskError(RuntimeError):
    """A node of the cluster failed; the message carries its traceback."""


class TFCluster:
    """A running (or, in SPARK mode, ready) cluster; made by :func:`run`."""

    def __init__(self, sc: Any, spec: NodeSpec, input_mode: int, num_executors: int):
        self.sc = sc
        self.input_mode = input_mode
        self.num_executors = num_executors
        self.cluster_template = spec.template
        self.results: dict[tuple[str, int], Any] = {}  # (job, index) -> map_fun's value
        self._spec = spec
        self._group = f"flowmesh-{uuid.uuid4().hex[:12]}"
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._used = False

    def train(self, dataRDD: Any, num_epochs: int = 0, feed_timeout: float = 600,
              qname: str = "input", timeout: float | None = None) -> None:
        """Feeds ``dataRDD`` to the training nodes ``num_epochs`` times (0 means once) and
        returns when they are done (InputMode.SPARK only; ``timeout`` is flowmesh's: the
        job is cancelled past it)."""
        self._start_feeding("train")
        spec = replace(self._spec, feed=True, num_epochs=max(1, num_epochs), feed_timeout=feed_timeout,
                       packed=True)
        self._launch(_spread(dataRDD, self.cluster_template, self.num_executors, packed=True), spec)
        self._wait(timeout)

    def inference(self, dataRDD: Any, feed_timeout: float = 600, qname: str = "input") -> Any:
        """An RDD of the nodes' answers, one per row of ``dataRDD``, in its order."""
        self._start_feeding("inference")
        spec = replace(self._spec, feed=True, inference=True, feed_timeout=feed_timeout)
        parts = dataRDD.getNumPartitions()
        keyed = dataRDD.mapPartitionsWithIndex(lambda p, it: (((p, i), row) for i, row in enumerate(it)))
        spread = _spread(keyed, self.cluster_template, self.num_executors)
        answered = spread.barrier().mapPartitions(lambda it: _answer_keyed(spec, it))
        return (answered.partitionBy(parts, lambda position: position[0])
                .mapPartitions(lambda it: (value for _, value in sorted(it, key=lambda kv: kv[0]))))

    def shutdown(self, ssc: Any = None, grace_secs: float = 0, timeout: float = 259200) -> None:
        """Waits for the nodes to finish, at most ``timeout`` seconds.

        Raises:
            TaskError: a node failed (its traceback in the message).
            TimeoutError: the job overran ``timeout`` (it is cancelled first).
        """
        self._wait(timeout)

    def _launch(self, nodes: Any, spec: NodeSpec) -> None:
        """Runs the barrier stage over ``nodes`` (one partition per node) in a thread."""

        def job() -> None:
            self.sc.setJobGroup(self._group, "flowmesh TensorFlow cluster", interruptOnCancel=True)
            try:
                outcome = nodes.barrier().mapPartitions(lambda it: run_node(spec, it)).collect()
                self.results.update({(job, index): value for job, index, value in outcome})
            except BaseException as error:  # noqa: BLE001 - re-raised by _wait
                self._error = error

        self._thread = threading.Thread(target=job, name="flowmesh-spark-cluster", daemon=True)
        self._thread.start()

    def _wait(self, timeout: float | None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self.sc.cancelJobGroup(self._group)
                self._thread.join(60)
                raise TimeoutError(f"the flowmesh cluster did not finish within {timeout:.0f} s; "
                                   "its Spark job was cancelled")
        if self._error is not None:
            error, self._error = self._error, None
            raise _task_error(error) from error

    def _start_feeding(self, call: str) -> None:
        if self.input_mode != InputMode.SPARK:
            raise ValueError(f"cluster.{call}(rdd) needs input_mode=InputMode.SPARK; in TENSORFLOW "
                             "mode the nodes read their input themselves")
        if self._used:
            raise ValueError("a SPARK-mode cluster takes one train() or inference() call; "
                             "run another TFCluster for the next one")
        self._used = True


def run(sc: Any, map_fun: Any, tf_args: Any, num_executors: int, num_ps: int,
        tensorboard: bool = False, input_mode: int = InputMode.TENSORFLOW, log_dir: str | None = None,
        driver_ps_nodes: bool = False, master_node: str | None = None, reservation_timeout: float = 600,
        queues: Any = None, eval_node: bool = False, release_port: bool = True) -> TFCluster:
    """Starts a TensorFlow cluster of ``num_executors`` nodes on Spark.

    Args:
        sc: the SparkContext.
        map_fun: ``map_fun(tf_args, ctx)``, run once per node (see ``TFNodeContext``).
        tf_args: passed to every ``map_fun`` (e.g. ``sys.argv`` or an argparse namespace).
        num_executors: nodes in the cluster (one Spark task slot each).
        num_ps: how many of them are parameter servers.
        tensorboard, log_dir: flowmesh starts no TensorBoard; the chief's summaries in
            ``log_dir`` are read by ``tensorboard --logdir``.
        driver_ps_nodes: not supported (ps nodes run as Spark tasks).
        master_node: ``"chief"`` or ``"master"`` to give one node that job.
        reservation_timeout, queues, release_port: accepted for compatibility.
        eval_node: one node becomes the ``evaluator``.

    Returns:
        A :class:`TFCluster`; in TENSORFLOW mode its nodes are already starting.
    """
    if driver_ps_nodes:
        raise ValueError("driver_ps_nodes=True is not supported: flowmesh runs ps nodes as Spark tasks")
    if tensorboard:
        log.info("flowmesh starts no TensorBoard: run `tensorboard --logdir %s`", log_dir or "<the chief's dir>")
    template = cluster_template(num_executors, num_ps, master_node, eval_node)
    log.info("flowmesh.spark cluster: %s", template)
    secret = {"FLOWMESH_CLUSTER_SECRET": secrets.token_hex(32)}  # the job's own: only its nodes get in
    cluster = TFCluster(sc, NodeSpec(map_fun, tf_args, template, environment=secret), input_mode, num_executors)
    if input_mode == InputMode.TENSORFLOW:
        cluster._launch(sc.parallelize(range(num_executors), num_executors), cluster._spec)
    return cluster


def _spread(rdd: Any, template: dict[str, list[int]], num_executors: int, packed: bool = False) -> Any:
    """``rdd``'s rows, round robin over the training executors' partitions (the others,
    ps and evaluator, get none), as an RDD of ``num_executors`` partitions. With
    ``packed``, what moves is chunks of rows packed where the data is (one array per
    column: Spark's shuffle then pickles a few large arrays instead of every row)."""
    trainers = training_executors(template)
    count = len(trainers)

    def key(part: int, rows: Any) -> Any:
        items = pack_chunks(rows) if packed else rows
        return ((trainers[(part + i) % count], item) for i, item in enumerate(items))

    return rdd.mapPartitionsWithIndex(key).partitionBy(num_executors, lambda e: e).values()


def _answer_keyed(spec: NodeSpec, keyed_rows: Any) -> Any:
    """Runs an inference node on ``(position, row)`` pairs; yields ``(position, answer)``."""
    positions: list[Any] = []

    def rows() -> Any:
        for position, row in keyed_rows:
            positions.append(position)
            yield row

    for i, answer in enumerate(run_node(spec, rows())):
        yield positions[i], answer


def collect_in_order(stage: Any) -> list[Any]:
    """The values of a stage of ``(index, value)`` pairs, by index; a failed task raises
    :class:`TaskError` with its traceback (used by TFParallel and run_experiments)."""
    try:
        return [value for _, value in sorted(stage.collect(), key=lambda kv: kv[0])]
    except Exception as error:
        raise _task_error(error) from error


def _task_error(error: BaseException) -> TaskError:
    text = str(error)
    start = text.find(FAILURE_MARKER)
    if start < 0:
        return TaskError(f"the flowmesh cluster's Spark job failed: {text[:4000]}")
    end = text.find("\n\tat ", start)
    return TaskError(text[start:end if end > 0 else None].strip())
