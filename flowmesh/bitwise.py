# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.bitwise``: bitwise operations on integer tensors."""

from flowmesh.ops.bitwise_ops import bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift
