"""``RunConfig(eval_distribute=tf.distribute.MirroredStrategy(devices))``: evaluation split
over the strategy's devices.

``input_fn`` is called once; a dataset gives every replica its own next batch (its batch is
the per-replica batch, as in training), so one evaluation step reads ``replicas`` batches.
``model_fn`` is called once per replica, under the replica's device. The model's variables
exist once (replica 0 creates them; later replicas reuse them by name, as ``tf.get_variable``
and ``tf.layers`` do under ``AUTO_REUSE``), so the checkpoint restores as without a
strategy. Metric variables (local variables) are created per replica, each replica adding
its batches into its own; after every step a *fold* op adds the other replicas' metric
variables into replica 0's and zeroes them, so replica 0's metric values cover every
replica's batches: TensorFlow's ``SUM`` aggregation of metric variables. A replica's model
runs only once every replica got its batch, so a final batch without a partner for every
replica ends the evaluation without being counted (make the number of batches a multiple
of the replicas to evaluate everything).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.errors import InvalidArgumentError, UnimplementedError
from flowmesh.estimator import _inputs
from flowmesh.estimator.estimator_spec import EstimatorSpec, validate_spec
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.train.training_util import get_or_create_global_step


class DistributedEval(NamedTuple):
    """The pieces of a replicated EVAL graph that ``EvalGraph`` keeps."""

    spec: EstimatorSpec          # the first replica's spec
    values: dict                 # metric name -> value tensor (every replica's batches)
    update: Any                  # one step: every replica's metric updates, then the fold
    global_step: Any


def check_strategy(strategy: Any) -> Any:
    """Returns ``strategy`` if evaluation can be distributed by it.

    Raises:
        UnimplementedError: a strategy other than ``MirroredStrategy``.
    """
    from flowmesh.distribute.mirrored_strategy import MirroredStrategy

    if not isinstance(strategy, MirroredStrategy):
        raise UnimplementedError(None, None, (
            f"RunConfig(eval_distribute={type(strategy).__name__}) is not supported: flowmesh "
            "evaluates under tf.distribute.MirroredStrategy(devices) or without a strategy"))
    return strategy


def build(estimator: Any, input_fn: Any, strategy: Any, init_ops: list) -> DistributedEval:
    """Builds the replicated EVAL graph in the default graph (see the module docstring)."""
    from flowmesh.estimator._distributed import input_context
    from flowmesh.metrics import mean as metrics_mean
    from flowmesh.ops import variable_scope as vs
    from flowmesh.ops.control_flow_ops import group
    from flowmesh.ops.variable_creator import variable_creator_scope

    check_strategy(strategy)
    devices = list(strategy.extended.worker_devices)
    inputs = _inputs.call_input_fn_per_replica(input_fn, estimator.config, estimator.params, len(devices),
                                               input_context(strategy), ModeKeys.EVAL, init_ops)
    graph = get_default_graph()
    global_step = get_or_create_global_step()
    built, metric_vars = [], []
    for replica, (device, (features, labels)) in enumerate(zip(devices, _together(inputs))):
        before = len(graph.get_collection(GraphKeys.LOCAL_VARIABLES))
        scope = f"replica_{replica}" if replica else None
        creator = _ReplicaCreator(replica, graph)
        with graph.device(device), graph.name_scope(scope), variable_creator_scope(creator), \
                vs.variable_scope(vs.get_variable_scope(), reuse=vs.AUTO_REUSE if replica else None):
            spec = validate_spec(estimator._call_model_fn(features, labels, ModeKeys.EVAL), ModeKeys.EVAL)
            metrics = {"loss": metrics_mean(spec.loss)}
            metrics.update(spec.eval_metric_ops or {})
        built.append((spec, metrics))
        metric_vars.append(graph.get_collection(GraphKeys.LOCAL_VARIABLES)[before:])
    spec, metrics = built[0]
    updates = group(*[pair[1] for _, replica_metrics in built for pair in replica_metrics.values()])
    values = {name: pair[0] for name, pair in metrics.items()}
    return DistributedEval(spec, values, _fold(updates, metric_vars), global_step)


class _ReplicaCreator:
    """Variable creator of replica ``replica``: local (metric) variables are the replica's
    own; a model variable made by ``tf.Variable`` in a later replica is replica 0's
    variable of the same name."""

    def __init__(self, replica: int, graph: Any):
        self._replica = replica
        self._graph = graph

    def __call__(self, next_creator: Any, **kwargs: Any) -> Any:
        collections = kwargs.get("collections") or [GraphKeys.GLOBAL_VARIABLES]
        if self._replica == 0 or GraphKeys.LOCAL_VARIABLES in collections:
            return next_creator(**kwargs)
        prefix = f"replica_{self._replica}/"
        scope = self._graph.get_name_scope()
        scope = scope[len(prefix):] if (scope + "/").startswith(prefix) else scope
        wanted = "/".join(p for p in (scope, kwargs.get("name") or "Variable") if p)
        for variable in self._graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if variable.op.name == wanted:
                return variable
        raise InvalidArgumentError(
            f"eval_distribute: replica {self._replica}'s model_fn creates model variable "
            f"{wanted!r}, which replica 0 did not create under that name; create model variables "
            "with tf.get_variable or tf.layers (shared by name across replicas)")


def _together(inputs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Each replica's inputs, available only once every replica's inputs are (so a step
    whose input runs out for one replica updates no metric)."""
    from flowmesh.core.graph import Tensor
    from flowmesh.ops import _structure as nest
    from flowmesh.ops.array_ops import identity

    every = [t for pair in inputs for t in nest.flatten(pair) if isinstance(t, Tensor)]
    if len(inputs) == 1 or not every:
        return inputs
    with get_default_graph().control_dependencies(every):
        return [nest.map_structure(lambda t: identity(t) if isinstance(t, Tensor) else t, pair)
                for pair in inputs]


def _fold(updates: Any, metric_vars: list[list[Any]]) -> Any:
    """After ``updates``: every replica's metric variables added into replica 0's, and reset."""
    from flowmesh.ops import array_ops
    from flowmesh.ops.control_flow_ops import group

    graph = get_default_graph()
    first, others = metric_vars[0], metric_vars[1:]
    for replica, own in enumerate(others, 1):
        if len(own) != len(first):
            raise InvalidArgumentError(
                f"eval_distribute: replica {replica} created {len(own)} metric variables, replica 0 "
                f"{len(first)}; model_fn must build the same metrics on every replica")
    folds = []
    with graph.control_dependencies([updates]):
        for index, target in enumerate(first):
            parts = [own[index].read_value() for own in others]
            with graph.colocate_with(target.op):
                folds.append(target.assign_add(parts[0] if len(parts) == 1 else _add_n(parts),
                                               read_value=False))
            with graph.control_dependencies(parts):
                folds.extend(own[index].assign(array_ops.zeros_like(part), read_value=False)
                             for own, part in zip(others, parts))
    return group(updates, *folds, name="distributed_eval_update")


def _add_n(parts: list) -> Any:
    from flowmesh.ops import math_ops

    return math_ops.add_n(parts)
