"""TensorFlow's summary histogram (``core/lib/histogram/histogram.cc``), with NumPy.

Buckets grow by 10 % from 1e-12 up to 1e20 on each side of zero, plus ``+-DBL_MAX`` at the
ends. A value lands in the first bucket whose limit exceeds it; the encoded histogram keeps
every non-empty bucket and collapses each run of empty ones into its last limit with a
count of 0, exactly as TensorFlow's ``EncodeToProto(proto, preserve_zero_buckets=false)``.
Sums are accumulated in order in float64 (``cumsum``), as the C++ loop does, so ``sum`` and
``sum_squares`` match TensorFlow's bit for bit.
"""

from __future__ import annotations

import sys

import numpy as np

from flowmesh.protos.summary import HistogramProto

DBL_MAX = sys.float_info.max


def _default_limits() -> np.ndarray:
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(DBL_MAX)
    return np.array([-x for x in reversed(positive)] + [0.0] + positive)


DEFAULT_LIMITS = _default_limits()


def histogram_proto(values: np.ndarray) -> HistogramProto:
    """The histogram of ``values`` (finite, any shape), as TensorFlow encodes it."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    limits = DEFAULT_LIMITS
    counts = np.zeros(len(limits))
    if flat.size:
        index = np.minimum(np.searchsorted(limits, flat, side="right"), len(limits) - 1)
        counts = np.bincount(index, minlength=len(limits)).astype(np.float64)
    filled = counts > 0
    keep = filled | ~np.append(~filled[1:], False)  # non-empty, or the last of an empty run
    return HistogramProto(
        min=float(flat.min()) if flat.size else DBL_MAX,
        max=float(flat.max()) if flat.size else -DBL_MAX,
        num=float(flat.size),
        sum=float(np.cumsum(flat)[-1]) if flat.size else 0.0,
        sum_squares=float(np.cumsum(flat * flat)[-1]) if flat.size else 0.0,
        bucket_limit=limits[keep].tolist(),
        bucket=counts[keep].tolist())
