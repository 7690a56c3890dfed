"""flowmesh on Apache Spark, with TensorFlowOnSpark's API (``pip install flowmesh[spark]``).

A TensorFlowOnSpark program runs with one import changed::

    from flowmesh.spark import TFCluster, TFNode      # was: from tensorflowonspark import ...

* ``TFCluster.run(sc, map_fun, args, num_executors, num_ps, input_mode=...)``: a
  TensorFlow cluster as one barrier stage (gang-scheduled; the cluster spec comes from
  ``BarrierTaskContext.allGather``), ``cluster.train(rdd, num_epochs)``,
  ``cluster.inference(rdd)``, ``cluster.shutdown()``;
* ``TFNode.start_cluster_server(ctx)``, ``TFNode.DataFeed(ctx.mgr)`` inside ``map_fun``;
* ``TFParallel.run(sc, map_fun, args, n)``: n independent nodes;
* ``run_experiments(spark, map_fun, args_dict)``: one trial per hyperparameter combination.

Importing this package does not import pyspark; the functions take the user's
SparkContext/SparkSession.
"""

from flowmesh.spark import TFCluster, TFNode, TFParallel
from flowmesh.spark.experiments import combinations, run_experiments
from flowmesh.spark.TFCluster import InputMode, TaskError

__all__ = ["InputMode", "TFCluster", "TFNode", "TFParallel", "TaskError", "combinations",
           "run_experiments"]
