"""How a process's steps use its cores: the intra-op thread count, and the thread tuner.

Every place that runs a step's partitions holds one :class:`CpuPolicy` and runs each
step through it: the local session backend (``target=''``) and a task's worker service
(the partitions a ``grpc://`` session sends it). The policy:

* pins the intra-op thread count where one is set: the session's (or, on a task, the
  server's) ``ConfigProto.intra_op_parallelism_threads``, else ``tf.config.threading``'s,
  else ``FLOWMESH_INTRA_OP_THREADS``; it is applied to the calling thread before every
  step, as TensorFlow's per-session pools hold per session;
* otherwise lets each plan's :class:`~flowmesh.runtime.thread_tuner.ThreadTuner` choose
  the mode of its steps (the OpenMP team, one thread, or chunks over a helper pool), unless
  ``FLOWMESH_ADAPTIVE_THREADS=0``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import TypeVar

from flowmesh import config as _settings
from flowmesh.kernels.cpu import chunk_pool, probe_state
from flowmesh.runtime import device_config, threading_policy
from flowmesh.runtime.device import default_team_size
from flowmesh.runtime.thread_tuner import ThreadTuner

T = TypeVar("T")


class CpuPolicy:
    """The intra-op threads and thread tuning of one session backend or worker service.

    Args:
        intra_op_threads: the owner's ``intra_op_parallelism_threads`` (0: not set).
    """

    def __init__(self, intra_op_threads: int = 0):
        self._configured = intra_op_threads
        self._tuners: dict[Hashable, ThreadTuner] = {}
        self._tuners_lock = threading.Lock()
        self._chunks: chunk_pool.ChunkPool | None = None  # dynamic mode, made on first use
        self._chunks_lock = threading.Lock()
        self.apply_threads()

    def fixed_threads(self) -> int:
        """The pinned intra-op thread count (0: none, the tuner decides)."""
        return (self._configured or device_config.intra_op_threads()
                or max(0, _settings.INTRA_OP_THREADS.get()))

    def apply_threads(self, tuned: int | None = None) -> None:
        """Sets the calling thread's intra-op threads: the pinned count, else ``tuned``."""
        threads = self.fixed_threads() or tuned
        if threads:
            import torch  # runtime code outside device modules stays torch-free at import

            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)

    def run(self, plan: Hashable, step: Callable[[], T]) -> T:
        """Runs ``step`` (one step of ``plan``) with the threads its policy gives it."""
        tuner = self._tuner_for(plan)
        if tuner is None:
            self.apply_threads()
            return step()
        with self._tuners_lock:  # threads may run the same plan at once (queue runners)
            mode = tuner.mode()
        self.apply_threads(mode.threads)
        start = time.perf_counter()
        if mode.chunked:
            chunk_pool.set_active(self._chunk_pool())
        probe_state.set_probing(mode != tuner.choice)
        try:
            values = step()
        finally:
            probe_state.set_probing(False)
            if mode.chunked:
                chunk_pool.set_active(None)
        with self._tuners_lock:
            tuner.record(mode, time.perf_counter() - start)
        return values

    def forget(self, plan: Hashable) -> None:
        """Drops ``plan``'s tuner (the plan is gone)."""
        with self._tuners_lock:
            self._tuners.pop(plan, None)

    def close(self) -> None:
        with self._tuners_lock:
            self._tuners.clear()
        with self._chunks_lock:
            pool, self._chunks = self._chunks, None
        if pool is not None:
            pool.close()

    def _tuner_for(self, plan: Hashable) -> ThreadTuner | None:
        if self.fixed_threads() or not _settings.ADAPTIVE_THREADS.get():
            return None
        tuner = self._tuners.get(plan)
        if tuner is None:
            with self._tuners_lock:
                tuner = self._tuners.setdefault(plan, ThreadTuner(
                    default_team_size(), _settings.CHUNK_HELPERS.get() > 0,
                    load=threading_policy.load_per_cpu, max_load=_settings.TUNER_MAX_LOAD.get()))
        return tuner

    def _chunk_pool(self) -> chunk_pool.ChunkPool:
        """The helper threads of dynamic-mode steps (started on first use)."""
        with self._chunks_lock:
            if self._chunks is None:
                self._chunks = chunk_pool.ChunkPool(max(1, _settings.CHUNK_HELPERS.get()),
                                                    on_start=_one_intra_op_thread)
            return self._chunks


def _one_intra_op_thread() -> None:
    """A chunk-pool helper computes its chunks on one intra-op thread."""
    import torch  # runtime code outside device modules stays torch-free at import

    torch.set_num_threads(1)


