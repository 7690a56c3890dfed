"""Writing checkpoints: one shard (``write_checkpoint``) and merging shards (``merge_checkpoints``).

The write protocol makes a crash at any moment harmless:

1. the data file is written to a temporary name, fsync-ed and renamed into place;
2. the index is written the same way, last: the checkpoint now exists;
3. data files of a replaced checkpoint with the same prefix are deleted.

A sharded save (one ``write_checkpoint`` per device, possibly in different processes,
into a temporary directory) is finished by ``merge_checkpoints``, which moves the shard
data files next to the final prefix and writes one index covering all of them.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from flowmesh import config as _config
from flowmesh.checkpoint import safetensors_io, sstable, tensor_bundle
from flowmesh.checkpoint.encoding import encode
from flowmesh.checkpoint.index import (
    CheckpointIndex,
    RecordEntry,
    ShardFile,
    SliceEntry,
    TensorEntry,
    data_suffix,
    index_path,
)
from flowmesh.checkpoint.safetensors_io import write_file
from flowmesh.checkpoint.slices import Slice
from flowmesh.errors import DataLossError, InvalidArgumentError, NotFoundError
from flowmesh.formats import filesystem as fs

# observer(data_file_path, bytes_written, total_bytes); used by flowmesh.testing.faults
WriteObserver = Callable[[str, int, int], None]
_observers: list[WriteObserver] = []
_observers_lock = threading.Lock()


def add_write_observer(observer: WriteObserver) -> Callable[[], None]:
    """Calls ``observer`` after every chunk written to a checkpoint data file.

    Returns:
        A function that removes the observer.
    """
    with _observers_lock:
        _observers.append(observer)

    def remove() -> None:
        with _observers_lock:
            if observer in _observers:
                _observers.remove(observer)

    return remove


@dataclass
class SaveSpec:
    """One tensor, or one slice of a partitioned tensor, to save.

    Attributes:
        name: the name in the checkpoint (a partitioned variable's full name).
        array: the values (a NumPy array; object array of bytes for strings).
        dtype: the flowmesh dtype name (``float32``, ``bfloat16``, ``string`` ...).
        box: the slice this array is, or None for a whole tensor.
    """

    name: str
    array: np.ndarray
    dtype: str
    box: Slice | None = None


def write_checkpoint(prefix: str, specs: Sequence[SaveSpec],
                     metadata: dict[str, str] | None = None) -> CheckpointIndex:
    """Writes a complete single-shard checkpoint at ``prefix``.

    Raises:
        InvalidArgumentError: duplicate names/slices, or a dtype that cannot be stored.
        PermissionDeniedError, ResourceExhaustedError...: the file system failed.
    """
    fs.makedirs(fs.dirname(prefix))
    previous = _existing_files(prefix)
    suffix = data_suffix(0, 1, uuid.uuid4().hex[:8] if previous is not None else "")
    tensors, records, owners = _plan(specs)
    path = prefix + suffix
    observers = _snapshot_observers()
    observer = (lambda done, total: [o(path, done, total) for o in observers]) if observers else None
    chunk, checksum = safetensors_io.CHUNK_BYTES, safetensors_io.DEFAULT_CHECKSUM
    with fs.atomic_write(path) as f:
        stored = write_file(f, records, {"format": "flowmesh"}, observer, chunk, checksum)
    total = stored[-1].end if stored else fs.size(path)
    for (entry_slice, _), record, where in zip(owners, records, stored):
        entry_slice.records.append(RecordEntry(record.key, where))
    index = CheckpointIndex([ShardFile(suffix, total, chunk, checksum)], tensors, dict(metadata or {}))
    _publish(prefix, index, previous)
    _config.debug(1, f"checkpoint {prefix}: {len(tensors)} tensors, {total / 1e6:.1f} MB")
    return index


def _plan(specs: Sequence[SaveSpec]) -> tuple[dict[str, TensorEntry], list, list]:
    """Index entries for ``specs`` plus the records to write and the slice owning each."""
    tensors: dict[str, TensorEntry] = {}
    records = []
    owners = []
    for spec in specs:
        shape = tuple(int(d) for d in spec.array.shape)
        box = spec.box or Slice.whole(shape)
        entry = tensors.get(spec.name)
        if entry is None:
            entry = tensors[spec.name] = TensorEntry(spec.dtype, box.full_shape)
        elif entry.dtype != spec.dtype or entry.shape != box.full_shape:
            raise InvalidArgumentError(
                None, None,
                f"Slices of tensor '{spec.name}' disagree: {entry.dtype}{list(entry.shape)} vs "
                f"{spec.dtype}{list(box.full_shape)}. Every slice of a partitioned variable must "
                "have the same dtype and full shape.",
            )
        if any(s.box == box for s in entry.slices) or (spec.box is None and entry.slices):
            raise InvalidArgumentError(
                None, None,
                f"Tensor '{spec.name}' is saved twice (slice {box.spec() or 'whole'}); give each "
                "variable a unique name in var_list.",
            )
        entry_slice = SliceEntry(0, box, [])
        entry.slices.append(entry_slice)
        key = spec.name if box.is_whole else f"{spec.name}[{_box_key(box)}]"
        for record in encode(key, spec.array, spec.dtype):
            records.append(record)
            owners.append((entry_slice, spec))
    return tensors, records, owners


def _box_key(box: Slice) -> str:
    return ",".join(f"{o}:{o + n}" for o, n in zip(box.offset, box.shape))


def _snapshot_observers() -> list[WriteObserver]:
    with _observers_lock:
        return list(_observers)


def _existing_files(prefix: str) -> list[str] | None:
    """Data files of a checkpoint already at ``prefix`` (None when there is none)."""
    path = index_path(prefix)
    if not fs.exists(path):
        return None
    try:
        old = CheckpointIndex.from_bytes(fs.read_bytes(path), path)
    except (DataLossError, NotFoundError):
        return []
    return [prefix + s.suffix for s in old.shards]


def _publish(prefix: str, index: CheckpointIndex, previous: list[str] | None) -> None:
    """Writes the index (the commit point), then deletes a replaced checkpoint's data."""
    fs.write_bytes_atomic(index_path(prefix), index.to_bytes())
    keep = {prefix + s.suffix for s in index.shards}
    for path in previous or ():
        if path not in keep:
            fs.remove(path)


def merge_checkpoints(shard_prefixes: Sequence[str], destination: str,
                      delete_old_dirs: bool = True) -> CheckpointIndex:
    """Combines single-shard checkpoints into one checkpoint at ``destination``.

    Shard ``k``'s data file becomes ``destination.data-0000k-of-0000n``; slices of one
    tensor saved by different shards (a partitioned variable spread over tasks) are
    listed together. The merged index is written last.

    Raises:
        NotFoundError: a shard's index is missing (its save did not finish).
        DataLossError: a shard's index is corrupted.
        InvalidArgumentError: two shards hold the same tensor slice.
    """
    from flowmesh.checkpoint.reader import read_index

    if shard_prefixes and _is_bundle(shard_prefixes[0]):
        tensor_bundle.merge_bundles(shard_prefixes, destination)
        for prefix in shard_prefixes if delete_old_dirs else ():
            _remove_if_empty(fs.dirname(prefix))
        return read_index(destination)
    shards = [read_index(p) for p in shard_prefixes]
    previous = _existing_files(destination)
    generation = uuid.uuid4().hex[:8] if previous is not None else ""
    n = len(shards)
    merged: dict[str, TensorEntry] = {}
    files: list[ShardFile] = []
    for k, (prefix, shard) in enumerate(zip(shard_prefixes, shards)):
        if shard.num_shards != 1:
            raise InvalidArgumentError(
                None, None, f"Cannot merge {prefix}: it already has {shard.num_shards} shards.")
        suffix = data_suffix(k, n, generation)
        fs.rename(shard.data_file(prefix, 0), destination + suffix)
        old = shard.shards[0]
        files.append(ShardFile(suffix, old.bytes, old.chunk_bytes, old.checksum))
        for name, entry in shard.tensors.items():
            _merge_entry(merged, name, entry, k, prefix)
    index = CheckpointIndex(files, merged, metadata=shards[0].metadata if shards else {})
    _publish(destination, index, previous)
    for prefix in shard_prefixes:
        fs.remove(index_path(prefix))
        if delete_old_dirs:
            _remove_if_empty(fs.dirname(prefix))
    return index


def _is_bundle(prefix: str) -> bool:
    try:
        return sstable.is_table(fs.read_bytes(index_path(prefix)))
    except NotFoundError:
        return False


def _merge_entry(merged: dict[str, TensorEntry], name: str, entry: TensorEntry, shard: int,
                 prefix: str) -> None:
    target = merged.get(name)
    if target is None:
        target = merged[name] = TensorEntry(entry.dtype, entry.shape)
    elif (target.dtype, target.shape) != (entry.dtype, entry.shape):
        raise InvalidArgumentError(
            None, None,
            f"Shard {prefix} saves '{name}' as {entry.dtype}{list(entry.shape)} but another shard "
            f"saved it as {target.dtype}{list(target.shape)}.",
        )
    for s in entry.slices:
        if any(t.box == s.box for t in target.slices):
            raise InvalidArgumentError(
                None, None, f"Tensor '{name}' slice {s.box.spec() or 'whole'} is saved by two shards.")
        target.slices.append(SliceEntry(shard, s.box, s.records))


def _remove_if_empty(directory: str) -> None:
    if directory and fs.isdir(directory) and not fs.glob(fs.join(directory, "*")):
        fs.remove_tree(directory)
