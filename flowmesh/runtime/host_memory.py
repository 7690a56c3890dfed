"""Keep freed host memory for the next step instead of returning it to the OS.

A training step allocates and frees the same tensors every step. glibc's malloc hands
large blocks back to the kernel (``munmap``, heap trimming) as soon as they are free, so
the next step page-faults them in again, zero-filled, thousands of times per training
step (``benchmarks/RESULTS.md``, session 12, "Page faults"). Raising glibc's mmap and trim
thresholds keeps those blocks in the heap, where the next step reuses them; blocks over the
largest mmap threshold glibc accepts (32 MB) are kept by turning mmapped blocks off
(``M_MMAP_MAX`` 0: a batch of 32 299x299x3 float images faulted in ~12 000 pages a step
before). This is what
PyTorch's and TensorFlow's CPU tuning guides get by preloading jemalloc or tcmalloc.

The thresholds are process-wide and set once, when the first session runtime of the
process starts; ``FLOWMESH_KEEP_FREED_MB=0`` leaves malloc as it was. Other C libraries
(musl, macOS) are left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading

from flowmesh import config

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_MMAP_MAX = -4
MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's largest accepted value on 64-bit hosts

_lock = threading.Lock()
_applied: bool | None = None  # None: not tried yet


def keep_freed_memory() -> bool:
    """Applies the malloc thresholds once per process; returns whether they are in force."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = _apply(config.KEEP_FREED_MB.get())
        return _applied


def _apply(keep_mb: float) -> bool:
    if keep_mb <= 0:
        return False
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return False
    trim_bytes = int(keep_mb * (1 << 20))
    # Setting either threshold turns off glibc's own adjustment of both; the mmap one must
    # be set too, or every block over its 128 KB default would be mmapped (and faulted).
    applied = bool(mallopt(_M_MMAP_THRESHOLD, min(MMAP_THRESHOLD_BYTES, trim_bytes))
                   and mallopt(_M_TRIM_THRESHOLD, trim_bytes))
    if applied and trim_bytes > MMAP_THRESHOLD_BYTES:
        # Blocks over glibc's largest mmap threshold (a batch of 32 299x299x3 float images
        # is 34 MB) would still be mmapped and faulted in every step: no mmapped blocks at
        # all, so they come from the heap and are kept like the smaller ones.
        mallopt(_M_MMAP_MAX, 0)
    return applied


def _glibc_mallopt() -> ctypes._CFuncPtr | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    # Only glibc has gnu_get_libc_version, and only glibc's mallopt takes these parameters.
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return mallopt
