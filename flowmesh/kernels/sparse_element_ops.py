"""Kernels of ``flowmesh/ops/sparse_element_ops.py`` (host: the value is a Python object)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.pipeline.sparse_value import SparseValue


@kernel("SparseToElementVariant", device_types=("CPU",))
def _to_variant(ctx: KernelContext):
    return lambda indices, values, dense_shape: SparseValue(indices, values, dense_shape)


@kernel("ElementVariantToSparse", device_types=("CPU",))
def _from_variant(ctx: KernelContext):
    rank = ctx.attr("shape").rank

    def run(variant: Any) -> Any:
        value = variant[()] if isinstance(variant, np.ndarray) else variant
        if not isinstance(value, SparseValue):
            raise InvalidArgumentError(f"ElementVariantToSparse '{ctx.op.name}' expects a SparseTensor "
                                       f"component, got {type(value).__name__}")
        if rank is not None and value.ndim != rank:
            raise InvalidArgumentError(f"ElementVariantToSparse '{ctx.op.name}': expected a SparseTensor of "
                                       f"rank {rank}, got dense_shape {list(value.shape)}")
        return value.indices, value.values, value.dense_shape

    return run
