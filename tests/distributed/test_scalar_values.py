"""Scalars keep their shape () on the wire and when fed: np.ascontiguousarray makes a 0-d
array 1-d, which once turned a scalar fed to a remote session into shape [1] (an assign to
a scalar variable then failed with 'lhs shape= () rhs shape= [1]')."""

from __future__ import annotations

import numpy as np

from flowmesh.core import dtypes
from flowmesh.distributed.protocol import tensor_desc
from flowmesh.kernels.contract.convert import to_torch


def test_a_scalar_descriptor_has_shape_empty():
    for value in (np.asarray(42), np.int64(7), 3.5, True):
        desc, _ = tensor_desc(value)
        assert desc[1] == [], (value, desc)


def test_a_read_only_scalar_feed_stays_a_scalar():
    array = np.asarray(42, dtype=np.int64)
    array.setflags(write=False)
    assert tuple(to_torch(array, dtypes.int64).shape) == ()
