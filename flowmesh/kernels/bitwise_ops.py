"""Kernels of ``flowmesh/ops/bitwise_ops.py``."""

from __future__ import annotations

import torch

from flowmesh.kernels.contract.registry import simple_kernel

simple_kernel("BitwiseAnd", torch.bitwise_and)
simple_kernel("BitwiseOr", torch.bitwise_or)
simple_kernel("BitwiseXor", torch.bitwise_xor)
simple_kernel("LeftShift", torch.bitwise_left_shift)
simple_kernel("RightShift", torch.bitwise_right_shift)
simple_kernel("Invert", torch.bitwise_not)
