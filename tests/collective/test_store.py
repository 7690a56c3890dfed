"""The collective rendezvous store lets only the job's tasks in (real sockets, real processes).

The store keeps torch ``TCPStore``'s semantics (checked against a real ``TCPStore``), listens
on the address given only, and refuses every client that does not prove the job's secret:
before the handshake nothing but a 4 KB handshake frame is read, so such a client can
neither read nor write a key, nor learn how many there are.
"""

from __future__ import annotations

import datetime
import os
import re
import socket
import textwrap

import pytest
import torch.distributed as dist

from flowmesh.cli.run import launch
from flowmesh.collective.backends.base import CommunicationError
from flowmesh.collective.backends.torch_dist import connect_store
from flowmesh.distributed import auth
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.auth import ClusterAuth
from flowmesh.distributed.framing import FrameReader

pytestmark = [pytest.mark.multiprocess, pytest.mark.timeout(90)]
JOB = ClusterAuth(b"j" * 64)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def store():
    server = connect_store("127.0.0.1", 0, True, None, 5.0, auth=JOB)
    yield server
    server.close()


def _ops(store) -> list[object]:
    """The same calls on any Store; what they return (TCPStore is the reference)."""
    out: list[object] = []
    store.set("a", "1")
    store.set("b", b"\x00\xff")
    out += [store.get("a"), store.get("b"), store.add("n", 3), store.add("n", -1), store.get("n")]
    out += [store.check(["a", "b"]), store.check(["a", "zz"])]
    out += [store.compare_set("a", "1", "2"), store.compare_set("a", "1", "3"), store.get("a")]
    out += [store.compare_set("new", "", "x"), store.compare_set("none", "e", "y"),
            store.check(["none"])]
    out += [store.delete_key("a"), store.delete_key("a"), store.check(["a"])]
    store.wait(["b", "n"], datetime.timedelta(seconds=1))
    with pytest.raises(RuntimeError):
        store.wait(["never"], datetime.timedelta(seconds=0.2))
    return out


