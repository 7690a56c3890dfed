"""Runs one task of a cluster as a standalone server process.

Examples::

    flowmesh server --cluster '{"ps": ["localhost:2222"], "worker": ["localhost:2223"]}' \\
        --job ps --task 0
    flowmesh server --cluster "ps=localhost:2222;worker=localhost:2223,localhost:2224" \\
        --job worker --task 1
    TF_CONFIG='{"cluster": {...}, "task": {"type": "ps", "index": 0}}' flowmesh server

``SPEC`` is JSON, a path to a JSON file, or ``job=host:port,host:port;job2=...``; without
``--cluster`` the cluster and task come from ``TF_CONFIG``. The server prints one
``flowmesh server ... ready`` line when it accepts connections, and exits 0 on SIGTERM
or SIGINT (within a few seconds, even with calls waiting on a dead task).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Any

HELP = "run one task of a cluster (a tf.train.Server) until terminated"
_STOP_S = 3.0  # SIGTERM -> exit within this (plus the signal's delivery)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", metavar="SPEC", help="cluster spec (default: TF_CONFIG)")
    parser.add_argument("--job", help="this task's job name (default: TF_CONFIG task type)")
    parser.add_argument("--task", type=int, help="this task's index (default: TF_CONFIG index)")
    parser.add_argument("--bind", default=None,
                        help="interface to listen on (default FLOWMESH_BIND_ADDRESS, else loopback for "
                             "a task listed at a loopback address and every interface otherwise)")
    parser.add_argument("--cpus", type=int, default=1, help="logical CPU devices of this task")
    parser.add_argument("--tls-cert", metavar="PEM", help="serve gRPC over TLS with this certificate")
    parser.add_argument("--tls-key", metavar="PEM", help="the certificate's private key")
    parser.add_argument("--tls-ca", metavar="PEM",
                        help="CA of the cluster: clients must present a certificate it signed "
                             "(mutual TLS); this task's own calls trust it")


def parse_cluster(spec: str) -> dict[str, Any]:
    """A cluster dict from JSON, a JSON file path, or ``job=a:1,b:2;job2=c:3``.

    Raises:
        ValueError: the spec matches none of the forms.
    """
    text = spec.strip()
    if text.startswith("{"):
        return json.loads(text)
    if os.path.isfile(text):
        with open(text, encoding="utf-8") as f:
            return json.load(f)
    cluster: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        job, sep, hosts = part.partition("=")
        if not sep or not job:
            raise ValueError(
                f"Cannot parse cluster spec {spec!r}: expected JSON, a JSON file, or "
                "'ps=host:port;worker=host:port,host:port'"
            )
        cluster[job.strip()] = [h.strip() for h in hosts.split(",") if h.strip()]
    return cluster


def _use_tls(args: argparse.Namespace) -> None:
    """The TLS flags become this process's ``FLOWMESH_TLS_*`` settings (read by the
    server and by this task's own gRPC clients through ``flowmesh/config.py``)."""
    for flag, name in ((args.tls_cert, "FLOWMESH_TLS_CERT"), (args.tls_key, "FLOWMESH_TLS_KEY"),
                       (args.tls_ca, "FLOWMESH_TLS_CA")):
        if flag:
            if not os.path.isfile(flag):
                raise ValueError(f"{name.lower().replace('flowmesh_', '--').replace('_', '-')} "
                                 f"{flag}: no such file")
            os.environ[name] = flag


def run(args: argparse.Namespace) -> int:
    from flowmesh.distributed.server import Server
    from flowmesh.errors import OpError
    from flowmesh.runtime.options import ConfigProto

    try:
        _use_tls(args)
        cluster, job, task = _task(args)
        config = ConfigProto(device_count={"CPU": args.cpus})
        server = Server(cluster, job_name=job, task_index=task, config=config, bind_address=args.bind)
    except (ValueError, OpError) as exc:  # bad spec/TF_CONFIG/secret, busy port: one line
        message = exc.message if isinstance(exc, OpError) else str(exc)
        print(f"flowmesh server: {message.splitlines()[0] if message else type(exc).__name__}",
              file=sys.stderr)
        return 2

    stopper = threading.Thread(target=server.stop, name="flowmesh-server-stop", daemon=True)

    def stop(signum: int, frame: Any) -> None:
        if not stopper.is_alive() and stopper.ident is None:
            stopper.start()  # the handler returns at once; join() sees the server stopping

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"flowmesh server {server.task_name} ready at {server.target}", flush=True)
    server.join()
    stopper.join(_STOP_S)
    # Handlers may still wait on a dead peer (bounded, but longer than a shutdown should
    # take); the interpreter would join their threads at exit. The server is stopped.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _task(args: argparse.Namespace) -> tuple[dict[str, Any], str, int | None]:
    """The cluster, job and task the flags (or TF_CONFIG) name.

    Raises:
        ValueError: a malformed spec or TF_CONFIG, or no job.
    """
    from flowmesh.distributed import tf_config

    env = tf_config.current()
    try:
        cluster = parse_cluster(args.cluster) if args.cluster else env.cluster
    except json.JSONDecodeError as exc:
        raise ValueError(f"--cluster is not valid JSON: {exc}") from None
    job = args.job or env.task_type
    task = args.task if args.task is not None else env.task_index
    if not cluster or job is None:
        raise ValueError("give --cluster and --job (or set TF_CONFIG)")
    return cluster, job, task
