"""All-reduce (the Horovod API) between hosts: ``flowmesh run`` on each host as torchrun
runs, gloo on the interface that reaches the peers, a failure on one host stopping every
host, and an elastic job that takes a rank from another host and survives losing it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flowmesh.testing.hosts import HostBed

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(240)]

_RUN = [sys.executable, "-m", "flowmesh.cli.main", "run"]
SSHD = "/usr/sbin/sshd"


def _node(bed: HostBed, host: str, rank: int, nnodes: int, endpoint: str, *command: str,
          env: dict[str, str] | None = None):
    argv = _RUN + ["--nnodes", str(nnodes), "--node-rank", str(rank), "--rdzv-endpoint", endpoint,
                   "--nproc-per-node", "1", *command]
    return bed.spawn(host, argv, env=env, label=f"node{rank}")


def test_horovod_training_across_two_hosts_agrees_on_the_weights(host_bed):
    bed = host_bed(2)
    endpoint = f"{bed.ip('h1')}:29400"
    nodes = [_node(bed, host, i, 2, endpoint, "examples/allreduce_mnist.py", "--steps", "150")
             for i, host in enumerate(["h1", "h2"])]
    for node in nodes:
        assert node.wait(200) == 0, node.output()
    results = [re.search(r"rank (\d)/2: test accuracy ([0-9.]+)\s+weights checksum ([0-9.]+)",
                         node.output()) for node in nodes]
    assert [int(r.group(1)) for r in results] == [0, 1]
    assert results[0].group(3) == results[1].group(3)  # every rank holds the same model
    assert float(results[0].group(2)) >= 0.9


_FAIL_ON_RANK_1 = """
import sys, time
import flowmesh as tf
import flowmesh.collective as hvd
hvd.init()
with tf.Session() as sess:  # one all-reduce: both ranks are wholly up before rank 1 fails
    sess.run(hvd.allreduce(tf.constant([1.0])))
print(f"rank {hvd.rank()} of {hvd.size()} up", flush=True)
if hvd.rank() == 1:
    sys.exit(3)
time.sleep(120)
"""


def test_a_rank_failing_on_one_host_stops_the_job_on_every_host(host_bed):
    bed = host_bed(2)
    endpoint = f"{bed.ip('h1')}:29400"
    nodes = [_node(bed, host, i, 2, endpoint, sys.executable, "-c", _FAIL_ON_RANK_1)
             for i, host in enumerate(["h1", "h2"])]
    nodes[0].wait_for_line("rank 0 of 2 up", 120)
    started = time.monotonic()
    assert nodes[1].wait(60) == 3, nodes[1].output()
    assert nodes[0].wait(60) != 0, nodes[0].output()
    assert time.monotonic() - started < 30
    assert "the job failed on another node (node 1: rank 1 exited with status 3)" in nodes[0].output()


def test_an_elastic_job_takes_a_rank_from_another_host_and_survives_losing_that_host(
        host_bed, tmp_path):
    secret = tmp_path / "secret"  # the same secret file on both hosts
    secret.write_text("s" * 64)
    secret.chmod(0o600)
    env = {"FLOWMESH_CLUSTER_SECRET_FILE": str(secret)}
    bed = host_bed(2)
    endpoint = f"{bed.ip('h1')}:29400"
    script = ["examples/elastic_allreduce.py", "--steps", "100000", "--sleep", "0.02"]
    main = bed.spawn("h1", _RUN + ["--min-np", "1", "--max-np", "2", "-np", "1", "--rdzv-endpoint",
                                   endpoint, *script], env=env, label="h1")
    main.wait_for_line("elastic job: 1 rank(s)", 120)  # the store listens: h2 may join
    bed.spawn("h2", _RUN + ["--join", endpoint, "-np", "1", *script], env=env, label="h2")
    main.wait_for_line("ranks 2", 240)
    bed.cut("h2")
    lost = main.wait_for_line("members ['0']; lost 1", 120)  # the launcher's round line
    assert re.search(r"round \d+: 1 rank\(s\), members \['0'\]; lost 1", lost), main.output()
    after = len(main.lines)
    deadline = time.monotonic() + 60
    while not any("ranks 1" in line for line in main.lines[after:]):  # the survivor trains on
        assert time.monotonic() < deadline and main.proc.poll() is None, main.output()
        time.sleep(0.2)
    main.kill(signal.SIGTERM)


def _start_sshd(bed: HostBed, host: str, keys: Path) -> None:
    """An sshd on ``host`` that takes ``keys/id``'s key (root's login, no password)."""
    config = keys / f"sshd-{host}.conf"
    config.write_text("\n".join([
        f"ListenAddress {bed.ip(host)}", f"HostKey {keys}/host", f"AuthorizedKeysFile {keys}/id.pub",
        f"PidFile {keys}/sshd-{host}.pid", "StrictModes no", "UsePAM no", "PermitRootLogin yes",
        "PasswordAuthentication no", "LogLevel ERROR", ""]))
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege-separation directory
    bed.spawn(host, [SSHD, "-D", "-e", "-f", str(config)], label=f"sshd-{host}")
    deadline = time.monotonic() + 30
    probe = f"import socket; socket.create_connection(({bed.ip(host)!r}, 22), 1)"
    while bed.run(host, [sys.executable, "-c", probe], timeout=10).returncode:
        assert time.monotonic() < deadline, "sshd did not start"
        time.sleep(0.2)


def test_one_command_starts_the_job_on_several_hosts_over_ssh(host_bed, tmp_path):
    if not os.path.exists(SSHD):
        pytest.skip("no sshd (Debian's openssh-server; `make test` installs it)")
    bed = host_bed(2)
    for name in ("id", "host"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True)
    _start_sshd(bed, "h2", tmp_path)
    launcher = bed.spawn("h1", _RUN + ["-H", "h1:1,h2:1", "-np", "2", "--ssh-identity-file",
                                       str(tmp_path / "id"), "--ssh-option",
                                       f"UserKnownHostsFile={tmp_path}/known_hosts",
                                       "examples/allreduce_mnist.py", "--steps", "100"], label="launcher")
    assert launcher.wait(200) == 0, launcher.output()
    results = re.findall(r"\[(\d)\] rank (\d)/2: test accuracy [0-9.]+\s+weights checksum ([0-9.]+)",
                         launcher.output())
    assert sorted(r[:2] for r in results) == [("0", "0"), ("1", "1")], launcher.output()
    assert results[0][2] == results[1][2]  # rank 1 ran on h2, through ssh, in step with rank 0
