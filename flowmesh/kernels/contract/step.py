"""Per-step state handed to kernels that need it (Send/Recv, control flow, collectives)."""

from __future__ import annotations

import itertools
from typing import Any

from flowmesh.kernels.contract.rendezvous import Rendezvous

_step_ids = itertools.count(1)


def new_step_id() -> int:
    return next(_step_ids)


class StepContext:
    """What one ``Session.run`` step shares between its partitions.

    Attributes:
        step_id: unique within the process.
        rendezvous: where cross-device tensors of this step meet.
        timeout: seconds a Recv may wait (``RunOptions.timeout_in_ms``), or None.
        trace: a list collecting ``(node, device, start, end)`` when tracing, else None.
        trace_lanes: when tracing, the timeline lanes kernels add beside the op rows
            (a collective's engine thread), by a key the kernel chooses.
        partition_graphs: a list the backend fills with each partition's GraphDef when
            ``RunOptions.output_partition_graphs`` asks for them, else None.
        remote_stats: the ``DeviceStepStats`` other tasks sent back for a traced step.
    """

    __slots__ = ("step_id", "rendezvous", "timeout", "trace", "trace_lanes", "partition_graphs",
                 "remote_stats")

    def __init__(self, step_id: int | None = None, rendezvous: Rendezvous | None = None,
                 timeout: float | None = None, trace: list | None = None):
        self.step_id = new_step_id() if step_id is None else step_id
        self.rendezvous = rendezvous if rendezvous is not None else Rendezvous()
        self.timeout = timeout
        self.trace = trace
        self.trace_lanes: dict[str, Any] = {}
        self.partition_graphs: list[Any] | None = None
        self.remote_stats: list[Any] = []
