"""Auto-sharding a dataset across workers: FILE policy when possible, else DATA.

:func:`auto_shard` gives each of ``num_workers`` workers a disjoint part of a dataset:

* **FILE**: the dataset reads files (``TFRecordDataset``, ``TextLineDataset``,
  ``FixedLengthRecordDataset``) whose names come from a dataset of file names
  (``list_files``, ``from_tensor_slices([...])``, or the reader's own list) holding at
  least ``num_workers`` names known when the graph is built: the file names are sharded
  right after their source (before any shuffle), so worker ``i`` reads files ``i, i + n, ...``.
* **DATA**: otherwise every worker reads everything and keeps every ``n``-th element of the
  final dataset (``shard(n, i)`` at the end).

* **HINT**: every ``shard(SHARD_HINT, SHARD_HINT)`` in the dataset's chain of stages becomes
  ``shard(num_workers, index)``; nothing else is sharded.

The decision is logged (``auto-shard: FILE policy ...`` / ``DATA policy ...``), never a
silent fallback. ``options.experimental_distribute.auto_shard_policy`` (``AutoShardPolicy``)
forces a policy or turns sharding ``OFF``; FILE with too few files is an error.
"""

from __future__ import annotations

import numpy as np

from flowmesh import tf_logging as logging
from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.data.dataset import Dataset
from flowmesh.data.options import AutoShardPolicy
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import constant_value, make_tensor

READERS = frozenset({"TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset"})
FILE_FANOUT = frozenset({"FlatMapDataset", "InterleaveDataset", "ParallelInterleaveDatasetV4"})


def worker_of_tf_config() -> tuple[int, int]:
    """``(num_workers, index)`` of this process from ``TF_CONFIG`` (``(1, 0)`` without one)."""
    from flowmesh.distributed import tf_config

    config = tf_config.current()
    if config.cluster is None or config.task_type not in ("chief", "worker"):
        return 1, 0
    has_chief = "chief" in config.cluster.jobs
    index = (config.task_index or 0) + (1 if has_chief and config.task_type == "worker" else 0)
    return config.num_workers, 0 if config.task_type == "chief" else index


def auto_shard(dataset: Dataset, num_workers: int | None = None, index: int | None = None) -> Dataset:
    """The part of ``dataset`` worker ``index`` of ``num_workers`` should read (defaults:
    from ``TF_CONFIG``). Logs the policy it applies.

    Raises:
        InvalidArgumentError: a bad index, or FILE forced with fewer files than workers.
    """
    if num_workers is None or index is None:
        num_workers, index = worker_of_tf_config()
    if not 0 <= index < num_workers:
        raise InvalidArgumentError(f"auto_shard: worker index {index} is not in [0, {num_workers})")
    policy = dataset.options().experimental_distribute.auto_shard_policy
    policy = AutoShardPolicy.AUTO if policy is None else AutoShardPolicy(policy)
    if policy == AutoShardPolicy.HINT:
        return _replace_hints(dataset, num_workers, index)
    if num_workers == 1 or policy == AutoShardPolicy.OFF:
        return dataset
    source, count = _file_source(dataset) if policy != AutoShardPolicy.DATA else (None, None)
    if source is not None and count is not None and count >= num_workers:
        logging.info("auto-shard: FILE policy: worker %d of %d reads %d of %d files", index,
                     num_workers, len(range(index, count, num_workers)), count)
        return _rebuild(dataset, source, num_workers, index)
    if policy == AutoShardPolicy.FILE:
        raise InvalidArgumentError(
            f"auto_shard: FILE policy needs at least {num_workers} input files known when the "
            f"graph is built, found {count if count is not None else 'no file list'}; write more "
            "shards or use AutoShardPolicy.DATA")
    why = "no file list known when the graph is built" if count is None else \
        f"{count} files for {num_workers} workers"
    logging.info("auto-shard: DATA policy (%s): worker %d of %d keeps every %d-th element",
                 why, index, num_workers, num_workers)
    return dataset.shard(num_workers, index)


def _chain(variant: Tensor) -> list[Operation]:
    ops, op = [], variant.op
    while True:
        ops.append(op)
        if not op.inputs or op.inputs[0].dtype.name != "variant":
            return ops
        op = op.inputs[0].op


