"""``flowmesh run -H host1:2,host2:2 -np 4 train.py``: one command starts a job on several
hosts, as horovodrun does.

The launching process hosts the job's rendezvous store on the address this machine
reaches the hosts from, and starts one node launcher per host
(``flowmesh run --nnodes N --node-rank i ...``, :mod:`flowmesh.cli.multi_node`) for the
host's share of the ranks, filling the hosts' slots in order: directly when the host is
this machine (``localhost``, its hostname or one of its addresses), over ``ssh`` for the
others. As with Horovod, the hosts need passwordless ssh (``--ssh-port``,
``--ssh-identity-file``), and Python and the working directory at the same paths; the
environment travels with the command, except variables that describe the host itself.
The job's secret (a fresh one, or the user's) travels on ssh's standard input, never in a
command line. A rank failing on one host stops every host; the launcher exits with the
first failing node's status. Output lines keep their ``[rank]`` prefix.
"""

from __future__ import annotations

import argparse
import os
import shlex
import socket
import sys
from collections.abc import Mapping

from flowmesh import config as _config
from flowmesh.cli.rank_job import RankJob, resolve_command
from flowmesh.distributed.cluster_spec import is_loopback, join_address
from flowmesh.launch.secret import JobSecret

# Variables that describe the launching host or shell, not the job: never forwarded.
_HOST_VARIABLES = {"HOSTNAME", "PWD", "OLDPWD", "SHLVL", "_", "HOME", "USER", "LOGNAME", "SHELL",
                   "TERM", "DISPLAY", "MAIL", "TMPDIR", _config.CLUSTER_SECRET.name,
                   _config.CLUSTER_SECRET_FILE.name}
_HOST_PREFIXES = ("SSH_", "XDG_", "FLOWMESH_RANK", "FLOWMESH_SIZE", "FLOWMESH_LOCAL_",
                  "FLOWMESH_RENDEZVOUS")


def parse_hosts(text: str) -> list[tuple[str, int]]:
    """``"h1:2,h2"`` -> ``[("h1", 2), ("h2", 1)]``.

    Raises:
        ValueError: an empty list, or slots that are not a positive number.
    """
    hosts = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, slots = item.rpartition(":") if ":" in item else (item, "", "1")
        if not slots.isdigit() or int(slots) < 1 or not name:
            raise ValueError(f"-H takes HOST:SLOTS entries (e.g. host1:2,host2:2), got {item!r}")
        hosts.append((name, int(slots)))
    if not hosts:
        raise ValueError("-H names no host")
    return hosts


def assign(hosts: list[tuple[str, int]], np: int | None) -> list[tuple[str, int]]:
    """The ranks each host runs: ``np`` ranks filling the slots in order (default: every
    slot). Hosts left without a rank are dropped.

    Raises:
        ValueError: more ranks than slots.
    """
    slots = sum(n for _, n in hosts)
    np = slots if np is None else np
    if not 1 <= np <= slots:
        raise ValueError(f"-np {np} needs between 1 and {slots} slots; -H offers {slots}")
    out = []
    for host, n in hosts:
        take = min(n, np)
        if take:
            out.append((host, take))
        np -= take
    return out


def is_this_machine(host: str) -> bool:
    """Whether ``host`` names this machine (so its node runs here, without ssh)."""
    if is_loopback(host) or host in (socket.gethostname(), socket.getfqdn()):
        return True
    try:
        address = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][4][0]
    except socket.gaierror:
        return False
    if is_loopback(address):
        return True
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))  # only an address of this machine can be bound
            return True
        except OSError:
            return False


def address_toward(hosts: list[str]) -> str:
    """This machine's address on the route to the first other host (loopback when every
    host is this machine)."""
    for host in hosts:
        if is_this_machine(host):
            continue
        info = socket.getaddrinfo(host, 22, type=socket.SOCK_DGRAM)[0]
        with socket.socket(info[0], socket.SOCK_DGRAM) as probe:
            probe.connect(info[4])  # no packet is sent: the kernel picks the route
            return probe.getsockname()[0]
    return "127.0.0.1"


