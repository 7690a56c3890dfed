"""Several "hosts" on one Linux machine, for tests of what crosses machines.

Each host is a network namespace with its own IP address, its own hostname (a UTS
namespace per process, so flowmesh never takes the same-host shared-memory shortcut) and
its own ``/etc/hosts`` that resolves every host's name. The hosts' veth links meet on a
bridge in the root namespace, which has the bridge's address too (the test process can
reach every host). A link can be shaped to a rate (``tc tbf``, both directions) and cut
silently (:meth:`HostBed.cut`: packets are dropped, nothing is reset).

Example:
    >>> with HostBed(3, rate="1gbit") as bed:                  # hosts h1, h2, h3
    ...     ps = bed.spawn("h1", [sys.executable, "train.py", "--ps_hosts", f"{bed.ip('h1')}:2222"])
    ...     bed.cut("h1"); bed.heal("h1")

Creating namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN); :func:`unavailable_reason`
says why a machine cannot have a bed, so tests skip with that reason. Every bed cleans up
its namespaces, links and files when closed, and removes those of earlier runs whose
process is gone. Only addresses of the bed's own subnet are ever used.
"""

from __future__ import annotations

import ipaddress
import os
import random
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flowmesh.testing.cluster import Child, child_env

__all__ = ["Host", "HostBed", "unavailable_reason"]

_PREFIX = "fmbed"  # namespaces: fmbed<pid>x<n>h<i>; links: fb<n>h<i> / fb<n>b<i>
_NETNS_ETC = "/etc/netns"
_random = random.SystemRandom()


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def unavailable_reason() -> str | None:
    """Why this machine cannot host a :class:`HostBed` (None when it can)."""
    if os.name != "posix" or not os.path.exists("/proc/self/ns/net"):
        return "network namespaces need Linux"
    missing = [tool for tool in ("ip", "unshare", "tc") if shutil.which(tool) is None]
    if missing:
        return f"the multi-host bed needs {', '.join(missing)} (iproute2, util-linux)"
    if os.geteuid() != 0:
        return "the multi-host bed creates network namespaces, which needs root"
    probe = f"{_PREFIX}{os.getpid()}probe"
    result = _ip("netns", "add", probe, check=False)
    if result.returncode != 0:
        return f"this machine does not allow network namespaces: {result.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


@dataclass
class Host:
    """One host of a bed: its name (hostname), namespace, address and link."""

    name: str
    namespace: str
    ip: str
    link: str  # the host's end of its veth pair (inside the namespace)
    switch_port: str  # the bridge's end (in the root namespace)
    aliases: list[str] = field(default_factory=list)


