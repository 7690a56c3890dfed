"""``prefetch_to_device`` and ``copy_to_device``.

flowmesh runs every pipeline on the host (its stages' kernels are CPU-only) and moves an
element to the device of the op that consumes it when ``IteratorGetNext`` runs there (a
Send/Recv pair, as for any tensor). So ``copy_to_device`` keeps the dataset as it is, and
``prefetch_to_device`` is a ``prefetch`` that keeps ``buffer_size`` elements ready;
placing ``get_next`` under ``tf.device(device)`` puts the elements on that device, which is
what TensorFlow's versions give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.device_spec import DeviceSpec
from flowmesh.data.dataset import AUTOTUNE, Dataset

Transform = Callable[[Dataset], Dataset]


def _check_device(device: Any, what: str) -> None:
    try:
        DeviceSpec.from_string(str(device))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: {device!r} is not a device name ('/gpu:0', '/job:worker/cpu:0'...): {exc}") \
            from None


def prefetch_to_device(device: Any, buffer_size: int | None = None) -> Transform:
    """Keeps ``buffer_size`` elements (``None``: autotuned) ready for an iterator on
    ``device``.

    Raises:
        ValueError: ``device`` is not a device name.
    """
    _check_device(device, "prefetch_to_device")
    return lambda dataset: dataset.prefetch(AUTOTUNE if buffer_size is None else buffer_size)


def copy_to_device(target_device: Any, source_device: Any = "/cpu:0") -> Transform:
    """The dataset for an iterator on ``target_device`` (see the module docstring).

    Raises:
        ValueError: a device that is not a device name.
    """
    _check_device(target_device, "copy_to_device")
    _check_device(source_device, "copy_to_device")
    return lambda dataset: dataset
