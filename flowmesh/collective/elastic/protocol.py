"""The elastic rendezvous protocol: store keys and records, shared by members and launcher.

Everything lives in the launcher's rendezvous store (``collective/backends/store.py``,
authenticated with the job's secret, hosted by ``flowmesh run``, so it outlives every
rank). Members form the group in numbered *rounds*; round ``R`` is one membership (one
torch.distributed group):

======================================  ==================================================
key                                     value
======================================  ==================================================
``elastic/next_id``                     counter drawing member ids (``store.add``)
``elastic/closed``                      the last closed round (decimal)
``elastic/<R>/n``                       how many members arrived at round ``R`` (counter)
``elastic/<R>/a/<i>``                   arrival ``i``: :class:`Arrival` as JSON
``elastic/<R>/result``                  the closed round: :class:`RoundResult` as JSON
``elastic/join``                        a round that new members wait in; the current
                                        members re-form the group at their next commit
``elastic/hb/<id>``                     member heartbeat counter (liveness of members the
                                        launcher did not start itself)
``flowmesh/elastic/<R>/dead/<rank>``    written by the launcher when a member of round
                                        ``R`` died, so lost-rank reports are instant
======================================  ==================================================

Records are JSON (never pickle): the store is reachable over the network.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

ROOT = "elastic"
NEXT_ID = f"{ROOT}/next_id"
CLOSED = f"{ROOT}/closed"
JOIN = f"{ROOT}/join"
HEARTBEAT_PERIOD_S = 0.5


def arrivals_key(round_: int) -> str:
    return f"{ROOT}/{round_}/n"


def arrival_key(round_: int, index: int) -> str:
    return f"{ROOT}/{round_}/a/{index}"


def result_key(round_: int) -> str:
    return f"{ROOT}/{round_}/result"


def heartbeat_key(member: str) -> str:
    return f"{ROOT}/hb/{member}"


def group_prefix(round_: int) -> str:
    """The store namespace of round ``round_``'s torch.distributed group."""
    return f"flowmesh/elastic/{round_}"


def dead_key(round_: int, rank: int) -> str:
    """Where the launcher reports that rank ``rank`` of round ``round_`` died (a key of the
    group's namespace, read by the communicator's peer status)."""
    return f"{group_prefix(round_)}/dead/{rank}"


@dataclass(frozen=True)
class Arrival:
    """A member asking to be part of a round.

    Attributes:
        id: the member id (unique in the job).
        host: its host name (ranks on one host get local ranks).
        pid: its process id (for messages).
    """

    id: str
    host: str
    pid: int

    def encode(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def decode(cls, raw: bytes) -> Arrival:
        data = _load(raw, "arrival")
        return cls(str(data["id"]), str(data["host"]), int(data["pid"]))


@dataclass(frozen=True)
class RoundResult:
    """A closed round.

    Attributes:
        round: its number.
        members: member ids in rank order (rank ``i`` is ``members[i]``).
        hosts: each member's host.
        waiting: members that arrived but did not fit (``max_np`` reached); they wait in
            the next round as standbys and take the place of the next lost member.
        error: set when the job cannot continue (e.g. fewer than ``min_np`` members left);
            every member waiting in the round raises it.
        lost: ``"id (detail)"`` of members of the previous round that are gone.
    """

    round: int
    members: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    error: str = ""
    lost: list[str] = field(default_factory=list)

    def encode(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def decode(cls, raw: bytes) -> RoundResult:
        data = _load(raw, "round result")
        return cls(int(data["round"]), [str(m) for m in data.get("members", [])],
                   [str(h) for h in data.get("hosts", [])],
                   [str(m) for m in data.get("waiting", [])], str(data.get("error", "")),
                   [str(m) for m in data.get("lost", [])])

    def local_place(self, member: str) -> tuple[int, int]:
        """``(local_rank, local_size)`` of ``member`` among the members on its host."""
        host = self.hosts[self.members.index(member)]
        same = [m for m, h in zip(self.members, self.hosts) if h == host]
        return same.index(member), len(same)


def _load(raw: bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"Malformed elastic {what} record in the rendezvous store: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"Malformed elastic {what} record in the rendezvous store: {data!r}")
    return data
