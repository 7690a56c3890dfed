"""Gradient compression for all-reduce (Horovod's ``Compression``).

A compressor casts a tensor before it goes on the wire and back afterwards, halving the
bytes moved for float32 gradients at the cost of precision. Only floating tensors are
compressed; others pass through unchanged.

=====================  =========================================================
``Compression.none``   no compression (default)
``Compression.fp16``   float16 on the wire (Horovod's choice; range +-65504)
``Compression.bf16``   bfloat16 on the wire *(flowmesh)*: float32's range, less precision
=====================  =========================================================
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor


class Compressor:
    """Interface: ``compress(tensor) -> (tensor, ctx)``, ``decompress(tensor, ctx)``."""

    @staticmethod
    def compress(tensor: Tensor) -> tuple[Tensor, Any]:
        """Returns the tensor to send and what :meth:`decompress` needs."""
        return tensor, None

    @staticmethod
    def decompress(tensor: Tensor, ctx: Any) -> Tensor:
        """Restores the received tensor's original dtype."""
        return tensor


class NoneCompressor(Compressor):
    """Sends tensors as they are."""


class _CastCompressor(Compressor):
    wire_dtype: dtypes.DType = dtypes.float16

    @classmethod
    def compress(cls, tensor: Tensor) -> tuple[Tensor, Any]:  # type: ignore[override]
        from flowmesh.ops import cast_ops

        if tensor.dtype.is_floating and tensor.dtype != cls.wire_dtype:
            return cast_ops.cast(tensor, cls.wire_dtype), tensor.dtype
        return tensor, None

    @classmethod
    def decompress(cls, tensor: Tensor, ctx: Any) -> Tensor:  # type: ignore[override]
        from flowmesh.ops import cast_ops

        return tensor if ctx is None else cast_ops.cast(tensor, ctx)


class FP16Compressor(_CastCompressor):
    """Casts floating tensors to float16 for the transfer."""

    wire_dtype = dtypes.float16


class BF16Compressor(_CastCompressor):
    """Casts floating tensors to bfloat16 for the transfer."""

    wire_dtype = dtypes.bfloat16


class Compression:
    """The available compressors (``hvd.Compression.fp16``)."""

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor
