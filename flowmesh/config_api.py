"""``tf.config``: physical and logical devices, visible devices, memory growth and memory
statistics, thread counts, TF32 and the optimizer/JIT switches, as ``tf.compat.v1.config``.

``flowmesh.config`` is also flowmesh's settings table (every ``FLOWMESH_*`` variable), so
``tf.config`` is that module: :func:`install` adds the names below to it when flowmesh is
imported (the settings module, on the base floor, imports nothing of this).

Devices: the CPU (``/physical_device:CPU:0``) and the GPUs torch sees (or the
``FLOWMESH_SIMULATED_GPUS`` CPU-backed ones). ``set_visible_devices`` and
``set_logical_device_configuration`` apply to sessions created afterwards (TensorFlow
refuses them once its runtime is initialized); a GPU split into logical devices gives
several ``GPU:i`` on one torch device (memory limits are kept, not enforced). XLA, the MLIR
bridge, Grappler options and eager-only switches are stored and reported, and have no
effect; remote eager execution (``experimental_connect_to_*``) is not supported.
"""

from __future__ import annotations

import types
from collections import namedtuple
from typing import Any

from flowmesh import config as _settings
from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.errors import InvalidArgumentError
from flowmesh.runtime import device as _device
from flowmesh.runtime import device_config as _state
from flowmesh.runtime.device_config import LogicalDeviceConfiguration
from flowmesh.tf_logging import warning
from flowmesh.unsupported import EAGER, unsupported

PhysicalDevice = namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = namedtuple("LogicalDevice", ["name", "device_type"])
VirtualDeviceConfiguration = LogicalDeviceConfiguration


def _physical() -> list[PhysicalDevice]:
    gpus = _device.physical_gpus()
    return [PhysicalDevice("/physical_device:CPU:0", "CPU")] + [
        PhysicalDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(len(gpus))]


def _index(device: PhysicalDevice) -> int:
    if not isinstance(device, PhysicalDevice) or device not in _physical():
        raise ValueError(f"Unrecognized device: {device!r}; pass one of tf.config.list_physical_devices()")
    return int(device.name.rsplit(":", 1)[1])


