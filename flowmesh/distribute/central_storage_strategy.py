"""``tf.distribute.experimental.CentralStorageStrategy``: replicas on the compute devices,
variables on one parameter device.

Built on MirroredStrategy: each replica's component of a variable is kept on the parameter
device, and every replica applies the all-reduced (mean) gradients to its component, so the
components stay equal, as TensorFlow's single central copy updated with the aggregated
gradient would be. The variable memory is ``replicas`` times TensorFlow's.
"""

from __future__ import annotations

from collections.abc import Sequence

from flowmesh.distribute.mirrored_strategy import (
    MirroredExtended,
    MirroredStrategy,
    _canonical,
    _default_devices,
)


class CentralStorageExtended(MirroredExtended):
    """MirroredExtended whose variable components all live on the parameter device."""

    def __init__(self, strategy: MirroredStrategy, devices: Sequence[str], parameter_device: str):
        super().__init__(strategy, devices)
        self._parameter_device = parameter_device

    @property
    def variable_devices(self) -> tuple[str, ...]:
        return (self._parameter_device,) * len(self._devices)

    @property
    def parameter_devices(self) -> tuple[str, ...]:
        return (self._parameter_device,)


class CentralStorageStrategy(MirroredStrategy):
    """Synchronous replicas on ``compute_devices`` (default: the local GPUs, else the CPU)
    with the variables on ``parameter_device`` (default: the one compute device when there
    is one, else the CPU).

    Raises:
        ValueError: a device given twice or without a device type.
    """

    def __init__(self, compute_devices: Sequence[str] | None = None, parameter_device: str | None = None):
        devices = [_canonical(d) for d in (compute_devices or _default_devices())]
        if parameter_device is None:
            parameter_device = devices[0] if len(devices) == 1 else "/device:CPU:0"
        super().__init__(devices)
        self._extended = CentralStorageExtended(self, devices, _canonical(parameter_device))
