"""Kernels of ``flowmesh/ops/control_flow_ops.py``."""

from __future__ import annotations

from flowmesh.kernels.contract.registry import simple_kernel

simple_kernel("NoOp", lambda: None)
