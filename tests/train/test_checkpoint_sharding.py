"""The checkpoint sharding policies compute TensorFlow's shards from the same tensors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.testing.tf_oracle import require_tensorflow
from flowmesh.train.experimental import (
    MaxShardSizePolicy,
    ShardableTensor,
    ShardByTaskPolicy,
    ShardingCallback,
)

# (checkpoint key, value, slice spec, device)
CASES: list[tuple[str, Any, str, str]] = [
    ("a", np.arange(24, dtype=np.float32).reshape(4, 6), "", "/device:CPU:0"),
    ("b", np.arange(10, dtype=np.int64), "", "/device:CPU:0"),
    ("c", np.float64(3.5), "", "/device:CPU:0"),
    ("d", np.arange(30, dtype=np.int32).reshape(5, 3, 2), "", "/device:CPU:0"),
    ("e", np.ones([2, 50], np.float32), "", "/device:CPU:0"),
]


def _shardables(make_tensor: Any, make_device: Any, cls: Any, dtype_of: Any) -> list[Any]:
    out = []
    for key, value, spec, device in CASES:
        tensor = make_tensor(value)
        out.append(cls(_tensor_save_spec=None, tensor=tensor, dtype=dtype_of(tensor),
                       device=make_device(device), name=key, shape=tensor.shape,
                       slice_spec=spec, checkpoint_key=key, trackable=None))
    return out


def _summary(shards: Any, to_numpy: Any) -> list[dict[str, dict[str, list[Any]]]]:
    return [{k: {s: to_numpy(t).tolist() for s, t in slices.items()} for k, slices in shard.items()}
            for shard in shards]


def _flowmesh_shards(policy: ShardingCallback) -> list[Any]:
    with tf.Graph().as_default(), tf.Session() as sess:
        shardables = _shardables(tf.constant, DeviceSpec.from_string, ShardableTensor,
                                 lambda t: t.dtype)
        shards = policy(shardables)
        return _summary(shards, lambda t: np.asarray(sess.run(t)))


def _tensorflow_shards(policy_name: str, *args: Any) -> list[Any]:
    """TensorFlow's policy on the same tensors, in graph mode (the suite's oracle runs with
    eager execution disabled, whichever test imported it first)."""
    tf1 = require_tensorflow()
    import tensorflow as tft

    policy = getattr(tft.train.experimental, policy_name)(*args)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        shardables = _shardables(tf1.constant, tf1.DeviceSpec.from_string,
                                 tft.train.experimental.ShardableTensor, lambda t: t.dtype)
        return _summary(policy(shardables), lambda t: np.asarray(sess.run(t)))


@pytest.mark.parametrize("max_size", [1000, 64, 40, 24])
def test_max_shard_size_matches_tensorflow(max_size: int) -> None:
    assert _flowmesh_shards(MaxShardSizePolicy(max_size)) == \
        _tensorflow_shards("MaxShardSizePolicy", max_size)


def test_shard_by_task_and_descriptions_match_tensorflow() -> None:
    assert _flowmesh_shards(ShardByTaskPolicy()) == _tensorflow_shards("ShardByTaskPolicy")
    import tensorflow as tft

    assert ShardByTaskPolicy().description == tft.train.experimental.ShardByTaskPolicy().description
    assert MaxShardSizePolicy(10).description == \
        tft.train.experimental.MaxShardSizePolicy(10).description


def test_string_sizes_are_read_in_a_session() -> None:
    with tf.Graph().as_default(), tf.Session():
        strings = [ShardableTensor(None, tf.constant(b"x" * n), tf.string, DeviceSpec(), f"s{n}",
                                   tf.TensorShape([]), "", f"s{n}", None) for n in (6, 6, 3)]
        shards = MaxShardSizePolicy(10)(strings)
    # 6 + 6 > 10 bytes: the second string opens a new shard, which the third one joins
    assert [sorted(s) for s in shards] == [["s6"], ["s3", "s6"]]


def test_a_slice_larger_than_the_budget_gets_its_own_shard() -> None:
    with tf.Graph().as_default(), tf.Session() as sess:
        value = np.arange(30, dtype=np.int32).reshape(5, 3, 2)
        t = ShardableTensor(None, tf.constant(value), tf.int32, DeviceSpec(), "d",
                            tf.TensorShape([5, 3, 2]), "", "d", None)
        shards = MaxShardSizePolicy(16)([t])  # the thinnest slice is 3 * 2 * 4 = 24 bytes
        pieces = [(spec, sess.run(x)) for shard in shards for spec, x in shard["d"].items()]
    rebuilt = np.full_like(value, -1)
    for spec, piece in pieces:  # the pieces tile the tensor exactly once
        box = tuple(slice(int(o), int(o) + int(n)) for o, n in
                    (d.split(",") for d in spec.split(" ")[-1].split(":")))
        assert (rebuilt[box] == -1).all()
        rebuilt[box] = piece
    np.testing.assert_array_equal(rebuilt, value)
    assert len(shards) > 1


def test_custom_callback_is_abstract() -> None:
    with pytest.raises(TypeError):
        ShardingCallback()  # type: ignore[abstract]

    class AllInOne(ShardingCallback):
        @property
        def description(self) -> str:
            return "all in one"

        def __call__(self, shardable_tensors: Any) -> Any:
            return [{t.checkpoint_key: {t.slice_spec: t.tensor} for t in shardable_tensors}]

    assert hash(AllInOne()) == hash("all in one")


@pytest.mark.parametrize("write_version", [None, tf.train.SaverDef.V2])
def test_sharded_saver_honours_a_sharding_callback(tmp_path: Path, write_version: Any) -> None:
    value = np.arange(24, dtype=np.float32).reshape(4, 6)
    with tf.Graph().as_default():
        w = tf.Variable(value, name="w")
        b = tf.Variable(np.ones(10, np.int64), name="b")
        saver = tf.train.Saver([w, b], sharded=True, write_version=write_version,
                               experimental_sharding_callback=MaxShardSizePolicy(40))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
            sess.run([w.assign(np.zeros_like(value)), b.assign(np.zeros(10, np.int64))])
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), value)
            assert sess.run(b).tolist() == [1] * 10
    data_files = sorted(p.name for p in tmp_path.glob("model.data-*"))
    assert len(data_files) > 2  # 96 + 80 bytes in shards of at most 40
    np.testing.assert_array_equal(tf.train.load_checkpoint(path).get_tensor("w"), value)
    if write_version is not None:
        tft = pytest.importorskip("tensorflow")
        np.testing.assert_array_equal(tft.train.load_checkpoint(path).get_tensor("w"), value)


def test_sharding_callback_needs_sharded() -> None:
    with tf.Graph().as_default(), pytest.raises(ValueError, match="sharded"):
        tf.train.Saver([tf.Variable(1.0)], experimental_sharding_callback=ShardByTaskPolicy())
