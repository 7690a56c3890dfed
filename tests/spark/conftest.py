"""A real pyspark ``local[3]`` SparkContext for the flowmesh.spark tests (skipped when
pyspark or Java is missing; `.ci/run` installs both)."""

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


@pytest.fixture(scope="session")
def sc():
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python: this venv's
    spark = (SparkSession.builder.master(f"local[{SLOTS}]").appName("flowmesh-tests")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    yield spark.sparkContext
    spark.stop()
