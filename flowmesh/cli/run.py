"""Horovod-style launch of an all-reduce job: ``flowmesh run -np N [python] SCRIPT [ARGS]``.

Starts N local processes of the command, each with ``FLOWMESH_RANK``, ``FLOWMESH_SIZE``,
``FLOWMESH_LOCAL_RANK``, ``FLOWMESH_LOCAL_SIZE`` and ``FLOWMESH_RENDEZVOUS`` (the address
of a rendezvous store this launcher hosts, so it outlives any rank). Every output line is
prefixed with ``[rank]``. When a rank fails, the others are terminated (then killed after
a grace period) and the launcher exits with the failed rank's status; it exits 0 when all
ranks succeed.

Elastic mode (``--min-np``, ``--max-np``, ``--restart-failed``; see
:mod:`flowmesh.cli.elastic_job`): a rank that dies does not stop the job; the survivors
re-form the group (``hvd.elastic``) and keep training while at least ``--min-np`` ranks
remain; replacements (``--restart-failed``) and extra ranks (``flowmesh run --join
HOST:PORT -np K SCRIPT``, up to ``--max-np``) join at the next commit.

Several hosts (:mod:`flowmesh.cli.multi_node`): the same command on every host, with
``--nnodes``, ``--node-rank`` and ``--rdzv-endpoint`` (node 0's address), as torchrun.
An elastic job takes ranks from other hosts with ``--join`` when its launcher listens on
an address they reach (``--rdzv-endpoint``).

Examples:
    flowmesh run -np 2 python examples/allreduce_mnist.py
    flowmesh run -np 4 examples/allreduce_mnist.py --steps 200
    flowmesh run --min-np 2 --max-np 4 -np 3 examples/elastic_allreduce.py
    flowmesh run --nnodes 2 --node-rank 0 --rdzv-endpoint hostA:29400 --nproc-per-node 2 train.py
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import IO, Any

from flowmesh.cli.rank_job import RankJob, RunResult, resolve_command

HELP = "launch N local ranks of an all-reduce (Horovod-style) script"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-np", "--num-proc", dest="np", type=int, default=None,
                        help="number of ranks (processes) of the job (with --nnodes: on all "
                             "nodes together, as horovodrun)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="kill every rank after this many seconds (default: none)")
    parser.add_argument("--failure-grace", type=float, default=5.0,
                        help="after a rank fails, seconds the others get to report and exit "
                             "before they are terminated (default 5)")
    parser.add_argument("--no-prefix", action="store_true", help="do not prefix output lines")
    nodes = parser.add_argument_group("several hosts (the same command on each, as torchrun)")
    nodes.add_argument("--nnodes", type=int, default=1, help="hosts in the job (default 1)")
    nodes.add_argument("--node-rank", type=int, default=0, help="this host's index, 0 .. nnodes-1")
    nodes.add_argument("--nproc-per-node", type=int, default=None,
                       help="ranks on this host (default: -np / --nnodes)")
    nodes.add_argument("--rdzv-endpoint", metavar="HOST:PORT", default=None,
                       help="where node 0 hosts the job's rendezvous store: node 0's address as "
                            "the other hosts see it, and a free port (an elastic launcher "
                            "listens there for --join from other hosts)")
    nodes.add_argument("--rdzv-timeout", type=float, default=300.0,
                       help="seconds a node waits for node 0, and node 0 for the others to "
                            "finish (default 300)")
    nodes.add_argument("--first-rank", type=int, default=None, help=argparse.SUPPRESS)  # -H's nodes
    hosts = parser.add_argument_group("several hosts from one command (as horovodrun, over ssh)")
    hosts.add_argument("-H", "--hosts", default=None, metavar="HOST:SLOTS,...",
                       help="start the job's ranks on these hosts (slots: ranks a host takes, "
                            "default 1); this machine's own names run here, others over ssh")
    hosts.add_argument("--ssh-port", type=int, default=None, help="ssh port of the hosts")
    hosts.add_argument("--ssh-identity-file", default=None, help="ssh private key for the hosts")
    hosts.add_argument("--ssh-option", action="append", default=[], metavar="OPTION",
                       help="an ssh -o option for the hosts (e.g. UserKnownHostsFile=FILE); repeatable")
    elastic = parser.add_argument_group("elastic training (hvd.elastic)")
    elastic.add_argument("--min-np", type=int, default=None,
                         help="elastic: keep training while at least this many ranks remain "
                              "(default: -np)")
    elastic.add_argument("--max-np", type=int, default=None,
                         help="elastic: admit new ranks up to this many (default: -np)")
    elastic.add_argument("--restart-failed", action="store_true",
                         help="elastic: start a replacement for every rank that fails")
    elastic.add_argument("--max-restarts", type=int, default=3,
                         help="elastic: most replacements started in total (default 3)")
    elastic.add_argument("--join", metavar="HOST:PORT", default=None,
                         help="add -np ranks to the running elastic job whose launcher "
                              "prints this rendezvous address")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="`python SCRIPT [ARGS]` or `SCRIPT.py [ARGS]` or any program")


def run(args: argparse.Namespace) -> int:
    if not args.command:
        print("flowmesh run: missing the command to launch, e.g. "
              "`flowmesh run -np 2 python train.py`", file=sys.stderr)
        return 2
    from flowmesh.collective.backends.base import CommunicationError
    from flowmesh.errors import UnavailableError

    try:
        if args.hosts:
            from flowmesh.cli.ssh_launch import launch_on_hosts

            return launch_on_hosts(args)
        policy = elastic_policy(args)
        nodes = None
        np = args.np
        if args.nnodes > 1 or args.first_rank is not None:
            from flowmesh.cli.multi_node import plan_from_args

            nodes = plan_from_args(args.nnodes, args.node_rank, args.rdzv_endpoint, args.np,
                                   args.nproc_per_node, args.rdzv_timeout, args.first_rank)
            np = nodes.per_node
        elif np is None:
            np = args.nproc_per_node
        if np is None:
            raise ValueError("give the number of ranks with -np N")
        result = launch(np, args.command, timeout=args.timeout, prefix=not args.no_prefix,
                        failure_grace=args.failure_grace, elastic=policy, join=args.join,
                        nodes=nodes, rdzv_endpoint=args.rdzv_endpoint)
    except (ValueError, UnavailableError, CommunicationError) as exc:
        print(f"flowmesh run: {exc}", file=sys.stderr)
        return 2
    return result.returncode


def elastic_policy(args: argparse.Namespace) -> Any:
    """The :class:`~flowmesh.cli.elastic_job.ElasticPolicy` the flags ask for, or None.

    Raises:
        ValueError: inconsistent bounds.
    """
    if args.min_np is None and args.max_np is None and not args.restart_failed and not args.join:
        return None
    from flowmesh.cli.elastic_job import ElasticPolicy

    min_np = args.np if args.min_np is None else args.min_np
    max_np = max(args.np, min_np) if args.max_np is None else args.max_np
    return ElasticPolicy(min_np, max_np, args.restart_failed, args.max_restarts)


def launch(np: int, command: Sequence[str], *, timeout: float | None = None, prefix: bool = True,
           env: dict[str, str] | None = None, capture: bool = False,
           out: IO[str] | None = None, failure_grace: float = 5.0, elastic: Any = None,
           join: str | None = None, nodes: Any = None, rdzv_endpoint: str | None = None) -> RunResult:
    """Runs ``np`` ranks of ``command`` to completion; see the module docstring.

    Args:
        np: number of ranks (>= 1).
        command: the program and its arguments.
        timeout: seconds before every rank is killed (result: status 124).
        prefix: prefix output lines with ``[rank]``.
        env: extra environment for every rank.
        capture: also return the output lines in the result.
        out: where lines are written (default ``sys.stdout``; None with capture: nowhere).
        failure_grace: after a rank fails, how long the others may run to report the
            failure (e.g. the stalled-ranks error) before they are terminated.
        elastic: an :class:`~flowmesh.cli.elastic_job.ElasticPolicy`: elastic mode.
        join: ``host:port`` of a running elastic job to add the ``np`` ranks to.
        nodes: a :class:`~flowmesh.cli.multi_node.NodePlan`: this launcher runs one node's
            ``np`` ranks of a job over several hosts.
        rdzv_endpoint: an elastic launcher hosts its store at this ``host:port``, so that
            launchers on other hosts can ``join`` it.

    Returns:
        A :class:`RunResult`.

    Raises:
        ValueError: ``np < 1``, an empty command, or inconsistent elastic bounds.
    """
    if np < 1:
        raise ValueError(f"-np must be at least 1, got {np}")
    argv = resolve_command(command)
    if elastic is not None or join is not None:
        from flowmesh.cli.elastic_job import launch_elastic

        return launch_elastic(np, argv, elastic, join=join, timeout=timeout, prefix=prefix,
                              env=env, capture=capture, out=out, failure_grace=failure_grace,
                              endpoint=rdzv_endpoint)
    base = dict(os.environ)
    base.update(env or {})
    sink = out if out is not None else (None if capture else sys.stdout)
    if nodes is not None:
        return _launch_node(nodes, argv, base, timeout, prefix, sink, capture, failure_grace)
    from flowmesh.collective.backends.torch_dist import connect_store
    from flowmesh.launch.secret import JobSecret

    secret = JobSecret.create(base)
    base.update(secret.env)
    store = connect_store("127.0.0.1", 0, True, None, 30.0, auth=secret.auth(base))
    base.update(PYTHONUNBUFFERED="1", FLOWMESH_SIZE=str(np), FLOWMESH_LOCAL_SIZE=str(np),
                FLOWMESH_RENDEZVOUS=f"127.0.0.1:{store.port}")
    job = RankJob(np, argv, base, prefix, sink, capture)
    try:
        return job.wait(timeout, failure_grace)
    finally:
        job.kill_all()
        secret.remove()
        store.close()


def _launch_node(nodes: Any, argv: list[str], base: dict[str, str], timeout: float | None,
                 prefix: bool, sink: IO[str] | None, capture: bool,
                 failure_grace: float) -> RunResult:
    """Runs this node's ranks of a job over several hosts (:mod:`flowmesh.cli.multi_node`)."""
    from flowmesh.cli.multi_node import NodeLink
    from flowmesh.launch.secret import JobSecret

    link = NodeLink(nodes, JobSecret.auth(base))  # the user's secret, shared by every host
    base.update(PYTHONUNBUFFERED="1", FLOWMESH_SIZE=str(nodes.size),
                FLOWMESH_LOCAL_SIZE=str(nodes.per_node), FLOWMESH_RENDEZVOUS=nodes.endpoint)
    job = RankJob(nodes.per_node, argv, base, prefix, sink, capture, first_rank=nodes.first_rank)
    try:
        result = job.wait(timeout, failure_grace, elsewhere=link.failure)
        if result.returncode != 0:  # the first report wins: another node's stays
            link.report_failure(f"rank {result.failed_rank} exited with status {result.returncode}"
                                if result.failed_rank is not None else f"status {result.returncode}")
        return result
    finally:
        job.kill_all()
        link.finish()
        link.close()
