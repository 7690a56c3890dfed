"""``StringToHashBucket`` (TensorFlow's ``Hash64``, a MurmurHash64A variant, ``tf.strings.
to_hash_bucket``) and ``StringToHashBucketStrong`` (keyed SipHash-2-4,
``tf.strings.to_hash_bucket_strong``): ``hash(s) % num_buckets`` per string, kernels in
``kernels/string_hash_ops.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_tensor

register_op("StringToHashBucket", lambda i, a: [(dtypes.int64, i[0].shape)], not_differentiable=True)
register_op("StringToHashBucketStrong", lambda i, a: [(dtypes.int64, i[0].shape)],
            not_differentiable=True)


def _buckets(op_type: str, num_buckets: Any) -> int:
    if num_buckets is None or int(num_buckets) < 1:
        raise InvalidArgumentError(f"{op_type}: num_buckets must be >= 1, got {num_buckets}")
    return int(num_buckets)


def string_to_hash_bucket(string_tensor: Any = None, num_buckets: int | None = None,
                          name: str | None = None, input: Any = None) -> Tensor:  # noqa: A002
    """``Hash64(s) % num_buckets`` per string, TensorFlow's buckets exactly
    (``tf.strings.to_hash_bucket``; prefer ``to_hash_bucket_fast`` for new code)."""
    value = input if string_tensor is None else string_tensor
    strings = convert_to_tensor(value, dtype=dtypes.string, name="string_tensor")
    return make_tensor("StringToHashBucket", [strings],
                       {"num_buckets": _buckets("StringToHashBucket", num_buckets)},
                       name=name or "StringToHashBucket")


def string_to_hash_bucket_strong(input: Any, num_buckets: int, key: Sequence[int],  # noqa: A002
                                 name: str | None = None) -> Tensor:
    """``SipHash-2-4(key, s) % num_buckets`` per string (``tf.strings.to_hash_bucket_strong``);
    ``key`` is two 64-bit integers (TensorFlow's int64 attr, read as unsigned), the secret that
    makes the buckets hard to predict.

    Raises:
        InvalidArgumentError: ``key`` is not two integers in [-2**63, 2**63).
    """
    key = [int(k) for k in key]
    if len(key) != 2 or not all(-2 ** 63 <= k < 2 ** 63 for k in key):
        raise InvalidArgumentError(f"StringToHashBucketStrong: key must be 2 int64 values, got {key}")
    strings = convert_to_tensor(input, dtype=dtypes.string, name="input")
    return make_tensor("StringToHashBucketStrong", [strings],
                       {"num_buckets": _buckets("StringToHashBucketStrong", num_buckets), "key": key},
                       name=name or "StringToHashBucketStrong")


to_hash_bucket = string_to_hash_bucket
to_hash_bucket_strong = string_to_hash_bucket_strong