def list_physical_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The physical devices (``CPU``, ``GPU``), optionally of one type."""
    return [d for d in _physical() if device_type is None or d.device_type == device_type.upper()]


def list_logical_devices(device_type: str | None = None) -> list[LogicalDevice]:
    """The devices a session created now would have (``/device:CPU:0``, ``/device:GPU:0`` ...)."""
    found = [LogicalDevice(f"/device:{d.device_type}:{d.spec.device_index}", d.device_type)
             for d in _device.local_devices()]
    return [d for d in found if device_type is None or d.device_type == device_type.upper()]


def get_visible_devices(device_type: str | None = None) -> list[PhysicalDevice]:
    """The physical devices sessions use (all, unless :func:`set_visible_devices` hid some)."""
    hidden = _state.hidden_gpus()
    return [d for d in list_physical_devices(device_type) if not (d.device_type == "GPU" and _index(d) in hidden)]


def set_visible_devices(devices: Any, device_type: str | None = None) -> None:
    """Limits sessions created afterwards to ``devices`` (of ``device_type`` when given);
    the CPU stays visible.

    Raises:
        ValueError: an unknown device, or the CPU left out.
    """
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    indices = {(d.device_type, _index(d)) for d in devices}
    kinds = {device_type.upper()} if device_type else {"CPU", "GPU"}
    if "CPU" in kinds and ("CPU", 0) not in indices:
        raise ValueError("CPU should always be visible: include tf.config.list_physical_devices('CPU')")
    if "GPU" in kinds:
        gpus = {_index(d) for d in list_physical_devices("GPU")}
        _state.set_hidden_gpus(gpus - {i for t, i in indices if t == "GPU"})


def get_logical_device_configuration(device: PhysicalDevice) -> list[LogicalDeviceConfiguration] | None:
    """The logical devices configured for ``device``, or None."""
    return _state.logical_configuration(device.device_type, _index(device))


def set_logical_device_configuration(device: PhysicalDevice, logical_devices: Any) -> None:
    """Splits ``device`` into logical devices for sessions created afterwards: CPU:0 into
    ``len(logical_devices)`` CPUs, a GPU into that many GPUs on the same torch device."""
    configs = list(logical_devices or [])
    for c in configs:
        if not isinstance(c, LogicalDeviceConfiguration):
            raise ValueError(f"logical_devices must be LogicalDeviceConfiguration objects, got {c!r}")
    _state.set_logical_configuration(device.device_type, _index(device), configs)


def get_soft_device_placement() -> bool:
    """The stored soft-placement flag (TensorFlow's default True); graph-mode sessions use
    their ``ConfigProto.allow_soft_placement``."""
    return bool(_state.get_value("soft_device_placement", True))


def set_soft_device_placement(enabled: bool) -> None:
    _state.set_value("soft_device_placement", bool(enabled))


def functions_run_eagerly() -> bool:
    """Whether ``tf.function``s would run eagerly (flowmesh has no ``tf.function``)."""
    return bool(_state.get_value("functions_run_eagerly", False))


def run_functions_eagerly(run_eagerly: bool) -> None:
    _state.set_value("functions_run_eagerly", bool(run_eagerly))


experimental_functions_run_eagerly = functions_run_eagerly
experimental_run_functions_eagerly = run_functions_eagerly
experimental_connect_to_cluster = unsupported("config.experimental_connect_to_cluster", EAGER)
experimental_connect_to_host = unsupported("config.experimental_connect_to_host", EAGER)


# --- experimental ------------------------------------------------------------------------------
def _gpu(device: Any, what: str) -> Any:
    """The torch device of a GPU named by a PhysicalDevice or a string like ``'GPU:0'``."""
    name = device.name if isinstance(device, PhysicalDevice) else str(device)
    kind, _, index = name.rsplit("/", 1)[-1].rpartition(":")
    kind = kind.rsplit(":", 1)[-1].upper()
    gpus = _device.physical_gpus()
    if kind != "GPU" or not index.isdigit() or int(index) >= len(gpus):
        raise ValueError(f"{what} for device {name!r}: only GPUs have allocator statistics")
    torch_device, simulated = gpus[int(index)]
    if simulated:
        raise ValueError(f"{what} for device {name!r}: a simulated GPU (FLOWMESH_SIMULATED_GPUS) has none")
    return torch_device


def get_memory_growth(device: PhysicalDevice) -> bool | None:
    """The memory-growth flag of a GPU (None until set).

    Raises:
        ValueError: ``device`` is not a GPU.
    """
    if device.device_type != "GPU":
        raise ValueError("Cannot get memory growth on non-GPU devices")
    return _state.memory_growth("GPU", _index(device))


def set_memory_growth(device: PhysicalDevice, enable: bool) -> None:
    """Stores the flag; torch's caching allocator always grows on demand, so it is on in
    effect either way."""
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    _state.set_memory_growth("GPU", _index(device), enable)


def get_memory_info(device: Any) -> dict[str, int]:
    """``{"current": bytes, "peak": bytes}`` allocated on a GPU (``'GPU:0'``)."""
    return _device.gpu_memory_info(_gpu(device, "Allocator stats not available"))


def get_memory_usage(device: Any) -> int:
    """Bytes currently allocated on a GPU (deprecated: ``get_memory_info(d)['current']``)."""
    return get_memory_info(device)["current"]


def reset_memory_stats(device: Any) -> None:
    """Resets a GPU's peak memory statistic."""
    _device.reset_gpu_peak_memory(_gpu(device, "Cannot reset memory stats"))


def get_device_details(device: PhysicalDevice) -> dict[str, Any]:
    """``{"device_name", "compute_capability"}`` of a CUDA GPU; ``{}`` for other devices."""
    _index(device)
    if device.device_type != "GPU":
        return {}
    torch_device, simulated = _device.physical_gpus()[_index(device)]
    return {} if simulated else _device.gpu_details(torch_device)


def enable_tensor_float_32_execution(enabled: bool) -> None:
    """TF32 for float32 matmuls and convolutions on Ampere+ GPUs (torch's switches)."""
    _device.set_tensor_float_32(enabled)


def tensor_float_32_execution_enabled() -> bool:
    """Whether float32 matmuls may use TF32 (torch's default is off; TensorFlow's on)."""
    return _device.tensor_float_32_enabled()


def get_device_policy() -> str:
    """The eager device policy (``'silent'``): eager-only in TensorFlow, reported here."""
    return _state.get_value("device_policy", "silent")


def set_device_policy(device_policy: str | None) -> None:
    if device_policy not in (None, "silent", "silent_for_int32", "warn", "explicit"):
        raise ValueError(f"Not a valid device policy: {device_policy!r}")
    _state.set_value("device_policy", device_policy or "silent")


def get_synchronous_execution() -> bool:
    """Eager execution's synchronous flag (True); graph-mode steps are always synchronous."""
    return bool(_state.get_value("synchronous_execution", True))


def set_synchronous_execution(enable: bool) -> None:
    _state.set_value("synchronous_execution", bool(enable))


def enable_mlir_bridge() -> None:
    """Stored only: flowmesh has no MLIR bridge (no XLA compilation)."""
    _state.set_value("mlir_bridge", True)


def disable_mlir_bridge() -> None:
    _state.set_value("mlir_bridge", False)


class ClusterDeviceFilters:
    """Device filters per remote task (``set_device_filters(job_name, task_index,
    device_filters)``), as passed to ``experimental_connect_to_cluster`` (which flowmesh does
    not support; graph-mode sessions take ``ConfigProto.device_filters``)."""

    def __init__(self) -> None:
        self._filters: dict[tuple[str, int], list[str]] = {}

    def set_device_filters(self, job_name: str, task_index: int, device_filters: list[str]) -> None:
        if not all(isinstance(f, str) for f in device_filters):
            raise ValueError("device_filters must be a list of strings")
        self._filters[(job_name, int(task_index))] = list(device_filters)

    @property
    def filters(self) -> dict[tuple[str, int], list[str]]:
        return dict(self._filters)


experimental = types.SimpleNamespace(
    ClusterDeviceFilters=ClusterDeviceFilters, VirtualDeviceConfiguration=VirtualDeviceConfiguration,
    disable_mlir_bridge=disable_mlir_bridge, enable_mlir_bridge=enable_mlir_bridge,
    enable_tensor_float_32_execution=enable_tensor_float_32_execution, get_device_details=get_device_details,
    get_device_policy=get_device_policy, get_memory_growth=get_memory_growth, get_memory_info=get_memory_info,
    get_memory_usage=get_memory_usage, get_synchronous_execution=get_synchronous_execution,
    get_virtual_device_configuration=get_logical_device_configuration, get_visible_devices=get_visible_devices,
    list_logical_devices=list_logical_devices, list_physical_devices=list_physical_devices,
    reset_memory_stats=reset_memory_stats, set_device_policy=set_device_policy,
    set_memory_growth=set_memory_growth, set_synchronous_execution=set_synchronous_execution,
    set_virtual_device_configuration=set_logical_device_configuration, set_visible_devices=set_visible_devices,
    tensor_float_32_execution_enabled=tensor_float_32_execution_enabled)


# --- optimizer and threading ---------------------------------------------------------------------
def get_jit() -> str:
    """The stored XLA JIT setting (``''`` off, ``'autoclustering'`` on)."""
    return _state.get_value("jit", "")


def set_jit(enabled: bool | str) -> None:
    """Stores the setting; flowmesh does not compile with XLA, so turning it on logs a
    warning and changes nothing."""
    value = "autoclustering" if enabled is True else ("" if not enabled else str(enabled))
    if value:
        warning("tf.config.optimizer.set_jit(%r): flowmesh has no XLA compiler; ops keep running on their "
                "torch kernels", enabled)
    _state.set_value("jit", value)


def get_experimental_options() -> dict[str, Any]:
    """The stored Grappler options (TensorFlow's defaults; flowmesh has no graph rewriter)."""
    return dict(_state.get_value("grappler", {"disable_model_pruning": False, "disable_meta_optimizer": False}))


def set_experimental_options(options: dict[str, Any]) -> None:
    current = get_experimental_options()
    current.update(options)
    _state.set_value("grappler", current)


def get_inter_op_parallelism_threads() -> int:
    return _state.inter_op_threads()


def set_inter_op_parallelism_threads(num_threads: int) -> None:
    """Stored; a flowmesh step runs its partitions concurrently whatever the count."""
    _check_threads(num_threads)
    _state.set_threads(inter=num_threads)


def get_intra_op_parallelism_threads() -> int:
    return _state.intra_op_threads()


def set_intra_op_parallelism_threads(num_threads: int) -> None:
    """The intra-op thread count of sessions whose ``ConfigProto`` leaves it at 0 (0: the
    process default)."""
    _check_threads(num_threads)
    _state.set_threads(intra=num_threads)


def _check_threads(num_threads: Any) -> None:
    if not isinstance(num_threads, int) or num_threads < 0:
        raise InvalidArgumentError(f"the number of threads must be an int >= 0, got {num_threads!r}")


optimizer = types.SimpleNamespace(get_experimental_options=get_experimental_options, get_jit=get_jit,
                                  set_experimental_options=set_experimental_options, set_jit=set_jit)
threading = types.SimpleNamespace(
    get_inter_op_parallelism_threads=get_inter_op_parallelism_threads,
    get_intra_op_parallelism_threads=get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads=set_inter_op_parallelism_threads,
    set_intra_op_parallelism_threads=set_intra_op_parallelism_threads)


def install() -> None:
    """Binds ``tf.config``'s names (the export table's ``config`` namespace) in
    ``flowmesh.config`` (the settings module)."""
    _fill_namespace(vars(_settings), "config")
