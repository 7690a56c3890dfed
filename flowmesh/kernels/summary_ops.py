"""Kernels of ``flowmesh/ops/summary_ops.py``: build and merge serialized ``Summary`` protos.

They run on the host (the values are copied there once) and return a scalar ``bytes``
object array, like every string tensor. Errors match TensorFlow's kernels: a NaN or an
infinity in a histogram, tags and values of different shapes, a duplicate tag in a merge.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.protos.summary import Summary, SummaryValue
from flowmesh.summary.histogram_buckets import histogram_proto


def _bytes_scalar(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _text(tag: Any) -> str:
    return tag.decode("utf-8", errors="replace") if isinstance(tag, bytes) else str(tag)


@kernel("ScalarSummary", device_types=("CPU",))
def _scalar_summary(ctx: KernelContext):
    def run(tags: Any, values: Any) -> np.ndarray:
        tags = np.asarray(tags, dtype=object)
        values = np.asarray(to_numpy(values, copy=False))
        if tags.shape != values.shape:
            raise InvalidArgumentError(
                f"tags and values are not the same shape: {list(tags.shape)} != {list(values.shape)} "
                f"(op {ctx.op.name}); use tf.summary.histogram for a tensor with several values")
        summary = Summary(value=[SummaryValue(tag=_text(t), simple_value=float(v))
                                 for t, v in zip(tags.reshape(-1), values.reshape(-1))])
        return _bytes_scalar(summary.SerializeToString())

    return run


@kernel("HistogramSummary", device_types=("CPU",))
def _histogram_summary(ctx: KernelContext):
    def run(tag: Any, values: Any) -> np.ndarray:
        array = np.asarray(to_numpy(values, copy=False), dtype=np.float64)
        if not np.isfinite(array).all():
            kind = "Nan" if np.isnan(array).any() else "Infinity"
            raise InvalidArgumentError(f"{kind} in summary histogram for: {ctx.op.name}")
        value = SummaryValue(tag=_text(np.asarray(tag, dtype=object)[()]), histo=histogram_proto(array))
        return _bytes_scalar(Summary(value=[value]).SerializeToString())

    return run


@kernel("MergeSummary", device_types=("CPU",))
def _merge_summary(ctx: KernelContext):
    def run(*inputs: Any) -> np.ndarray:
        merged = Summary()
        seen: set[str] = set()
        for serialized in inputs:
            for data in np.asarray(serialized, dtype=object).reshape(-1):
                for value in Summary.FromString(data).value:
                    if value.tag and value.tag in seen:
                        raise InvalidArgumentError(f"Duplicate tag {value.tag} found in summary inputs "
                                                   f"(op {ctx.op.name})")
                    seen.add(value.tag)
                    merged.value.append(value)
        return _bytes_scalar(merged.SerializeToString())

    return run
