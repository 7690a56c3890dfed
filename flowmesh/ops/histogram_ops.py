"""``tf.histogram_fixed_width_bins`` and ``tf.histogram_fixed_width``: ``nbins`` equal bins
over ``value_range``; values below the range count in the first bin, values at or above its
end in the last (TensorFlow's clipping rule)."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops._builders import REAL_NUMERIC, check_dtype
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.clip_ops import clip_by_value
from flowmesh.ops.segment_ops import unsorted_segment_sum


def histogram_fixed_width_bins(values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32,
                               name: str | None = None) -> Tensor:
    """The bin index of every element of ``values`` (same shape, ``dtype``).

    Raises:
        TypeError: non-numeric ``values``.
    """
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        check_dtype("HistogramFixedWidth", values, REAL_NUMERIC, "values")
        if values.dtype.is_integer:
            values = cast(values, dtypes.float64)
        value_range = cast(convert_to_tensor(value_range, name="value_range"), values.dtype)
        nbins_float = cast(nbins, values.dtype)
        scaled = math_ops.truediv(values - value_range[0], value_range[1] - value_range[0])
        indices = clip_by_value(math_ops.floor(nbins_float * scaled), 0.0, nbins_float - 1.0)
        return cast(indices, dtype)


def histogram_fixed_width(values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32,
                          name: str | None = None) -> Tensor:
    """A 1-D ``dtype`` tensor of ``nbins`` counts of ``values`` in equal bins over
    ``value_range = [min, max]``."""
    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]):
        bins = histogram_fixed_width_bins(array_ops.reshape(values, [-1]), value_range, nbins, dtypes.int32)
        ones = array_ops.ones_like(bins, dtype=dtype)
        return unsorted_segment_sum(ones, bins, nbins)
