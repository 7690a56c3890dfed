"""gRPC over mutual TLS (`flowmesh server --tls-cert/--tls-key/--tls-ca`), real process."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import flowmesh as tf
from flowmesh.testing.cluster import LocalCluster

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(120)]


def _certificates(directory) -> dict[str, str]:
    """A CA and a server and a client certificate for localhost (openssl CLI)."""
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "1", "-subj", "/CN=flowmesh-test-ca")
    (directory / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for who in ("server", "client"):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{who}.key", "-out", f"{who}.csr",
            "-subj", "/CN=localhost")
        run("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{who}.pem", "-days", "1", "-extfile", "san.ext")
    return {name: str(directory / name) for name in
            ("ca.pem", "server.pem", "server.key", "client.pem", "client.key")}


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_mutual_tls_admits_a_client_with_a_certificate_and_refuses_others(tmp_path, monkeypatch):
    files = _certificates(tmp_path)
    server_env = {"FLOWMESH_TLS_CERT": files["server.pem"], "FLOWMESH_TLS_KEY": files["server.key"],
                  "FLOWMESH_TLS_CA": files["ca.pem"]}
    monkeypatch.setenv("FLOWMESH_CONNECT_TIMEOUT_S", "3")
    with LocalCluster({"ps": 1}, env=server_env) as cluster:
        with tf.device("/job:ps/task:0"):
            c = tf.constant(3.0) * 2.0
        for env in ({}, {"FLOWMESH_TLS_CA": files["ca.pem"]}):  # plaintext; TLS, no certificate
            for name in ("FLOWMESH_TLS_CA", "FLOWMESH_TLS_CERT", "FLOWMESH_TLS_KEY"):
                monkeypatch.delenv(name, raising=False)
            for name, value in env.items():
                monkeypatch.setenv(name, value)
            with pytest.raises(tf.errors.UnavailableError):
                with tf.Session(cluster.target("ps", 0)) as sess:
                    sess.run(c)
        monkeypatch.setenv("FLOWMESH_TLS_CERT", files["client.pem"])
        monkeypatch.setenv("FLOWMESH_TLS_KEY", files["client.key"])
        with tf.Session(cluster.target("ps", 0)) as sess:
            assert sess.run(c) == 6.0
