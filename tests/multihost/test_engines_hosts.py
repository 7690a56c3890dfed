"""The engines users already run, each spread over several hosts: a Spark standalone
cluster (a master, one worker per host) running TensorFlowOnSpark's API in both input
modes, a Ray cluster of several nodes running ``flowmesh.ray``, and the Kubernetes
manifests' pods, one per host."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from flowmesh.testing.cluster import REPO, child_env
from flowmesh.testing.hosts import HostBed

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(420)]


def _spark_home() -> str:
    pyspark = pytest.importorskip("pyspark")
    if os.system("command -v java >/dev/null 2>&1") != 0:
        pytest.skip("Spark needs Java")
    return os.path.dirname(pyspark.__file__)


def test_tensorflow_on_spark_runs_on_a_standalone_cluster_across_hosts(host_bed, tmp_path):
    home = _spark_home()
    bed: HostBed = host_bed(3)
    env = {"SPARK_HOME": home, "SPARK_LOG_DIR": str(tmp_path / "logs"),
           "SPARK_WORKER_DIR": str(tmp_path / "work"), "PYSPARK_PYTHON": sys.executable}
    master = f"spark://{bed.ip('h1')}:7077"
    spark_class = os.path.join(home, "bin", "spark-class")
    bed.spawn("h1", [spark_class, "org.apache.spark.deploy.master.Master", "--host", bed.ip("h1"),
                     "--port", "7077", "--webui-port", "0"], env=env, label="master")
    workers = [bed.spawn(host, [spark_class, "org.apache.spark.deploy.worker.Worker", "--cores", "1",
                                "--memory", "1g", "--webui-port", "0", "--host", bed.ip(host), master],
                         env=env, label=f"spark-worker-{host}") for host in ("h2", "h3")]
    for worker in workers:  # they retry until the master is up
        worker.wait_for_line("Successfully registered with master", 120)
    driver = bed.run("h1", [sys.executable, "tests/multihost/spark_driver.py", master, "2"],
                     timeout=360, env=env)
    assert driver.returncode == 0, driver.stdout[-2000:] + driver.stderr[-4000:]
    results = [json.loads(line) for line in driver.stdout.splitlines() if line.startswith("{")]
    assert [r["mode"] for r in results] == ["tensorflow", "spark"], driver.stdout
    for result in results:
        ps_host = result["cluster"]["ps"][0].rsplit(":", 1)[0]
        chief_host = result["cluster"]["worker"][0].rsplit(":", 1)[0]
        assert {ps_host, chief_host} == {bed.ip("h2"), bed.ip("h3")}, result  # one node per host
        assert result["host"] in ("h2", "h3") and result["accuracy"] >= 0.85, result


def test_flowmesh_ray_runs_ps_and_allreduce_jobs_on_a_ray_cluster_of_three_nodes(host_bed, tmp_path):
    pytest.importorskip("ray")
    bed: HostBed = host_bed(3)
    token = tmp_path / "ray-token"  # Ray's own cluster token, shared by every node
    token.write_text(os.urandom(32).hex())
    env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    ray = os.path.join(os.path.dirname(sys.executable), "ray")
    head = f"{bed.ip('h1')}:6379"
    start = [ray, "start", "--num-cpus", "1", "--block", "--disable-usage-stats"]
    temp = tempfile.mkdtemp(prefix="fmray")  # short: Ray's socket paths must fit 107 bytes
    try:
        bed.spawn("h1", start + ["--head", "--node-ip-address", bed.ip("h1"), "--port", "6379",
                                 "--include-dashboard=false", "--temp-dir", f"{temp}/h1"],
                  env=env, label="ray-head").wait_for_line("Ray runtime started", 120)
        for host in ("h2", "h3"):  # each node its own temp dir, as on its own machine
            bed.spawn(host, start + ["--address", head, "--node-ip-address", bed.ip(host),
                                     "--temp-dir", f"{temp}/{host}"], env=env, label=f"ray-{host}"
                      ).wait_for_line("Ray runtime started", 120)
        driver = bed.run("h1", [sys.executable, "tests/multihost/ray_driver.py", head], timeout=300,
                         env=env)
    finally:
        bed.close()  # the Ray nodes, before their files go
        shutil.rmtree(temp, ignore_errors=True)
    assert driver.returncode == 0, driver.stdout[-2000:] + driver.stderr[-4000:]
    ps, allreduce, cluster = [json.loads(line) for line in driver.stdout.splitlines()
                              if line.startswith("{")]
    assert len(cluster["nodes"]) == 3
    hosts = {address.rsplit(":", 1)[0] for job in ps["cluster"].values() for address in job}
    assert hosts == {bed.ip(h) for h in ("h1", "h2", "h3")}, ps  # one task per node
    assert ps["value"] >= 0.9
    assert allreduce["value"] == {"size": 2, "spread": 0.0}


def test_the_kubernetes_pods_each_on_its_own_host_find_each_other_by_dns_name(host_bed):
    host_bed  # noqa: B018 - skips where the machine cannot make a bed; the dry run makes its own
    out = subprocess.run([sys.executable, "-m", "flowmesh.cli.main", "k8s", "manifest", "--name", "mnist",
                          "--ps", "1", "--workers", "2", "--image", "unused", "--dry-run", "--hosts",
                          "--timeout", "150", "--", "python", "examples/distributed_mnist.py",
                          "--steps", "150"], capture_output=True, text=True, timeout=200,
                         cwd=REPO, env=child_env())
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    placed = re.search(r"dry run: (.*)", out.stdout + out.stderr).group(1)
    addresses = re.findall(r"=\d+@([0-9.]+)", placed)
    assert len(set(addresses)) == 3, placed  # three pods, three hosts
    accuracy = float(re.search(r"test accuracy ([0-9.]+)", out.stdout).group(1))
    assert accuracy >= 0.9, out.stdout[-2000:]
    assert "serving at grpc://mnist-ps-0.mnist:2222" in out.stdout  # the pod's own DNS name
