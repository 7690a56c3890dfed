"""A communicator on torch.distributed process groups: gloo for CPU tensors, NCCL for CUDA.

The groups are built directly on the job's rendezvous store (an authenticated
``torch.distributed.Store``: :mod:`flowmesh.collective.backends.store`), with no global
default process group, so flowmesh never interferes with a program's own ``torch.distributed`` use). The control
plane (:meth:`allgather_bytes`) always runs on gloo; data runs on gloo or, for CUDA
tensors, on an NCCL group created on first use. Every call is bounded by the collective
timeout: a member that does not take part makes the others fail with a
:class:`CommunicationError` instead of hanging. A heartbeat thread writes a counter to
the store so that failure reports can say which members are dead; a launcher that saw a
member die may say so directly (key ``dead/<rank>`` in the group's namespace), which ends
the wait for the report at once. Waits on a collective poll that key too (every
``_WAIT_SLICE_S``): gloo does not always notice a dead peer when the survivors wait on
each other, so a reported death ends the wait at once instead of after the timeout.
:meth:`TorchDistributedCommunicator.close` destroys the groups, which closes their
connections: members still blocked on this one fail at once instead of waiting for their
timeout (elastic training re-forms the group that way). A group with a collective still
in flight cannot be destroyed (its worker thread would be joined, blocking until gloo's
timeout), so it is set aside instead and its thread ends at that timeout.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import functools
import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist

from flowmesh import config as _config
from flowmesh.collective.backends.base import (
    CommunicationError,
    Communicator,
    PeerState,
    ReduceOp,
)
from flowmesh.collective.backends.ring import RingAllreduce
from flowmesh.collective.backends.store import StoreClient, StoreServer
from flowmesh.distributed.auth import ClusterAuth
from flowmesh.distributed.cluster_spec import default_bind_address
from flowmesh.errors import OpError, UnauthenticatedError

_TORCH_OPS = {
    ReduceOp.SUM: dist.ReduceOp.SUM,
    ReduceOp.MAX: dist.ReduceOp.MAX,
    ReduceOp.MIN: dist.ReduceOp.MIN,
    ReduceOp.PRODUCT: dist.ReduceOp.PRODUCT,
}
_CONTROL_CAPACITY = 1024  # bytes per member in the first control round
HEARTBEAT_PERIOD_S = 0.5
_DEAD_POLL_S = 0.05
_WAIT_SLICE_S = 0.2
# Groups closed while a collective was still in flight: destroying one would join a worker
# thread blocked on a peer. They are kept alive here; gloo's timeout ends those threads.
_ABANDONED_GROUPS: list[Any] = []
RING_MIN_BYTES = 1 << 20  # live sums from here run the ring (two members; no copy of the source)


def connect_store(host: str, port: int, is_master: bool, world_size: int | None,
                  timeout_s: float, auth: ClusterAuth | None = None) -> StoreClient:
    """A client of the rendezvous store at ``host:port``; with ``is_master`` this process
    also serves it (listening on ``host`` only; ``port`` 0: a free one, see ``.port``).

    Every connection proves the job's secret (``auth``, by default this process's
    ``FLOWMESH_CLUSTER_SECRET[_FILE]``): see :mod:`flowmesh.collective.backends.store`.
    ``world_size`` is accepted for ``TCPStore``'s signature and not needed.

    Raises:
        CommunicationError: the store could not be hosted or reached within ``timeout_s``,
            or one side lacks the job's secret.
    """
    del world_size
    auth = auth if auth is not None else ClusterAuth.from_config()
    server = None
    try:
        if is_master:  # on every interface unless the address is a loopback one
            server = StoreServer(default_bind_address(host), port, auth)
            port = server.port
        return StoreClient(host, port, auth, timeout_s, server=server)
    except UnauthenticatedError as exc:
        raise CommunicationError(f"The collective rendezvous store at {host}:{port} refused "
                                 f"this process: {exc.message}") from None
    except (RuntimeError, OSError, OpError) as exc:
        if server is not None:
            server.close()
        role = "host" if is_master else "reach"
        hint = ("Is the port already taken (e.g. by a flowmesh/TensorFlow server on that "
                "address)? Set FLOWMESH_RENDEZVOUS to a free host:port on every rank."
                if is_master else "Check FLOWMESH_RENDEZVOUS / TF_CONFIG and that the rank "
                "hosting it (rank 0, or `flowmesh run`) is running.")
        raise CommunicationError(
            f"Could not {role} the collective rendezvous store at {host}:{port}: "
            f"{_short(str(exc))}. {hint}", timed_out=True) from None


class _Heartbeat(threading.Thread):
    """Writes ``hb/<rank>`` = ``counter|busy`` to the store every HEARTBEAT_PERIOD_S
    seconds; ``busy`` says whether the member is inside a collective call."""

    def __init__(self, store: Any, rank: int, busy: Any):
        super().__init__(name=f"flowmesh-heartbeat-{rank}", daemon=True)
        self._store = store
        self._rank = rank
        self._busy = busy
        self._halt = threading.Event()

    def run(self) -> None:
        count = 0
        while not self._halt.is_set():
            count += 1
            try:
                self._store.set(f"hb/{self._rank}", f"{count}|{int(bool(self._busy()))}")
            except (RuntimeError, OSError):
                return  # the store is gone; reports will say so
            self._halt.wait(HEARTBEAT_PERIOD_S)

    def stop(self) -> None:
        self._halt.set()


class TorchDistributedCommunicator(Communicator):
    """Member ``rank`` of ``size`` on a store at ``host:port``.

    Args:
        host, port: the rendezvous store's address.
        rank, size, local_rank, local_size: this member's place.
        host_store: this member runs the store server (rank 0 when no launcher hosts it).
        timeout_s: bound of every collective (default ``FLOWMESH_COLLECTIVE_TIMEOUT_S``).
        prefix: store namespace, so several groups can share one store.
        backend: ``"auto"`` (gloo for CPU, NCCL for CUDA tensors), ``"gloo"`` or ``"nccl"``.
    """

    name = "torch"

    def __init__(self, host: str, port: int, rank: int, size: int, local_rank: int | None = None,
                 local_size: int | None = None, host_store: bool = False,
                 timeout_s: float | None = None, prefix: str = "flowmesh", backend: str = "auto"):
        super().__init__(rank, size, local_rank, local_size)
        self._timeout_s = timeout_s if timeout_s is not None else _config.COLLECTIVE_TIMEOUT_S.get()
        self._address = (host, port)
        self._backend = backend
        self._prefix = prefix
        connect_s = self._connect_s = max(self._timeout_s, _config.CONNECT_TIMEOUT_S.get())
        self._store = connect_store(host, port, host_store, size if host_store else None, connect_s)
        try:
            self._gloo = self._gloo_group(f"{prefix}/gloo")
        except RuntimeError as exc:
            raise CommunicationError(
                f"Rank {rank} could not form a gloo group of {size} through {host}:{port}: "
                f"{exc}. Are all {size} ranks started with the same rendezvous address?",
                timed_out=True,
            ) from None
        self._nccl: Any = None
        self._channels: list[_Channel] = []
        self._ring_scratch: dict[tuple[int, torch.dtype], torch.Tensor] = {}
        self._ring_thread: concurrent.futures.ThreadPoolExecutor | None = None
        # the Python store objects must outlive the C++ PrefixStores over them: a Store
        # subclass whose Python object is gone cannot answer torch's calls
        self._hb_client = connect_store(host, port, False, None, connect_s)
        self._hb_store = dist.PrefixStore(prefix, self._hb_client)
        self._busy: str | None = None
        self._in_flight = False
        self._heartbeat = _Heartbeat(self._hb_store, rank, lambda: self._busy)
        self._heartbeat.start()

    # --- groups ------------------------------------------------------------------------------
    def _gloo_group(self, prefix: str) -> Any:
        """A gloo group under ``prefix``: formed within the connect timeout (a loaded
        machine may take longer than a short collective timeout to connect every pair),
        then bounded by the collective timeout for every collective."""
        group = dist.ProcessGroupGloo(dist.PrefixStore(prefix, self._store), self.rank, self.size,
                                      self._gloo_options(self._connect_s))
        group._set_default_timeout(datetime.timedelta(seconds=self._timeout_s))
        return group

    def _gloo_options(self, timeout_s: float) -> Any:
        """gloo's options: the timeout, and the interface that reaches the store.

        gloo by default listens on the address its hostname resolves to and falls back to
        loopback, which other hosts cannot reach; the address this process reaches the
        rendezvous store from is one every member can route to (``GLOO_SOCKET_IFNAME``,
        torch's setting, names an interface instead).
        """
        options = dist.ProcessGroupGloo._Options()
        options._timeout = datetime.timedelta(seconds=timeout_s)
        interface = _config.GLOO_SOCKET_IFNAME.get()
        if interface:
            options._devices = [dist.ProcessGroupGloo.create_device(interface=interface.split(",")[0])]
        else:
            options._devices = [dist.ProcessGroupGloo.create_device(hostname=self._store.local_address)]
        return options

    def _control_group(self) -> Any:
        if self._gloo is None:
            raise CommunicationError(f"{self.describe()} is closed; call "
                                     "flowmesh.collective.init() again")
        return self._gloo

    def _group_for(self, tensor: torch.Tensor) -> Any:
        """gloo for CPU tensors; NCCL for CUDA tensors when torch has it (gloo stages CUDA
        tensors through the host otherwise). Every rank takes the same branch for the same
        collective, so the NCCL group is created at the same point everywhere."""
        self._control_group()
        if tensor.device.type != "cuda" or self._backend == "gloo" or not dist.is_nccl_available():
            return self._gloo
        if self._nccl is None:
            from torch.distributed.distributed_c10d import ProcessGroupNCCL

            options = ProcessGroupNCCL.Options()
            options._timeout = datetime.timedelta(seconds=self._timeout_s)
            self._nccl = ProcessGroupNCCL(
                dist.PrefixStore(f"{self._prefix}/nccl", self._store), self.rank, self.size, options)
        return self._nccl

    def _wait(self, work: Any, what: str) -> None:
        """Waits for ``work`` in slices; between slices, a member the launcher reported
        dead ends the wait (the work stays in flight: see :meth:`close`)."""
        slice_ = datetime.timedelta(seconds=_WAIT_SLICE_S)
        while True:
            try:
                work.wait(slice_)
                return
            except RuntimeError as exc:
                text = str(exc)
                if "Operation timed out!" in text:
                    dead = self._reported_dead_or_none()
                    if dead:
                        self._in_flight = True
                        raise CommunicationError(
                            f"{what} failed on rank {self.rank}: rank(s) {sorted(dead)} "
                            "died (reported by the launcher)") from None
                    continue
                timed_out = "Timed out" in text or "timeout" in text.lower()
                raise CommunicationError(f"{what} failed on rank {self.rank}: {_short(text)}",
                                         timed_out=timed_out) from None

    def _wait_transfer(self, work: Any, what: str) -> None:
        """Waits for a point-to-point transfer with the whole collective timeout: when such
        a wait times out gloo fails every connection of the group, so it cannot be waited
        for in slices as collectives are (a dead peer's closed connection still ends it)."""
        try:
            work.wait(datetime.timedelta(seconds=self._timeout_s))
        except RuntimeError as exc:
            self._in_flight = True
            dead = self._reported_dead_or_none()
            if dead:
                raise CommunicationError(f"{what} failed on rank {self.rank}: rank(s) {sorted(dead)} "
                                         "died (reported by the launcher)") from None
            text = str(exc)
            raise CommunicationError(f"{what} failed on rank {self.rank}: {_short(text)}",
                                     timed_out="timed out" in text.lower()) from None

    def _reported_dead_or_none(self) -> dict[int, PeerState]:
        try:
            return self._reported_dead()
        except (RuntimeError, OSError):
            return {}  # the store is gone: gloo's own timeout still bounds the wait

    def _call(self, what: str, *starts: Any) -> None:
        """Starts the work of every function in ``starts`` (so they run concurrently),
        then waits for each."""
        self._finish(what, self._start(what, *starts))

    def _start(self, what: str, *starts: Any) -> list[Any]:
        self._busy = what
        works = []
        for start in starts:
            try:
                works.append(start())
            except RuntimeError as exc:
                self._busy = None
                raise CommunicationError(
                    f"{what} failed on rank {self.rank}: {_short(str(exc))}") from None
        return works

    def _finish(self, what: str, works: list[Any], rings: Sequence[RingAllreduce] = (),
                idle: bool = True) -> None:
        """Drives the rings to their end, then waits for each work, the last started
        first: it usually finishes last, so the earlier ones are done by then and waiting
        costs one wake-up, not one per work. ``idle``: the member is out of the collective
        afterwards (for the heartbeat)."""
        try:
            for ring in rings:
                try:
                    ring.finish(functools.partial(self._wait_transfer, what=what))
                except RuntimeError as exc:
                    raise CommunicationError(
                        f"{what} failed on rank {self.rank}: {_short(str(exc))}") from None
            for work in reversed(works):
                self._wait(work, what)
        finally:
            if idle:
                self._busy = None

    # --- control plane -----------------------------------------------------------------------
    def allgather_bytes(self, payload: bytes, capacity: int = _CONTROL_CAPACITY) -> list[bytes]:
        cap = max(int(capacity), 8)
        first = torch.empty(cap, dtype=torch.uint8)
        header = struct.pack("<I", len(payload))
        inline = payload if len(payload) <= cap - 4 else b""
        first[:4 + len(inline)] = torch.frombuffer(bytearray(header + inline), dtype=torch.uint8)
        gathered = torch.empty(cap * self.size, dtype=torch.uint8)
        gloo = self._control_group()
        self._call("control allgather", lambda: gloo._allgather_base(gathered, first))
        raw = gathered.numpy().tobytes()
        lengths = [struct.unpack_from("<I", raw, r * cap)[0] for r in range(self.size)]
        longest = max(lengths)
        if longest <= cap - 4:
            return [raw[r * cap + 4:r * cap + 4 + n] for r, n in enumerate(lengths)]
        second = torch.zeros(longest, dtype=torch.uint8)
        second[:len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
        big = torch.empty(longest * self.size, dtype=torch.uint8)
        self._call("control allgather", lambda: gloo._allgather_base(big, second))
        data = big.numpy().tobytes()
        return [data[r * longest:r * longest + n] for r, n in enumerate(lengths)]

    # --- data plane --------------------------------------------------------------------------
    def allreduce(self, tensor: torch.Tensor, op: ReduceOp) -> None:
        self.allreduce_each([tensor], op)

    def allreduce_each(self, tensors: Sequence[torch.Tensor], op: ReduceOp,
                       sources: Sequence[torch.Tensor | None] | None = None) -> None:
        """In a group of two, a batch with a large out-of-place CPU sum runs on the rings of
        :mod:`~flowmesh.collective.backends.ring` (point-to-point, no copy of the source; its
        small transfers ride along), driven by this thread; otherwise gloo's all-reduce,
        out-of-place entries copying their source first."""
        works, rings = self._start_allreduces(tensors, op, sources)
        self._finish("allreduce", works, rings)

    def start_allreduce_each(self, tensors: Sequence[torch.Tensor], op: ReduceOp,
                             sources: Sequence[torch.Tensor | None] | None = None,
                             ) -> Callable[[], None]:
        """As :meth:`allreduce_each`, in the background: gloo's work runs on its threads,
        the rings on this communicator's ring thread, until the returned function waits."""
        works, rings = self._start_allreduces(tensors, op, sources)
        if not rings:
            return functools.partial(self._finish, "allreduce", works)
        driven = self._ring_driver().submit(self._finish, "allreduce", [], rings, idle=False)

        def wait() -> None:
            try:
                driven.result()
            except BaseException:
                self._busy = None
                raise
            self._finish("allreduce", works)

        return wait

    def _start_allreduces(self, tensors: Sequence[torch.Tensor], op: ReduceOp,
                          sources: Sequence[torch.Tensor | None] | None,
                          ) -> tuple[list[Any], list[RingAllreduce]]:
        options = dist.AllreduceOptions()
        options.reduceOp = _TORCH_OPS[ReduceOp.parse(op)]
        entries = list(zip(tensors, sources or [None] * len(tensors)))
        fits = [self._ring_fits(tensor, source, op) for tensor, source in entries]
        large = any(fit and source is not None
                    and tensor.numel() * tensor.element_size() >= RING_MIN_BYTES
                    for fit, (tensor, source) in zip(fits, entries))
        rings, starts = [], []
        for fit, (tensor, source) in zip(fits, entries):
            if fit and large:  # the batch's small transfers (a header) ride with the large one
                rings.append(RingAllreduce(self._control_group(),
                                           (tensor if source is None else source).reshape(-1),
                                           tensor.reshape(-1), self.rank, self.size,
                                           self._scratch_buffer, slot=len(rings)))
                continue
            if source is not None:
                tensor.copy_(source.reshape(tensor.shape))
            starts.append(functools.partial(self._group_for(tensor).allreduce, [tensor], options))
        works = self._start("allreduce", *starts, *[ring.start for ring in rings])
        return [w for w in works if w is not None], rings

    def _ring_driver(self) -> concurrent.futures.ThreadPoolExecutor:
        """The thread that drives rings started in the background (one per communicator,
        so rings of one group run in the order they were started)."""
        if self._ring_thread is None:
            self._ring_thread = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix=f"flowmesh-ring-{self.rank}")
        return self._ring_thread

    def _ring_fits(self, tensor: torch.Tensor, source: torch.Tensor | None, op: ReduceOp) -> bool:
        """Whether the ring may take this sum (in place, or out of place from ``source``):
        a group of two, the CPU, contiguous tensors of one dtype. A batch goes to rings
        when one of its transfers is out of place and at least ``RING_MIN_BYTES``: the ring
        saves that copy; below that size the copy costs less than the ring's extra calls,
        and a batch of in-place transfers runs faster on gloo's own all-reduce. With more members a member would wait on a live
        neighbour that stopped because *its* neighbour died, and a point-to-point wait
        cannot be cut short when the launcher reports the death (see
        :meth:`_wait_transfer`); gloo's collective, waited for in slices, can."""
        source = tensor if source is None else source
        return (self.size == 2 and ReduceOp.parse(op) is ReduceOp.SUM
                and tensor.device.type == "cpu" and source.device.type == "cpu"
                and tensor.dtype == source.dtype and tensor.dtype != torch.bool
                and tensor.is_contiguous() and source.is_contiguous()
                and tensor.numel() == source.numel() and tensor.numel() >= self.size)

    def _scratch_buffer(self, index: int, numel: int, dtype: torch.dtype) -> torch.Tensor:
        """Scratch buffer ``index`` of the ring, kept for the next collective (a fresh
        large buffer costs page faults on every call)."""
        key = (index, dtype)
        buffer = self._ring_scratch.get(key)
        if buffer is None or buffer.numel() < numel:
            buffer = self._ring_scratch[key] = torch.empty(numel, dtype=dtype)
        return buffer[:numel]

    def channel(self, key: str) -> TorchDistributedCommunicator:
        """A gloo group of its own (NCCL on first CUDA use) under ``<prefix>/channel/<key>``,
        sharing this communicator's store, heartbeat and liveness reports."""
        return _Channel(self, key)

    def allgather(self, output: torch.Tensor, tensor: torch.Tensor) -> None:
        group = self._group_for(tensor)
        self._call("allgather", lambda: group._allgather_base(output.reshape(-1), tensor.reshape(-1)))

    def broadcast(self, tensor: torch.Tensor, root: int) -> None:
        options = dist.BroadcastOptions()
        options.rootRank = root
        group = self._group_for(tensor)
        self._call("broadcast", lambda: group.broadcast([tensor], options))

    def reduce_scatter(self, output: torch.Tensor, tensor: torch.Tensor, op: ReduceOp) -> None:
        options = dist.ReduceScatterOptions()
        options.reduceOp = _TORCH_OPS[ReduceOp.parse(op)]
        group = self._group_for(tensor)
        chunks = list(tensor.reshape(-1).chunk(self.size))
        out = output.reshape(-1)
        self._call("reduce_scatter", lambda: group.reduce_scatter([out], [chunks], options))

    # --- diagnostics -------------------------------------------------------------------------
    def peer_status(self) -> dict[int, PeerState]:
        """Reads every peer's heartbeat twice, ``3 * HEARTBEAT_PERIOD_S`` apart; returns
        early when the launcher reports dead members meanwhile."""
        try:
            first = self._heartbeats()
            end = time.monotonic() + 3 * HEARTBEAT_PERIOD_S
            while time.monotonic() < end:
                dead = self._reported_dead()
                if dead:
                    return {r: dead.get(r, PeerState(None, None, "not checked")) for r in
                            range(self.size) if r != self.rank}
                time.sleep(_DEAD_POLL_S)
            second = self._heartbeats()
        except (RuntimeError, OSError) as exc:
            host, port = self._address
            detail = (f"unknown: the rendezvous store at {host}:{port} is unreachable "
                      f"({_short(str(exc))}); the process hosting it (rank 0 or the launcher) "
                      "has probably died")
            return {r: PeerState(None, None, detail) for r in range(self.size) if r != self.rank}
        status = {}
        for r in range(self.size):
            if r == self.rank:
                continue
            now, before = second.get(r), first.get(r)
            if now is None:
                status[r] = PeerState(False, None, "never sent a heartbeat")
            elif before is not None and now[0] == before[0]:
                status[r] = PeerState(False, None, "dead or frozen (heartbeat stopped)")
            elif now[1]:
                status[r] = PeerState(True, True, "alive, waiting in a collective")
            else:
                status[r] = PeerState(True, False, "alive but not in any collective")
        return status

    def _reported_dead(self) -> dict[int, PeerState]:
        keys = {r: f"dead/{r}" for r in range(self.size) if r != self.rank}
        return {r: PeerState(False, None, f"dead ({self._hb_store.get(key).decode()}, "
                             "reported by the launcher)")
                for r, key in keys.items() if self._hb_store.check([key])}

    def _heartbeats(self) -> dict[int, tuple[int, bool] | None]:
        out: dict[int, tuple[int, bool] | None] = {}
        for r in range(self.size):
            key = f"hb/{r}"
            if not self._hb_store.check([key]):
                out[r] = None
                continue
            count, busy = self._hb_store.get(key).decode().split("|")
            out[r] = (int(count), busy == "1")
        return out

    def describe(self) -> str:
        host, port = self._address
        return f"torch.distributed communicator rank {self.rank}/{self.size} via {host}:{port}"

    def close(self) -> None:
        self._heartbeat.stop()
        self._heartbeat.join(timeout=2 * HEARTBEAT_PERIOD_S)
        self._close_groups()

    def _close_groups(self) -> None:
        """Closes this communicator's channels, then its own process groups."""
        for channel in self._channels:
            channel._close_groups()
        if self._ring_thread is not None:
            self._ring_thread.shutdown(wait=False)
            self._ring_thread = None
        groups, self._nccl, self._gloo = (self._nccl, self._gloo), None, None
        if self._in_flight:
            _ABANDONED_GROUPS.extend(g for g in groups if g is not None)
            return
        for group in groups:
            shutdown = getattr(group, "shutdown", None)
            if shutdown is not None:
                try:
                    shutdown()
                except RuntimeError:
                    pass
        del groups  # the last references: destroying a group closes its connections


class _Channel(TorchDistributedCommunicator):
    """A child communicator with its own process group (see ``channel``)."""

    def __init__(self, parent: TorchDistributedCommunicator, key: str):
        Communicator.__init__(self, parent.rank, parent.size, parent.local_rank,
                              parent.local_size)
        self._parent = parent
        self._timeout_s = parent._timeout_s
        self._connect_s = parent._connect_s
        self._address = parent._address
        self._backend = parent._backend
        self._prefix = f"{parent._prefix}/channel/{key}"
        self._store = parent._store
        self._hb_client = parent._hb_client
        self._hb_store = parent._hb_store
        self._nccl = None
        self._channels = []
        self._ring_scratch = {}
        self._ring_thread = None
        self._in_flight = False
        try:
            self._gloo = self._gloo_group(f"{self._prefix}/gloo")
        except RuntimeError as exc:
            raise CommunicationError(f"Rank {self.rank} could not open collective channel "
                                     f"'{key}': {_short(str(exc))}", timed_out=True) from None
        parent._channels.append(self)

    @property
    def _busy(self) -> str | None:  # the parent's heartbeat reports it
        return self._parent._busy

    @_busy.setter
    def _busy(self, value: str | None) -> None:
        self._parent._busy = value

    def close(self) -> None:  # the heartbeat is the parent's
        self._close_groups()


def _short(text: str) -> str:
    text = text.strip().splitlines()[0] if text.strip() else text
    return text[:300]