def forwarded_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """What a remote node launcher gets of this environment (see the module docstring)."""
    return {k: v for k, v in environ.items()
            if k not in _HOST_VARIABLES and not k.startswith(_HOST_PREFIXES)}


def ssh_argv(host: str, remote: list[str], environ: Mapping[str, str], port: int | None,
             identity: str | None, extra: list[str] = ()) -> list[str]:
    """``ssh`` running ``remote`` on ``host`` in this directory, with ``environ``; the
    secret is read from standard input first."""
    exports = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(environ.items()))
    script = (f"IFS= read -r {_config.CLUSTER_SECRET.name} && export {_config.CLUSTER_SECRET.name} "
              f"&& cd {shlex.quote(os.getcwd())} && exec env {exports} "
              + " ".join(shlex.quote(part) for part in remote))
    options = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no"]
    options += [item for option in extra for item in ("-o", option)]
    options += ["-p", str(port)] if port else []
    options += ["-i", identity] if identity else []
    return ["ssh", *options, host, script]


def _secret_line(secret: bytes) -> str:
    """The secret as the one line ssh's standard input carries.

    Raises:
        ValueError: a secret that is not one line of text.
    """
    try:
        text = secret.decode()
    except UnicodeDecodeError:
        text = "\n"
    if "\n" in text or "\r" in text:
        raise ValueError("-H sends the cluster secret to the hosts as one line of text; the secret "
                         "in FLOWMESH_CLUSTER_SECRET(_FILE) is not (e.g. use `openssl rand -hex 32`)")
    return text + "\n"


def launch_on_hosts(args: argparse.Namespace) -> int:
    """Runs the job ``args`` describes on ``args.hosts``; returns the exit status.

    Raises:
        ValueError: bad ``-H``/``-np``, or elastic flags (not supported with ``-H``).
    """
    from flowmesh.collective.backends.torch_dist import connect_store

    if args.min_np is not None or args.max_np is not None or args.join:
        raise ValueError("-H starts a fixed job; for an elastic one run `flowmesh run --min-np .. "
                         "--rdzv-endpoint` on one host and `--join` from the others")
    plan = assign(parse_hosts(args.hosts), args.np)
    command = resolve_command(args.command)
    base = dict(os.environ)
    secret = JobSecret.create(base)
    base.update(secret.env)
    secret_line = _secret_line(_config.cluster_secret(base) or b"")
    address = address_toward([host for host, _ in plan])
    store = connect_store(address, 0, True, None, args.rdzv_timeout, auth=JobSecret.auth(base))
    endpoint = join_address(address, store.port)
    size = sum(n for _, n in plan)
    job = RankJob(0, command, base, prefix=False, sink=sys.stdout, capture=False, kind="node")
    first = 0
    try:
        for index, (host, ranks) in enumerate(plan):
            node = [sys.executable, "-m", "flowmesh.cli.main", "run", "--nnodes", str(len(plan)),
                    "--node-rank", str(index), "--rdzv-endpoint", endpoint, "--nproc-per-node",
                    str(ranks), "--first-rank", str(first), "-np", str(size), "--rdzv-timeout",
                    str(args.rdzv_timeout), *(["--no-prefix"] if args.no_prefix else []),
                    "--", *command]
            if is_this_machine(host):
                job.spawn(node, dict(base), index)
            else:
                ssh = ssh_argv(host, node, forwarded_environment(base), args.ssh_port,
                               args.ssh_identity_file, args.ssh_option)
                proc = job.spawn(ssh, dict(base), index, stdin=True)
                assert proc.stdin is not None
                proc.stdin.write(secret_line)
                proc.stdin.close()
            first += ranks
        return job.wait(args.timeout, args.failure_grace).returncode
    finally:
        job.kill_all()
        secret.remove()
        store.close()
