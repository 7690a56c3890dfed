"""Parallel experiments on Spark: one task per hyperparameter combination (seed 004).

    from flowmesh.spark import run_experiments

    def train(learning_rate, dropout):
        ...                      # a whole flowmesh training run
        return accuracy

    results = run_experiments(spark, train, {"learning_rate": [0.001, 0.0001],
                                             "dropout": [0.45, 0.7]})

Trials are independent, so this is an ordinary stage (not a barrier one): Spark runs as
many at once as it has slots and queues the rest. Each trial runs in a process of its
own, so trials that reuse a Spark worker never share flowmesh state.
"""

from __future__ import annotations

import itertools
from typing import Any

from flowmesh.spark.child import ChildProcess
from flowmesh.spark.TFCluster import collect_in_order


def combinations(args_dict: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of ``args_dict``'s lists, as keyword dicts, the last key
    varying fastest."""
    for name, values in args_dict.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"args_dict[{name!r}] must be a list of values, got {values!r}")
    names = list(args_dict)
    return [dict(zip(names, values)) for values in itertools.product(*(args_dict[n] for n in names))]


def run_experiments(spark: Any, map_fun: Any, args_dict: dict[str, list[Any]]) -> list[Any]:
    """Runs ``map_fun(**params)`` once per combination of ``args_dict``'s lists.

    Args:
        spark: a SparkSession (or SparkContext).
        map_fun: the trial; its keyword arguments are ``args_dict``'s keys.
        args_dict: ``{name: [value, ...]}``.

    Returns:
        The trials' return values, in combination order (see :func:`combinations`).

    Raises:
        TaskError: a trial failed (its parameters and traceback in the message).
    """
    trials = combinations(args_dict)
    if not trials:
        return []
    sc = getattr(spark, "sparkContext", spark)

    def trial(indexed: tuple[int, dict[str, Any]]) -> tuple[int, Any]:
        index, params = indexed
        name = f"flowmesh.spark node trial {index} {params}"
        return index, ChildProcess(lambda: map_fun(**params), name).wait()

    stage = sc.parallelize(list(enumerate(trials)), len(trials)).map(trial)
    return collect_in_order(stage)