def test_the_store_behaves_as_torch_tcpstore_and_forms_gloo_groups(store):
    reference = dist.TCPStore("127.0.0.1", 0, None, True, timeout=datetime.timedelta(seconds=5),
                              wait_for_workers=False)
    assert _ops(store) == _ops(reference)
    # a second client sees the first one's keys; a blocked get ends when the key arrives
    other = connect_store("127.0.0.1", store.port, False, None, 5.0, auth=JOB)
    assert other.get("b") == b"\x00\xff"
    twin = other.clone()  # torch clones stores for its threads: a new connection
    twin.set("from-twin", "1")
    assert store.get("from-twin") == b"1"
    twin.close()
    # process groups are built on it directly (as TorchDistributedCommunicator does)
    import threading

    import torch

    results: list[torch.Tensor] = []

    def member(rank: int, client) -> None:
        group = dist.ProcessGroupGloo(dist.PrefixStore("g", client), rank, 2,
                                      datetime.timedelta(seconds=20))
        tensor = torch.full((3,), float(rank + 1))
        group.allreduce([tensor]).wait()
        results.append(tensor)

    threads = [threading.Thread(target=member, args=(r, c)) for r, c in enumerate((store, other))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert [t.tolist() for t in results] == [[3.0] * 3] * 2
    other.close()


def test_a_client_without_the_secret_is_refused_and_learns_nothing(store):
    store.set("grad/0", b"secret value")
    keys_before = store.num_keys()
    for who in (ClusterAuth(None), ClusterAuth(b"w" * 64)):  # no secret; another job's
        with pytest.raises(CommunicationError, match="refused this process.*secret"):
            connect_store("127.0.0.1", store.port, False, None, 5.0, auth=who)
    # a raw client that skips the handshake and sends requests: closed, nothing answered
    sock = socket.create_connection(("127.0.0.1", store.port), timeout=5)
    reader = FrameReader(sock)
    auth._send(sock, wire.HELLO, {"v": 1})  # a dialer opens the handshake
    challenge = auth._read_hello(reader, "store")
    assert set(challenge) == {"v", "nonce", "auth"} and challenge["auth"] is True
    for request in ({"id": 1, "m": "set", "a": ["grad/0", b"evil"]},
                    {"id": 2, "m": "get", "a": ["grad/0", 1.0]}):
        body = wire.pack(request)
        try:
            sock.sendall(wire.encode_header(wire.REQUEST, len(body), 0) + body)
        except OSError:
            break  # already closed by the server
    with pytest.raises((ConnectionError, OSError)):
        while True:  # the server answers nothing but its refusal, then closes
            kind, meta_len, _ = wire.decode_header(reader.read(wire.HEADER.size), 1 << 20)
            assert kind == wire.ERROR, kind
            assert b"secret value" not in reader.read(meta_len)
    sock.close()
    # torch's own TCPStore client cannot talk to it either
    with pytest.raises(RuntimeError):
        dist.TCPStore("127.0.0.1", store.port, None, False, timeout=datetime.timedelta(seconds=2),
                      wait_for_workers=False).get("grad/0")
    assert store.get("grad/0") == b"secret value" and store.num_keys() == keys_before


def test_the_store_listens_on_the_address_given_only(store):
    with open("/proc/net/tcp") as f:
        rows = [line.split() for line in f.readlines()[1:]]
    listening = [r[1] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == store.port]
    assert listening == [f"0100007F:{store.port:04X}"]  # 127.0.0.1, not 0.0.0.0 (*:port)
    with pytest.raises(CommunicationError, match="Could not host"):  # the port is taken
        connect_store("127.0.0.1", store.port, True, None, 2.0, auth=JOB)


ATTACKER = """
    import os, socket, sys
    from flowmesh.collective.backends.torch_dist import connect_store
    from flowmesh.collective.backends.base import CommunicationError
    host, port = os.environ["FLOWMESH_RENDEZVOUS"].rsplit(":", 1)
    try:
        store = connect_store(host, int(port), False, None, 5.0)
        print("ATTACK read", store.get("flowmesh/gloo/0"), store.num_keys())
    except CommunicationError as exc:
        print("ATTACK refused:", exc)
"""

RANK = """
    import os, subprocess, sys
    import flowmesh as tf
    import flowmesh.collective as hvd
    hvd.init()
    if hvd.rank() == 0:  # a process of another user: it knows the address, not the secret
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWMESH_CLUSTER")}
        out = subprocess.run([sys.executable, sys.argv[1]], env=env, capture_output=True,
                             text=True, timeout=60)
        print(out.stdout.strip(), out.stderr.strip()[-300:])
    with tf.Session() as sess:
        print("SUM", sess.run(hvd.allreduce(tf.constant([hvd.rank() + 1.0]), op=hvd.Sum)))
"""


def test_flowmesh_run_jobs_work_and_a_process_without_the_secret_is_refused(tmp_path):
    attacker = tmp_path / "attacker.py"
    attacker.write_text(textwrap.dedent(ATTACKER))
    script = tmp_path / "rank.py"
    script.write_text(textwrap.dedent(RANK))
    result = launch(2, [str(script), str(attacker)], capture=True, timeout=80,
                    env={"PYTHONPATH": ROOT})
    lines = [line for _, stream, line in result.output if stream == "stdout"]
    assert result.returncode == 0, result.output[-20:]
    assert sorted(line for line in lines if line.startswith("SUM")) == ["SUM [3.]"] * 2
    attack = [line for line in lines if line.startswith("ATTACK")]
    assert len(attack) == 1 and re.match(r"ATTACK refused: .*cluster secret", attack[0]), lines



def test_clients_past_the_connection_cap_are_refused_with_the_reason(monkeypatch):
    monkeypatch.setenv("FLOWMESH_MAX_CONNECTIONS", "2")
    server = connect_store("127.0.0.1", 0, True, None, 5.0, auth=JOB)  # connection 1
    second = connect_store("127.0.0.1", server.port, False, None, 5.0, auth=JOB)
    with pytest.raises(CommunicationError, match="2 connections open.*FLOWMESH_MAX_CONNECTIONS"):
        connect_store("127.0.0.1", server.port, False, None, 5.0, auth=JOB)
    second.close()
    server.set("still", "served")
    assert server.get("still") == b"served"
    server.close()
