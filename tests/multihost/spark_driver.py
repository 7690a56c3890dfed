"""A Spark driver for the multi-host tests: ``examples/spark_digits.py``'s ``main_fun`` on
a standalone cluster (``spark://``), in InputMode.TENSORFLOW and then InputMode.SPARK, in
one SparkSession. Prints one JSON line per mode: the chief's host, the cluster spec the
nodes formed and the accuracy.

    python tests/multihost/spark_driver.py spark://HOST:7077 EXECUTORS
"""

from __future__ import annotations

import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "spark_digits.py")


def node(argv: list[str], ctx):  # noqa: ANN001, ANN201 - TensorFlowOnSpark's map_fun
    import runpy
    import socket

    accuracy = runpy.run_path(EXAMPLE)["main_fun"](argv, ctx)
    return {"host": socket.gethostname(), "cluster": ctx.cluster_spec, "accuracy": accuracy}


def main() -> None:
    from pyspark.sql import SparkSession

    from flowmesh.datasets import load_digits
    from flowmesh.spark import TFCluster

    master, executors = sys.argv[1], int(sys.argv[2])
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master(master).appName("flowmesh-multihost")
             .config("spark.cores.max", str(executors)).config("spark.executor.memory", "512m")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext
    (images, labels), _ = load_digits()
    rows = [(image, int(label)) for image, label in zip(images, labels)]
    for mode, flags in ((TFCluster.InputMode.TENSORFLOW, ["--steps=200"]),
                        (TFCluster.InputMode.SPARK, ["--steps=1000000", "--input_mode=spark"])):
        cluster = TFCluster.run(sc, node, ["spark_digits.py", *flags], executors, 1, input_mode=mode)
        if mode == TFCluster.InputMode.SPARK:
            cluster.train(sc.parallelize(rows, 2 * executors), num_epochs=2)
        cluster.shutdown(timeout=300)
        print(json.dumps({"mode": "spark" if mode == TFCluster.InputMode.SPARK else "tensorflow",
                          **cluster.results[("worker", 0)]}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
