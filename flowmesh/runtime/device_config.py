"""Process-wide device and threading settings made through ``tf.config`` (visible GPUs,
logical devices, memory growth, thread counts, TF32), read by :func:`local_devices` and by
sessions created afterwards.

TensorFlow refuses to change visible or logical devices once its runtime is initialized;
flowmesh applies them to every session created after the change (sessions already open keep
their devices).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LogicalDeviceConfiguration:
    """One logical device carved from a physical one (``tf.config.LogicalDeviceConfiguration``):
    ``memory_limit`` in MB (kept, not enforced: torch's allocator is not partitioned)."""

    memory_limit: int | None = None
    experimental_priority: int | None = None
    experimental_device_ordinal: int | None = None


@dataclass
class _State:
    hidden_gpus: set[int] = field(default_factory=set)  # physical GPU indices set invisible
    logical: dict[tuple[str, int], list[LogicalDeviceConfiguration]] = field(default_factory=dict)
    memory_growth: dict[tuple[str, int], bool] = field(default_factory=dict)
    intra_op_threads: int = 0
    inter_op_threads: int = 0
    values: dict[str, Any] = field(default_factory=dict)  # the flags tf.config only reports


_STATE = _State()
_LOCK = threading.Lock()


def hidden_gpus() -> set[int]:
    """Physical GPU indices ``tf.config.set_visible_devices`` left out."""
    with _LOCK:
        return set(_STATE.hidden_gpus)


def set_hidden_gpus(indices: set[int]) -> None:
    with _LOCK:
        _STATE.hidden_gpus = set(indices)


def logical_configuration(device_type: str, index: int) -> list[LogicalDeviceConfiguration] | None:
    """The logical devices configured for physical device ``device_type:index``, or None."""
    with _LOCK:
        found = _STATE.logical.get((device_type, index))
        return None if found is None else list(found)


def set_logical_configuration(device_type: str, index: int, configs: list[LogicalDeviceConfiguration]) -> None:
    with _LOCK:
        _STATE.logical[(device_type, index)] = list(configs)


def memory_growth(device_type: str, index: int) -> bool | None:
    with _LOCK:
        return _STATE.memory_growth.get((device_type, index))


def set_memory_growth(device_type: str, index: int, enable: bool) -> None:
    with _LOCK:
        _STATE.memory_growth[(device_type, index)] = bool(enable)


def intra_op_threads() -> int:
    """``tf.config.threading.set_intra_op_parallelism_threads``'s count (0: not set)."""
    return _STATE.intra_op_threads


def inter_op_threads() -> int:
    return _STATE.inter_op_threads


def set_threads(intra: int | None = None, inter: int | None = None) -> None:
    with _LOCK:
        if intra is not None:
            _STATE.intra_op_threads = int(intra)
        if inter is not None:
            _STATE.inter_op_threads = int(inter)


def get_value(name: str, default: Any) -> Any:
    """A flag ``tf.config`` stores and reports (soft placement, device policy, ...)."""
    with _LOCK:
        return _STATE.values.get(name, default)


def set_value(name: str, value: Any) -> None:
    with _LOCK:
        _STATE.values[name] = value


def reset() -> None:
    """Forgets every ``tf.config`` setting (for tests; TensorFlow has no such call)."""
    global _STATE
    with _LOCK:
        _STATE = _State()
