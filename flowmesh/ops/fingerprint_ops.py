"""``tf.fingerprint``: a stable 8-byte FarmHash Fingerprint64 of each row (first-dimension
slice) of a tensor, as ``uint8[N, 8]`` (little-endian). A numeric row is hashed as its
bytes; a string row of one string as that string, of several strings as the bytes of
their fingerprints (TensorFlow's rule)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_tensor


def _fingerprint_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    data = inputs[0]
    if data.shape.rank == 0:
        raise InvalidArgumentError("tf.fingerprint: data must have rank >= 1, got a scalar")
    first = data.shape.as_list()[0] if data.shape.rank else None
    return [(dtypes.uint8, TensorShape([first, 8]))]


register_op("Fingerprint", _fingerprint_shape, not_differentiable=True)


def fingerprint(data: Any, method: str = "farmhash64", name: str | None = None) -> Tensor:
    """Row fingerprints of ``data`` (rank >= 1) as ``uint8[N, 8]``.

    Raises:
        InvalidArgumentError: a scalar ``data`` or a method other than ``"farmhash64"``.
    """
    if method != "farmhash64":
        raise InvalidArgumentError(f"tf.fingerprint: unsupported method {method!r}; only 'farmhash64' exists")
    x = convert_to_tensor(data, name="data")
    m = convert_to_tensor(method, dtype=dtypes.string, name="method")
    return make_tensor("Fingerprint", [x, m], name=name or "Fingerprint")
