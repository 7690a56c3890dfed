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
or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

HELP = "run one task of a cluster (a tf.train.Server) until terminated"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster", metavar="SPEC", help="cluster spec (default: TF_CONFIG)")
    parser.add_argument("--job", help="this task's job name (default: TF_CONFIG task type)")
    parser.add_argument("--task", type=int, help="this task's index (default: TF_CONFIG index)")
    parser.add_argument("--bind", default=None,
                        help="interface to listen on (default FLOWMESH_BIND_ADDRESS or 127.0.0.1; "
                             "0.0.0.0 serves other hosts)")
    parser.add_argument("--cpus", type=int, default=1, help="logical CPU devices of this task")


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


def run(args: argparse.Namespace) -> int:
    from flowmesh.distributed import tf_config
    from flowmesh.distributed.server import Server
    from flowmesh.runtime.options import ConfigProto

    env = tf_config.current()
    try:
        cluster = parse_cluster(args.cluster) if args.cluster else env.cluster
    except (ValueError, json.JSONDecodeError) as exc:
        print(f"flowmesh server: {exc}", file=sys.stderr)
        return 2
    job = args.job or env.task_type
    task = args.task if args.task is not None else env.task_index
    if not cluster or job is None:
        print("flowmesh server: give --cluster and --job (or set TF_CONFIG)", file=sys.stderr)
        return 2
    config = ConfigProto(device_count={"CPU": args.cpus})
    server = Server(cluster, job_name=job, task_index=task, config=config, bind_address=args.bind)

    def stop(signum: int, frame: Any) -> None:
        server.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"flowmesh server {server.task_name} ready at {server.target}", flush=True)
    server.join()
    return 0
