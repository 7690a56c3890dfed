"""Local devices: the CPU, logical CPUs, CUDA GPUs and optional CPU-backed simulated GPUs.

A :class:`Device` has a full name (``/job:localhost/replica:0/task:0/device:CPU:0``), the
torch device its kernels use, and the :class:`ResourceStore` holding its variables.

Which devices a process gets (:func:`local_devices`):

==========================  ===========================================================
Device                      Where it comes from
==========================  ===========================================================
``CPU:0 .. CPU:N-1``        ``ConfigProto(device_count={"CPU": N})``; one by default.
                            Logical CPUs share the host's cores and memory; partitions
                            placed on different ones run concurrently.
``GPU:0 .. GPU:M-1``        every CUDA device torch sees (so ``CUDA_VISIBLE_DEVICES``
                            applies), narrowed by ``GPUOptions.visible_device_list`` and
                            capped by ``device_count={"GPU": M}``.
``GPU:i`` (simulated)       only without CUDA: ``FLOWMESH_SIMULATED_GPUS=M`` exposes M GPU
                            devices backed by the CPU, so GPU-placed programs and every
                            multi-device path run on machines without a GPU.
==========================  ===========================================================
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from flowmesh import config as _config
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.resources import ResourceStore
from flowmesh.runtime import device_config

_incarnations = itertools.count(0x5EED0001)
_thread_settings = threading.local()
# The process's intra-op thread count before any session set its own (the team a tuned
# step may shrink to one thread: runtime/thread_tuner.py).
_DEFAULT_TEAM = torch.get_num_threads()


def default_team_size() -> int:
    """The intra-op thread count this process started with."""
    return _DEFAULT_TEAM
# TensorFlow's device-type priorities: with the type left open, the higher one wins.
DEVICE_TYPE_PRIORITY = {"GPU": 210, "TPU": 200, "CPU": 50}


@dataclass(frozen=True)
class DeviceAttributes:
    """What ``Session.list_devices()`` returns for each device (TensorFlow's fields)."""

    name: str
    device_type: str
    memory_limit_bytes: int
    incarnation: int
    physical_device_desc: str = ""


class Device:
    """One device of a task.

    Args:
        spec: the fully specified device name.
        torch_device: where its kernels put tensors.
        simulated: a GPU device backed by the CPU (``FLOWMESH_SIMULATED_GPUS``).

    Raises:
        ValueError: ``spec`` is not fully specified.
    """

    def __init__(self, spec: DeviceSpec, torch_device: torch.device, simulated: bool = False):
        if spec.job is None or spec.task is None or spec.device_type is None or spec.device_index is None:
            raise ValueError(f"A Device needs a fully specified name, got {spec}")
        self.spec = spec
        self.name = spec.to_string()
        self.device_type = spec.device_type
        self.torch_device = torch_device
        self.simulated = simulated
        self.incarnation = next(_incarnations)
        self.resources = ResourceStore(self.name)

    @property
    def task_name(self) -> str:
        """``/job:J/replica:R/task:T`` of this device."""
        return self.spec.replace(device_type=None, device_index=None).to_string()

    @property
    def priority(self) -> int:
        return DEVICE_TYPE_PRIORITY.get(self.device_type, 0)

    def attributes(self) -> DeviceAttributes:
        """The device's ``DeviceAttributes`` (name, type, memory limit, description)."""
        return DeviceAttributes(self.name, self.device_type, _memory_limit(self),
                                self.incarnation, _describe_physical(self))

    def __repr__(self) -> str:
        suffix = " (simulated on CPU)" if self.simulated else ""
        return f"<Device {self.name}{suffix}>"


def _memory_limit(device: Device) -> int:
    if device.torch_device.type == "cuda":
        return int(torch.cuda.get_device_properties(device.torch_device).total_memory)
    try:
        import os

        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 0


def _describe_physical(device: Device) -> str:
    if device.torch_device.type == "cuda":
        props = torch.cuda.get_device_properties(device.torch_device)
        return (f"device: {device.torch_device.index}, name: {props.name}, "
                f"compute capability: {props.major}.{props.minor}")
    if device.simulated:
        return f"simulated GPU {device.spec.device_index} backed by the CPU (FLOWMESH_SIMULATED_GPUS)"
    return ""


class DeviceSet:
    """The devices a session can place ops on, in a stable order (possibly of several
    tasks: the distributed master puts every task's devices in one set)."""

    def __init__(self, devices: Iterable[Device]):
        self.devices: list[Device] = list(devices)
        self._by_name = {d.name: d for d in self.devices}
        if len(self._by_name) != len(self.devices):
            raise ValueError(f"Duplicate device names in {self.names()}")

    def __iter__(self) -> Iterator[Device]:
        return iter(self.devices)

    def __len__(self) -> int:
        return len(self.devices)

    def get(self, name: str) -> Device | None:
        return self._by_name.get(name)

    def matching(self, spec: DeviceSpec) -> list[Device]:
        """Devices compatible with a (partial) spec, in set order."""
        return [d for d in self.devices if spec.is_compatible_with(d.spec)]

    def names(self) -> list[str]:
        return [d.name for d in self.devices]

    def device_types(self) -> list[str]:
        """The device types present, highest priority first."""
        types = {d.device_type: d.priority for d in self.devices}
        return sorted(types, key=lambda t: -types[t])


def local_devices(
    job: str = "localhost",
    task: int = 0,
    replica: int = 0,
    device_count: dict[str, int] | None = None,
    visible_device_list: str = "",
) -> list[Device]:
    """Creates this process's devices for task ``/job:{job}/replica:{replica}/task:{task}``.

    Args:
        job, task, replica: the task the devices belong to.
        device_count: ``ConfigProto.device_count``: ``{"CPU": 4}`` makes four logical CPU
            devices, ``{"GPU": 0}`` hides GPUs (a maximum, never adds devices).
        visible_device_list: ``GPUOptions.visible_device_list``, e.g. ``"1,0"``: which of
            the CUDA devices torch sees become ``GPU:0``, ``GPU:1``, ... in that order.

    Returns:
        The CPU devices followed by the GPU devices.

    Raises:
        InvalidArgumentError: a negative count or a bad ``visible_device_list``.
    """
    counts = _check_counts(device_count)
    base = DeviceSpec(job=job, replica=replica, task=task)
    logical_cpus = device_config.logical_configuration("CPU", 0)
    cpus = counts.get("CPU", len(logical_cpus) if logical_cpus else 1)
    devices = [
        Device(base.replace(device_type="CPU", device_index=i), torch.device("cpu"))
        for i in range(max(1, cpus))
    ]
    gpu_limit = counts.get("GPU")
    cuda_ids = _visible_cuda_ids(visible_device_list)
    physical = physical_gpus(cuda_ids)
    logical = []  # tf.config: hidden physical GPUs left out, a physical GPU split in logical ones
    hidden = device_config.hidden_gpus()
    for index, (torch_device, simulated) in enumerate(physical):
        if index not in hidden:
            logical += [(torch_device, simulated)] * len(device_config.logical_configuration("GPU", index) or [0])
    n = len(logical) if gpu_limit is None else min(gpu_limit, len(logical))
    devices += [Device(base.replace(device_type="GPU", device_index=i), logical[i][0], simulated=logical[i][1])
                for i in range(n)]
    _config.debug(1, f"local devices: {', '.join(d.name for d in devices)}")
    return devices


def physical_gpus(cuda_ids: list[int] | None = None) -> list[tuple[Any, bool]]:
    """``(torch device, simulated)`` of each physical GPU: the visible CUDA devices (or
    ``cuda_ids`` of them), else the ``FLOWMESH_SIMULATED_GPUS`` CPU-backed ones."""
    cuda_ids = list(range(cuda_device_count())) if cuda_ids is None else cuda_ids
    if cuda_ids:
        return [(torch.device("cuda", i), False) for i in cuda_ids]
    return [(torch.device("cpu"), True)] * max(0, _config.SIMULATED_GPUS.get())


def gpu_memory_info(torch_device: Any) -> dict[str, int]:
    """``{"current": bytes, "peak": bytes}`` allocated by torch on a CUDA device."""
    return {"current": int(torch.cuda.memory_allocated(torch_device)),
            "peak": int(torch.cuda.max_memory_allocated(torch_device))}


def reset_gpu_peak_memory(torch_device: Any) -> None:
    torch.cuda.reset_peak_memory_stats(torch_device)


def gpu_details(torch_device: Any) -> dict[str, Any]:
    """``device_name`` and ``compute_capability`` of a CUDA device (TensorFlow's keys)."""
    props = torch.cuda.get_device_properties(torch_device)
    return {"device_name": props.name, "compute_capability": (props.major, props.minor)}


def set_tensor_float_32(enabled: bool) -> None:
    """TF32 matmuls and convolutions on Ampere+ GPUs (TensorFlow's default: on)."""
    torch.backends.cuda.matmul.allow_tf32 = bool(enabled)
    torch.backends.cudnn.allow_tf32 = bool(enabled)


def tensor_float_32_enabled() -> bool:
    return bool(torch.backends.cuda.matmul.allow_tf32)


def _check_counts(device_count: dict[str, int] | None) -> dict[str, int]:
    counts = {str(k).upper(): v for k, v in (device_count or {}).items()}
    for kind, n in counts.items():
        if not isinstance(n, int) or n < 0:
            raise InvalidArgumentError(
                f"ConfigProto.device_count[{kind!r}] must be an int >= 0, got {n!r}"
            )
    return counts


def cuda_device_count() -> int:
    """The CUDA devices torch sees (0 without CUDA); respects ``CUDA_VISIBLE_DEVICES``."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def cuda_compute_capability(device: Device) -> tuple[int, int]:
    """``(major, minor)`` of a CUDA device; ``(0, 0)`` for any other device."""
    if device.torch_device.type != "cuda":
        return (0, 0)
    return tuple(torch.cuda.get_device_capability(device.torch_device))  # type: ignore[return-value]


def torch_built_with_cuda() -> bool:
    """Whether torch was built with CUDA (whether or not a GPU is present)."""
    return torch.version.cuda is not None


def _visible_cuda_ids(visible_device_list: str) -> list[int]:
    available = cuda_device_count()
    if not visible_device_list or not available:  # ignored without CUDA, as in TensorFlow
        return list(range(available))
    ids: list[int] = []
    for part in visible_device_list.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) >= available or int(part) in ids:
            raise InvalidArgumentError(
                f"GPUOptions.visible_device_list={visible_device_list!r} is invalid: "
                f"{part!r} is not a distinct CUDA device id in [0, {available}) "
                f"({available} CUDA devices are visible to this process)."
            )
        ids.append(int(part))
    return ids


def copy_to_device(value: Any, target: torch.device) -> Any:
    """Moves a received value to the device of the partition that consumes it.

    Torch tensors on another torch device are copied (host-to-GPU and GPU-to-GPU copies
    are queued on the stream; GPU-to-host copies wait for the data). Values already there
    (simulated GPUs and logical CPUs share host memory), string arrays and resource
    handles pass through unchanged.
    """
    if not isinstance(value, torch.Tensor) or value.device == target:
        return value
    return value.to(target, non_blocking=target.type == "cuda")


def intra_op_shares(devices: Sequence[Device]) -> tuple[list[int], int]:
    """Intra-op threads for partitions running at once on ``devices``.

    Host-backed devices (CPUs, logical CPUs, simulated GPUs) share the cores: they split
    the calling thread's intra-op thread count between them (at least one each), so
    concurrent partitions do not oversubscribe the cores (OpenMP teams that outnumber
    the cores spin and stall). CUDA partitions keep the full count.

    Returns:
        (threads per device, the calling thread's own count).
    """
    total = torch.get_num_threads()
    host = sum(1 for d in devices if d.torch_device.type == "cpu")
    share = max(1, total // max(1, host))
    return [share if d.torch_device.type == "cpu" else total for d in devices], total


def use_intra_op_threads(threads: int) -> None:
    """Sets the calling (partition pool) thread's torch intra-op thread count, once per
    change (OpenMP and MKL settings are per thread)."""
    if getattr(_thread_settings, "threads", None) != threads:
        torch.set_num_threads(threads)
        _thread_settings.threads = threads


def describe(devices: Iterable[Any]) -> str:
    """``name, name, ...`` of some devices, for messages."""
    return ", ".join(d.name for d in devices)
