"""The elastic rendezvous in one process: the launcher's Coordinator and real Members
talking through a real TCPStore on loopback (members join from threads)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from flowmesh.collective.backends.torch_dist import connect_store
from flowmesh.collective.elastic import protocol as proto
from flowmesh.collective.elastic.coordinator import Coordinator
from flowmesh.collective.elastic.rendezvous import Member
from flowmesh.errors import DeadlineExceededError, UnavailableError

pytestmark = pytest.mark.timeout(60)


class Job:
    """A store, a coordinator polled by a thread, and members started by 'the launcher'."""

    def __init__(self, min_np: int, max_np: int, straggler_s: float = 5.0):
        self.server = connect_store("127.0.0.1", 0, True, None, 10.0)
        self.address = f"127.0.0.1:{self.server.port}"
        self.running: dict[str, bool] = {}
        client = connect_store("127.0.0.1", self.server.port, False, None, 10.0)
        self.coordinator = Coordinator(client, min_np, max_np, straggler_s, lambda: dict(self.running))
        self.closed: list[proto.RoundResult] = []
        self._halt = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._halt.is_set():
            with self._lock:
                result = self.coordinator.poll()
            if result is not None:
                self.closed.append(result)
            time.sleep(0.005)

    def closed_rounds(self, count: int, timeout_s: float = 10.0) -> list[proto.RoundResult]:
        """The closed rounds once there are ``count``: members learn a round's result from
        the store, which the coordinator writes before this job's poll thread records it."""
        deadline = time.monotonic() + timeout_s
        while len(self.closed) < count and time.monotonic() < deadline:
            time.sleep(0.005)
        assert len(self.closed) >= count, self.closed
        return list(self.closed)

    def call(self, fn: Callable[[Coordinator], object]) -> object:
        with self._lock:
            return fn(self.coordinator)

    def lose(self, members: dict[str, str], status: int | None = None) -> None:
        """Children ``members`` (id -> how they ended) exited; reported together, as the
        launcher reaps them in one pass between two polls of the coordinator."""
        with self._lock:
            for member, detail in members.items():
                self.running[member] = False
                self.coordinator.member_exited(member, detail, status)

    def member(self, member_id: str, child: bool = True, timeout_s: float = 20.0) -> Member:
        if child:
            self.running[member_id] = True
        return Member(self.address, member_id, timeout_s)

    def stop(self) -> None:
        self._halt.set()
        self._thread.join(2)


def join_all(members: list[Member]) -> dict[str, object]:
    """Joins every member concurrently; returns each one's WorldInfo or exception."""
    out: dict[str, object] = {}

    def one(m: Member) -> None:
        try:
            out[m.id] = m.join()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            out[m.id] = exc

    threads = [threading.Thread(target=one, args=(m,)) for m in members]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


@pytest.fixture
def job_factory():
    jobs: list[Job] = []
    members: list[Member] = []

    def make(min_np: int, max_np: int, straggler_s: float = 5.0) -> Job:
        job = Job(min_np, max_np, straggler_s)
        original = job.member

        def member(*args, **kwargs) -> Member:
            m = original(*args, **kwargs)
            members.append(m)
            return m

        job.member = member
        jobs.append(job)
        return job

    yield make
    for m in members:
        m.close()
    for job in jobs:
        job.stop()


def test_first_round_has_every_child_with_ranks_in_id_order(job_factory):
    job = job_factory(2, 3)
    members = [job.member(str(i)) for i in (2, 0, 1)]
    infos = join_all(members)
    assert {m: (i.rank, i.size) for m, i in infos.items()} == {"0": (0, 3), "1": (1, 3), "2": (2, 3)}
    assert all(i.prefix == proto.group_prefix(0) and i.source.endswith("(elastic)")
               for i in infos.values())
    assert all((i.local_rank, i.local_size) == (i.rank, 3) for i in infos.values())


def test_survivors_reform_without_the_lost_member_and_its_death_is_published(job_factory):
    job = job_factory(2, 3, straggler_s=60.0)
    members = [job.member(str(i)) for i in range(3)]
    join_all(members)
    job.lose({"1": "was killed by SIGKILL (status -9)"})
    start = time.monotonic()
    infos = join_all([members[0], members[2]])
    assert time.monotonic() - start < 10.0  # no straggler wait (60 s): the launcher knows who is gone
    assert {m: (i.rank, i.size) for m, i in infos.items()} == {"0": (0, 2), "2": (1, 2)}
    assert infos["0"].prefix == proto.group_prefix(1)
    assert job.closed_rounds(2)[-1].lost == ["1 (was killed by SIGKILL (status -9))"]
    dead = job.server.get(proto.dead_key(0, 1)).decode()
    assert "member 1 was killed by SIGKILL" in dead


def test_below_min_np_every_waiting_member_gets_a_clear_error(job_factory):
    job = job_factory(2, 3, straggler_s=60.0)
    members = [job.member(str(i)) for i in range(3)]
    join_all(members)
    job.lose({"1": "exited with status 1", "2": "exited with status 1"})
    start = time.monotonic()
    error = join_all([members[0]])["0"]
    assert time.monotonic() - start < 10.0  # at once, not after the straggler wait (60 s)
    assert isinstance(error, UnavailableError)
    assert "cannot continue" in str(error) and "--min-np is 2" in str(error)
    assert "1 (exited with status 1)" in str(error) and "2 (exited with status 1)" in str(error)