def _file_source(dataset: Dataset) -> tuple[Operation | None, int | None]:
    """The op to shard for FILE (the file-name slices, or a reader holding its list) and
    how many files it has (``None`` when unknown at graph-construction time)."""
    chain = _chain(dataset._variant_tensor)
    for i, op in enumerate(chain):
        if op.type in READERS and op.inputs[0].dtype.name != "variant":
            value = constant_value(op.inputs[0])
            return op, None if value is None else int(np.asarray(value).size)
        if op.type in READERS or (op.type in FILE_FANOUT and any(
                o.type in READERS for o in op.attrs["f"].get_operations())):
            return _names_source(chain[i + 1:])
    return None, None


def _names_source(chain: list[Operation]) -> tuple[Operation | None, int | None]:
    for op in chain:
        if op.type == "RepeatDataset":
            return None, None
        if op.type == "TensorSliceDataset":
            return op, _count(op.inputs[0])
        if op.type not in ("ShuffleDataset", "PrefetchDataset"):
            return None, None
    return None, None


def _count(files: Tensor) -> int | None:
    value = constant_value(files)
    if value is not None:
        return int(np.asarray(value).shape[0])
    if files.op.type == "MatchingFiles":
        pattern = constant_value(files.op.inputs[0])
        if pattern is not None:
            from flowmesh.formats import filesystem as fs

            items = np.asarray(pattern, dtype=object).reshape(-1)
            return sum(len(fs.glob(p.decode() if isinstance(p, bytes) else str(p))) for p in items)
    return None


def _rebuild(dataset: Dataset, source: Operation, num_workers: int, index: int) -> Dataset:
    """``dataset`` with ``source``'s file names sharded and the stages above it copied."""
    chain = _chain(dataset._variant_tensor)
    n = convert_to_tensor(num_workers, dtype=dtypes.int64)
    i = convert_to_tensor(index, dtype=dtypes.int64)
    if source.type in READERS:  # a reader with its own file list: keep files i, i + n, ...
        from flowmesh.ops.array_ops import reshape
        from flowmesh.ops.strided_slice_ops import strided_slice

        files = reshape(source.inputs[0], [-1])
        mine = strided_slice(files, [index], [2**31 - 1], [num_workers])
        variant = make_tensor(source.type, [mine, *source.inputs[1:]], dict(source.attrs),
                              name=source.type)
    else:
        variant = make_tensor("ShardDataset", [source.outputs[0], n, i],
                              {"output_types": source.attrs["output_types"],
                               "output_shapes": source.attrs["output_shapes"]}, name="AutoShard")
    for op in reversed(chain[:chain.index(source)]):
        variant = make_tensor(op.type, [variant, *op.inputs[1:]], dict(op.attrs), name=op.type)
    return Dataset(variant, dataset.element_spec, dataset.options())


SHARD_HINT = -1


def _is_hint(op: Operation) -> bool:
    if op.type != "ShardDataset":
        return False
    values = [constant_value(t) for t in op.inputs[1:]]
    return all(v is not None and int(np.asarray(v)) == SHARD_HINT for v in values)


def _replace_hints(dataset: Dataset, num_workers: int, index: int) -> Dataset:
    """``dataset`` with its ``shard(SHARD_HINT, SHARD_HINT)`` stages made ``shard(num_workers,
    index)`` (HINT policy)."""
    chain = _chain(dataset._variant_tensor)
    hints = [op for op in chain if _is_hint(op)]
    logging.info("auto-shard: HINT policy: %d shard hints become shard(%d, %d)", len(hints), num_workers, index)
    if not hints:
        return dataset
    n = convert_to_tensor(num_workers, dtype=dtypes.int64)
    i = convert_to_tensor(index, dtype=dtypes.int64)
    bottom = chain.index(hints[-1])
    variant = chain[bottom].inputs[0]
    for op in reversed(chain[:bottom + 1]):
        inputs = [n, i] if op in hints else list(op.inputs[1:])
        variant = make_tensor(op.type, [variant, *inputs], dict(op.attrs), name=op.type)
    return Dataset(variant, dataset.element_spec, dataset.options())
