"""A real pyspark ``local[3]`` SparkContext for the flowmesh.spark tests (skipped when
pyspark or Java is missing; `make test` installs both).

The context starts when this directory is collected, not when the first test needs it:
pyspark launches its JVM with a ``preexec_fn``, which runs Python code in the forked
child, and a fork taken late in the suite, with the threads earlier tests left behind
(gRPC, torch, loggers), crashed the whole run with a segmentation fault.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark not installed (pip install flowmesh[spark])")
if shutil.which("java") is None:
    pytest.skip("Java is not installed (apt-get install openjdk-17-jre-headless)", allow_module_level=True)

from pyspark import cloudpickle  # noqa: E402

from tests.spark import nodes  # noqa: E402

cloudpickle.register_pickle_by_value(nodes)  # the executors cannot import the tests package

SLOTS = 3


def _start_spark():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python: this venv's
    spark = (SparkSession.builder.master(f"local[{SLOTS}]").appName("flowmesh-tests")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("OFF")  # the failure tests' executor errors arrive as exceptions
    return spark


_SPARK = _start_spark()


@pytest.fixture(scope="session")
def sc():
    yield _SPARK.sparkContext
    _SPARK.stop()
