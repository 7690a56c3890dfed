"""`flowmesh server` fails with one line, not a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from flowmesh.testing.cluster import child_env

pytestmark = pytest.mark.timeout(60)


def _server(args: list[str], tf_config: str | None = None) -> subprocess.CompletedProcess:
    env = child_env({"TF_CONFIG": tf_config} if tf_config else None)
    return subprocess.run([sys.executable, "-m", "flowmesh.cli.main", "server", *args], env=env,
                          capture_output=True, text=True, timeout=50)


def test_bad_tf_config_and_busy_port_are_one_line_errors():
    bad = _server([], tf_config='{"cluster": {"ps": ["localhost:1"]}, "task": {"type": "worker"}}')
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "flowmesh server: TF_CONFIG task type 'worker' is not a job of its cluster (['ps'])"]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = _server(["--cluster", f"ps=localhost:{port}", "--job", "ps", "--task", "0"])
    assert taken.returncode == 2
    assert taken.stderr.strip().splitlines() == [
        f"flowmesh server: Cannot listen on 127.0.0.1:{port}: Address already in use (another "
        "process holds the port)"]