def test_a_new_member_waits_for_the_commit_boundary_then_gets_a_rank(job_factory):
    job = job_factory(1, 3)
    members = [job.member(str(i)) for i in range(2)]
    join_all(members)
    assert not members[0].join_requested()
    newcomer = job.member("5", child=False)  # started by `flowmesh run --join`
    result: dict[str, object] = {}
    thread = threading.Thread(target=lambda: result.update(join_all([newcomer])))
    thread.start()
    deadline = time.monotonic() + 10
    while not members[0].join_requested() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert members[0].join_requested() and not result  # announced, not yet admitted
    infos = join_all(members)  # the members reach their commit boundary
    thread.join(10)
    assert {m: (i.rank, i.size) for m, i in {**infos, **result}.items()} == {
        "0": (0, 3), "1": (1, 3), "5": (2, 3)}
    assert not members[0].join_requested()


def test_members_beyond_max_np_wait_as_standby_and_replace_a_lost_one(job_factory):
    job = job_factory(1, 2)
    members = [job.member(str(i)) for i in range(2)]
    join_all(members)
    standby = job.member("7", child=False)
    late: dict[str, object] = {}
    thread = threading.Thread(target=lambda: late.update(join_all([standby])))
    thread.start()
    time.sleep(0.3)
    assert not members[0].join_requested() and not late  # the group is full: no reset
    job.lose({"1": "exited with status 1"})
    infos = join_all([members[0]])
    thread.join(10)
    assert {m: (i.rank, i.size) for m, i in {**infos, **late}.items()} == {"0": (0, 2), "7": (1, 2)}


def test_a_stuck_member_is_left_behind_after_the_straggler_timeout(job_factory):
    job = job_factory(2, 3, straggler_s=0.5)
    members = [job.member(str(i)) for i in range(3)]
    join_all(members)
    start = time.monotonic()
    infos = join_all(members[:2])  # member 2 is alive but does not come (stuck in a collective)
    assert 0.5 <= time.monotonic() - start < 5.0
    assert {m: i.size for m, i in infos.items()} == {"0": 2, "1": 2}
    late: dict[str, object] = {}
    thread = threading.Thread(target=lambda: late.update(join_all([members[2]])))
    thread.start()  # it arrives after round 1 closed: it waits in round 2 as a new member
    deadline = time.monotonic() + 10
    while not members[0].join_requested() and time.monotonic() < deadline:
        time.sleep(0.01)
    infos = join_all(members[:2])
    thread.join(10)
    assert {m: (i.rank, i.size) for m, i in {**infos, **late}.items()} == {
        "0": (0, 3), "1": (1, 3), "2": (2, 3)}


def test_a_survivor_gives_up_after_the_elastic_timeout(job_factory):
    job = job_factory(2, 2, straggler_s=30.0)
    members = [job.member(str(i), timeout_s=0.5) for i in range(2)]
    join_all(members)
    start = time.monotonic()
    error = join_all([members[0]])["0"]  # member 1 never comes back, nobody says it died
    assert isinstance(error, DeadlineExceededError) and "FLOWMESH_ELASTIC_TIMEOUT_S" in str(error)
    assert time.monotonic() - start < 5.0


def test_members_the_launcher_did_not_start_are_judged_by_heartbeat(job_factory):
    job = job_factory(1, 3)
    outsider = job.member("9", child=False)
    insider = job.member("0")
    # the outsider arrives first: a first round waits for every child, not for outsiders,
    # so had the insider come first the round could close without the outsider
    out: dict[str, object] = {}
    thread = threading.Thread(target=lambda: out.update(join_all([outsider])))
    thread.start()
    deadline = time.monotonic() + 10
    while job.call(lambda c: len(c._arrived)) < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    out.update(join_all([insider]))
    thread.join(30)
    assert [type(out[m]).__name__ for m in ("0", "9")] == ["WorldInfo"] * 2, out
    assert job.call(lambda c: c.live_count()) == 2
    outsider.close()  # its heartbeat stops: after a few seconds it counts as gone
    deadline = time.monotonic() + 15
    while job.call(lambda c: c.live_count()) == 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job.call(lambda c: c.live_count()) == 1
    assert "heartbeat stopped" in job.server.get(proto.dead_key(0, 1)).decode()


def test_standbys_never_form_a_group_of_their_own(job_factory):
    job = job_factory(1, 2)
    members = [job.member(str(i)) for i in range(2)]
    join_all(members)
    standbys = [job.member(str(i), child=False) for i in (8, 9)]
    out: dict[str, object] = {}
    thread = threading.Thread(target=lambda: out.update(join_all(standbys)))
    thread.start()
    time.sleep(0.5)
    assert len(job.closed) == 1 and not out  # two arrivals = max_np, but the group trains
    job.lose({"0": "was killed by SIGKILL", "1": "was killed by SIGKILL"}, -9)
    thread.join(10)
    assert all(isinstance(e, UnavailableError) and "every member of the group was lost" in str(e)
               for e in out.values()) and len(out) == 2