class HostBed:
    """``count`` hosts named ``h1`` ... ``hN`` on one bridge.

    Args:
        count: how many hosts.
        rate: shape every link to this rate in both directions (``tc`` syntax: ``"1gbit"``),
            or None for an unshaped link.
        aliases: more names per host (``{"h1": ["job-ps-0.job"]}``) in every host's
            ``/etc/hosts``: e.g. the DNS names of Kubernetes pods.

    Raises:
        RuntimeError: the machine cannot host a bed (see :func:`unavailable_reason`).
    """

    def __init__(self, count: int, rate: str | None = None,
                 aliases: Mapping[str, Sequence[str]] | None = None):
        reason = unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        _remove_stale_beds()
        self.id = f"{os.getpid()}x{_random.randrange(1 << 20):x}"
        self._tag = f"{_random.randrange(1 << 16):04x}"
        self._subnet = _free_subnet()
        addresses = list(self._subnet.hosts())
        self.bridge = f"fb{self._tag}br"
        self.gateway = str(addresses[0])  # the root namespace's address on the bridge
        self.hosts: dict[str, Host] = {}
        self._children: list[Child] = []
        names = [f"h{i}" for i in range(1, count + 1)]
        extra = {name: list((aliases or {}).get(name, ())) for name in names}
        try:
            _ip("link", "add", self.bridge, "type", "bridge")
            _ip("link", "set", self.bridge, "alias", f"{_PREFIX}:{os.getpid()}")
            _ip("addr", "add", f"{self.gateway}/{self._subnet.prefixlen}", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            for i, name in enumerate(names, start=1):
                self.hosts[name] = self._add_host(name, i, str(addresses[i]), extra[name])
            self._write_hosts_files()
            if rate is not None:
                self.shape(rate)
        except BaseException:
            self.close()
            raise

    # --- building ----------------------------------------------------------------------------
    def _add_host(self, name: str, index: int, ip: str, aliases: list[str]) -> Host:
        namespace = f"{_PREFIX}{self.id}h{index}"
        host = Host(name, namespace, ip, f"fb{self._tag}h{index}", f"fb{self._tag}b{index}", aliases)
        _ip("netns", "add", namespace)
        _ip("link", "add", host.link, "type", "veth", "peer", "name", host.switch_port)
        _ip("link", "set", host.link, "netns", namespace)
        _ip("link", "set", host.switch_port, "master", self.bridge)
        _ip("link", "set", host.switch_port, "up")
        self._in(host, "ip", "addr", "add", f"{ip}/{self._subnet.prefixlen}", "dev", host.link)
        self._in(host, "ip", "link", "set", host.link, "up")
        self._in(host, "ip", "link", "set", "lo", "up")
        return host

    def _write_hosts_files(self) -> None:
        """Every host resolves every host's name (and aliases): ``ip netns exec`` mounts
        ``/etc/netns/<namespace>/hosts`` over ``/etc/hosts``."""
        lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost ip6-loopback",
                 f"{self.gateway} {self.gateway_name}"]
        lines += [f"{h.ip} {h.name} {' '.join(h.aliases)}".rstrip() for h in self.hosts.values()]
        for host in self.hosts.values():
            folder = os.path.join(_NETNS_ETC, host.namespace)
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "hosts"), "w") as f:
                f.write("\n".join(lines) + "\n")

    @property
    def gateway_name(self) -> str:
        """The root namespace's name on the bed (where the test process runs)."""
        return "h0"

    def _in(self, host: Host, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", host.namespace, *argv],
                              capture_output=True, text=True, check=check)

    # --- using -------------------------------------------------------------------------------
    def ip(self, name: str) -> str:
        """The address of host ``name``."""
        return self.hosts[name].ip

    def argv(self, name: str, argv: Sequence[str]) -> list[str]:
        """``argv`` wrapped to run on host ``name``: in its namespace, with its hostname."""
        host = self.hosts[name]
        return ["ip", "netns", "exec", host.namespace, "unshare", "--uts", "sh", "-c",
                'hostname "$0" && exec "$@"', host.name, *argv]

    def spawn(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None,
              label: str = "") -> Child:
        """Starts ``argv`` on host ``name`` (output collected; see :class:`Child`).

        ``env`` is added to :func:`~flowmesh.testing.cluster.child_env`'s environment.
        """
        child = Child(self.argv(name, argv), child_env(env), name=label or f"{name}:{argv[-1]}")
        self._children.append(child)
        return child

    def run(self, name: str, argv: Sequence[str], timeout: float = 60.0,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        """Runs ``argv`` on host ``name`` to completion; returns its result (output as text)."""
        return subprocess.run(self.argv(name, argv), capture_output=True, text=True,
                              timeout=timeout, env=child_env(env))

    def shape(self, rate: str, name: str | None = None) -> None:
        """Limits the link of host ``name`` (default: every host) to ``rate`` both ways."""
        hosts = [self.hosts[name]] if name else list(self.hosts.values())
        tbf = ["tbf", "rate", rate, "burst", "256kb", "latency", "100ms"]
        for host in hosts:
            self._in(host, "tc", "qdisc", "replace", "dev", host.link, "root", *tbf)
            subprocess.run(["tc", "qdisc", "replace", "dev", host.switch_port, "root", *tbf],
                           capture_output=True, text=True, check=True)

    def cut(self, name: str) -> None:
        """Cuts host ``name`` off the bridge: its packets vanish (no reset, no error on
        its side), as when a cable or switch port fails."""
        _ip("link", "set", self.hosts[name].switch_port, "down")

    def heal(self, name: str) -> None:
        """Reconnects host ``name`` after :meth:`cut`."""
        _ip("link", "set", self.hosts[name].switch_port, "up")

    # --- cleaning up -------------------------------------------------------------------------
    def close(self) -> None:
        """Kills the processes started here and every process still in the bed's
        namespaces (daemons they started), by pid, then removes namespaces, links and
        files."""
        for child in self._children:
            child.kill(signal.SIGKILL)
        self._children.clear()
        for host in self.hosts.values():  # and what they left running on the host (daemons)
            for pid in _ip("netns", "pids", host.namespace, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _ip("netns", "del", host.namespace, check=False)
            _ip("link", "del", host.switch_port, check=False)
            shutil.rmtree(os.path.join(_NETNS_ETC, host.namespace), ignore_errors=True)
        _ip("link", "del", self.bridge, check=False)

    def __enter__(self) -> HostBed:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.0.0.0/8 that no address or route of this machine overlaps."""
    used = []
    for line in _ip("-4", "-o", "addr", "show").stdout.splitlines():
        used.append(ipaddress.ip_interface(line.split()[3]).network)
    for line in _ip("-4", "route", "show").stdout.splitlines():
        head = line.split()[0]
        if head != "default":
            used.append(ipaddress.ip_network(head, strict=False))
    for _ in range(200):
        subnet = ipaddress.ip_network(f"10.{_random.randrange(64, 250)}.{_random.randrange(256)}.0/24")
        if not any(subnet.overlaps(other) for other in used):
            return subnet
    raise RuntimeError("no free /24 in 10.0.0.0/8 for the multi-host bed")


def _remove_stale_beds() -> None:
    """Removes the namespaces, files and bridges of beds whose process has exited."""
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        found = re.search(r"^\d+: ([^:@ ]+).* alias " + _PREFIX + r":(\d+)", line)
        if found and not os.path.exists(f"/proc/{found.group(2)}"):
            _ip("link", "del", found.group(1), check=False)
    listing = _ip("netns", "list", check=False).stdout.split("\n")
    for line in listing:
        name = line.split(" ")[0]
        if not name.startswith(_PREFIX) or "x" not in name:
            continue
        pid = name[len(_PREFIX):].split("x")[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            _ip("netns", "del", name, check=False)
            shutil.rmtree(os.path.join(_NETNS_ETC, name), ignore_errors=True)
