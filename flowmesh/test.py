# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.test``: ``TestCase``/``main`` for graph-mode unit tests, the TensorFlow 1.x gradient
checker, ``Benchmark``, ``create_local_cluster``, and device helpers used by TensorFlow
programs to choose where to run.

``is_gpu_available()`` and ``gpu_device_name()`` see the GPU devices a default session
would get: real CUDA devices, or, on a machine without CUDA, the CPU-backed simulated
GPUs enabled with ``FLOWMESH_SIMULATED_GPUS=N`` (pass ``cuda_only=True`` to ignore those).
"""

from __future__ import annotations

from types import SimpleNamespace as _Namespace

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.runtime import device as _device
from flowmesh.test_util.helpers import sync_devices

_fill_namespace(globals(), "test")


def is_gpu_available(cuda_only: bool = False,
                     min_cuda_compute_capability: tuple[int, int] | None = None) -> bool:
    """Whether a GPU device is available (``tf.test.is_gpu_available``).

    Args:
        cuda_only: only count real CUDA devices (not ``FLOWMESH_SIMULATED_GPUS`` ones).
        min_cuda_compute_capability: ``(major, minor)``; only count CUDA devices at least
            this capable (simulated GPUs never qualify).

    Returns:
        True when at least one qualifying GPU device exists.
    """
    for dev in _device.local_devices():
        if dev.device_type != "GPU":
            continue
        if dev.simulated:
            if not cuda_only and min_cuda_compute_capability is None:
                return True
            continue
        if min_cuda_compute_capability is None:
            return True
        if _device.cuda_compute_capability(dev) >= tuple(min_cuda_compute_capability):
            return True
    return False


def gpu_device_name() -> str:
    """``'/device:GPU:0'`` when a GPU device is available, else ``''``."""
    for dev in _device.local_devices():
        if dev.device_type == "GPU":
            return f"/device:GPU:{dev.spec.device_index}"
    return ""


def is_built_with_cuda() -> bool:
    """Whether the kernel library (torch) was built with CUDA support."""
    return _device.torch_built_with_cuda()


def is_built_with_gpu_support() -> bool:
    """Same as :func:`is_built_with_cuda` (flowmesh has no ROCm-specific path)."""
    return is_built_with_cuda()


experimental = _Namespace(sync_devices=sync_devices)

__all__ = ["Benchmark", "StubOutForTesting", "TestCase", "assert_equal_graph_def", "benchmark_config",
           "compute_gradient", "compute_gradient_error", "create_local_cluster", "disable_with_predicate",
           "get_temp_dir", "gpu_device_name", "is_built_with_cuda", "is_built_with_gpu_support",
           "is_built_with_rocm", "is_built_with_xla", "is_cpu_target_available", "is_gpu_available", "main",
           "test_src_dir_path", "with_eager_op_as_function"]
