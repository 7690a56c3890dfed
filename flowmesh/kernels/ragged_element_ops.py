"""Kernels of ``flowmesh/ops/ragged_element_ops.py`` (host: the value is a Python object)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.pipeline.ragged_value import RaggedValue


@kernel("RaggedToElementVariant", device_types=("CPU",))
def _to_variant(ctx: KernelContext):
    splits_dtype = ctx.torch_dtype(ctx.attr("row_splits_dtype"))
    return lambda flat_values, *splits: RaggedValue(flat_values, splits, splits_dtype)


@kernel("ElementVariantToRagged", device_types=("CPU",))
def _from_variant(ctx: KernelContext):
    ragged_rank = ctx.attr("ragged_rank")

    def run(variant: Any) -> Any:
        value = variant[()] if isinstance(variant, np.ndarray) else variant
        if not isinstance(value, RaggedValue):
            raise InvalidArgumentError(f"ElementVariantToRagged '{ctx.op.name}' expects a RaggedTensor "
                                       f"component, got {type(value).__name__}")
        if len(value.nested_row_splits) != ragged_rank:
            raise InvalidArgumentError(f"ElementVariantToRagged '{ctx.op.name}': expected ragged rank "
                                       f"{ragged_rank}, got {len(value.nested_row_splits)}")
        if ragged_rank == 0:
            return value.flat_values
        return (value.flat_values, *value.nested_row_splits)

    return run
