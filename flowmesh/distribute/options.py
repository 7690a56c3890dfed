"""Small option types of ``tf.distribute``: ``InputReplicationMode``, ``RunOptions``,
``experimental.CommunicationOptions`` and ``experimental.CollectiveHints``."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from flowmesh.distribute.collective_all_reduce_strategy import CommunicationImplementation


class InputReplicationMode(enum.Enum):
    """How an input function's pipelines map to replicas: one per worker (the only mode of
    ``distribute_datasets_from_function`` in TensorFlow 1.x), or one per replica."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


@dataclass(frozen=True)
class RunOptions:
    """Options of ``strategy.run`` (TPU-oriented in TensorFlow; accepted and kept)."""

    experimental_enable_dynamic_batch_size: bool = True
    experimental_bucketizing_dynamic_shape: bool = False
    experimental_xla_options: Any = None


@dataclass(frozen=True)
class CommunicationOptions:
    """Collective communication options: ``bytes_per_pack`` (0: one pack), a timeout, and
    the implementation (``CommunicationImplementation.AUTO``/``RING``/``NCCL``).

    Raises:
        ValueError: a negative ``bytes_per_pack`` or a non-positive timeout.
    """

    bytes_per_pack: int = 0
    timeout_seconds: float | None = None
    implementation: Any = CommunicationImplementation.AUTO

    def __post_init__(self) -> None:
        if self.bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {self.bytes_per_pack}")
        if self.timeout_seconds is not None and self.timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be positive, got {self.timeout_seconds}")

    def merge(self, options: CommunicationOptions | None) -> CommunicationOptions:
        """These options with ``options``' non-default fields taking over."""
        if options is None:
            return self
        return CommunicationOptions(options.bytes_per_pack or self.bytes_per_pack,
                                    options.timeout_seconds or self.timeout_seconds,
                                    options.implementation if options.implementation != CommunicationImplementation.AUTO
                                    else self.implementation)


@dataclass(frozen=True)
class CollectiveHints:
    """Deprecated hints for collectives (``bytes_per_pack``, ``timeout_seconds``); use
    :class:`CommunicationOptions`."""

    bytes_per_pack: int = 0
    timeout_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.bytes_per_pack < 0:
            raise ValueError(f"bytes_per_pack must be non-negative, got {self.bytes_per_pack}")
