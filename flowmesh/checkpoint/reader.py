"""Reading checkpoints: ``tf.train.NewCheckpointReader``, ``load_checkpoint``, ``list_variables``.

Every byte read is checked against the index's checksums, and every data file's size
against the index, so a truncated or corrupted checkpoint raises ``DataLossError``
naming the file instead of returning wrong values. A slice of a partitioned variable is
assembled from whichever saved slices overlap it, so a checkpoint can be restored into
a different partitioning (or into an unpartitioned variable) than it was saved from.
"""

from __future__ import annotations

import difflib
from typing import IO, Any

import numpy as np

from flowmesh.checkpoint import sstable, tensor_bundle
from flowmesh.checkpoint.encoding import decode_strings, empty_for
from flowmesh.checkpoint.index import CheckpointIndex, SliceEntry, TensorEntry, index_path
from flowmesh.checkpoint.safetensors_io import checksum_function, read_into
from flowmesh.checkpoint.slices import Slice
from flowmesh.checkpoint.state import latest_checkpoint, missing_checkpoint
from flowmesh.core import dtypes
from flowmesh.errors import DataLossError, NotFoundError
from flowmesh.formats import filesystem as fs


def read_index(prefix: str) -> CheckpointIndex:
    """The parsed index of the checkpoint at ``prefix``.

    Raises:
        NotFoundError: no checkpoint there (also a ValueError).
        DataLossError: the index is corrupted or truncated.
    """
    path = index_path(prefix)
    try:
        data = fs.read_bytes(path)
    except NotFoundError:
        raise missing_checkpoint(prefix) from None
    if sstable.is_table(data):  # written by TensorFlow (or by flowmesh in TensorFlow's format)
        return tensor_bundle.index_from_table(data, path)
    return CheckpointIndex.from_bytes(data, path)


class CheckpointReader:
    """Reads tensors from the checkpoint at ``prefix`` (``tf.train.NewCheckpointReader``).

    Args:
        prefix: a checkpoint prefix such as ``/tmp/model.ckpt-100``.

    Raises:
        NotFoundError: there is no checkpoint at ``prefix``.
        DataLossError: its index is corrupted.
    """

    def __init__(self, prefix: str):
        if isinstance(prefix, bytes):
            prefix = prefix.decode()
        self._prefix = str(prefix)
        self._index = read_index(self._prefix)
        self._files: dict[int, IO[bytes]] = {}

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def index(self) -> CheckpointIndex:
        return self._index

    # --- metadata (TensorFlow's CheckpointReader API) ------------------------------------------
    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: list(t.shape) for name, t in self._index.tensors.items()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        return {name: dtypes.as_dtype(t.dtype) for name, t in self._index.tensors.items()}

    def has_tensor(self, tensor_str: str) -> bool:
        return tensor_str in self._index.tensors

    def debug_string(self) -> bytes:
        lines = [f"{name} ({t.dtype}) {list(t.shape)}" for name, t in sorted(self._index.tensors.items())]
        return ("\n".join(lines) + "\n").encode()

    # --- values --------------------------------------------------------------------------------
    def get_tensor(self, tensor_str: str) -> Any:
        """The whole tensor as a NumPy array (``bytes`` objects for strings).

        Raises:
            NotFoundError: the checkpoint has no tensor of that name.
            DataLossError: its bytes are missing or corrupted.
        """
        value = self.read(tensor_str)
        return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value

    def entry(self, name: str) -> TensorEntry:
        """The index entry of ``name``. Raises NotFoundError naming close matches."""
        entry = self._index.tensors.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, list(self._index.tensors), n=3)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise NotFoundError(
                None, None,
                f"Key {name} not found in checkpoint {self._prefix}.{hint} It holds "
                f"{len(self._index.tensors)} tensors; list them with tf.train.list_variables.",
            )
        return entry

    def read(self, name: str, box: Slice | None = None) -> np.ndarray:
        """The tensor ``name``, or the part of it inside ``box``, as an array.

        Raises:
            NotFoundError: unknown name, or the saved slices do not cover ``box``.
            DataLossError: corrupted or truncated data.
        """
        entry = self.entry(name)
        want = box or Slice.whole(entry.shape)
        for s in entry.slices:
            if s.box == want:
                return self._read_slice(name, entry, s)
        out = np.empty(want.shape, dtype=object) if entry.dtype == "string" else \
            empty_for(entry.dtype, want.shape)
        covered = 0
        for s in entry.slices:
            common = s.box.intersect(want)
            if common is None:
                continue
            out[common.relative_to(want)] = self._read_slice(name, entry, s)[common.relative_to(s.box)]
            covered += common.num_elements
        if covered != want.num_elements:
            raise NotFoundError(
                None, None,
                f"Checkpoint {self._prefix} does not hold all of tensor '{name}' slice "
                f"{want.spec() or 'whole'}: its saved slices cover {covered} of {want.num_elements} "
                "elements.",
            )
        return out

    def read_into(self, name: str, box: Slice | None, out: np.ndarray) -> None:
        """Reads the tensor (or the part in ``box``) into ``out``, a C-contiguous array of
        the right shape and dtype: straight from the file when a saved slice matches.

        Raises:
            NotFoundError, DataLossError: as :meth:`read`.
            ValueError: ``out`` has the wrong shape, dtype or layout.
        """
        entry = self.entry(name)
        want = box or Slice.whole(entry.shape)
        if out.shape != want.shape or not out.flags.c_contiguous:
            raise ValueError(f"read_into: need a C-contiguous {list(want.shape)} array for '{name}', got "
                             f"{list(out.shape)}")
        if entry.dtype != "string":
            for s in entry.slices:
                if s.box == want:
                    self._read_slice(name, entry, s, out)
                    return
        out[...] = self.read(name, box)

    def _read_slice(self, name: str, entry: TensorEntry, s: SliceEntry,
                    out: np.ndarray | None = None) -> np.ndarray:
        f, path = self._file(s.shard)
        shard = self._index.shards[s.shard]
        if shard.checksum == tensor_bundle.CHECKSUM:
            return tensor_bundle.read_slice(f, path, name, entry.dtype, s, out)
        chunk, fn = shard.chunk_bytes, checksum_function(shard.checksum, path)
        what = f"tensor '{name}'"
        if entry.dtype == "string":
            blob_rec, offsets_rec = s.records
            blob = np.empty(blob_rec.stored.end - blob_rec.stored.begin, dtype=np.uint8)
            offsets = np.empty((offsets_rec.stored.end - offsets_rec.stored.begin) // 8, dtype=np.int64)
            read_into(f, path, blob_rec.stored, memoryview(blob), what, chunk, fn)
            read_into(f, path, offsets_rec.stored, memoryview(offsets.view(np.uint8)), what,
                      chunk, fn)
            try:
                return decode_strings(blob, offsets, s.box.shape, what)
            except ValueError as exc:
                raise DataLossError(None, None, f"Checkpoint file {path} is corrupted: {exc}.") from None
        if out is None:
            out = empty_for(entry.dtype, s.box.shape)
        read_into(f, path, s.records[0].stored, memoryview(out.reshape(-1).view(np.uint8)), what,
                  chunk, fn)
        return out

    def _file(self, shard: int) -> tuple[IO[bytes], str]:
        path = self._index.data_file(self._prefix, shard)
        f = self._files.get(shard)
        if f is None:
            try:
                actual = fs.size(path)
            except NotFoundError:
                raise DataLossError(
                    None, None,
                    f"Checkpoint {self._prefix} is incomplete: its data file {path} is missing. "
                    "Restore an earlier checkpoint.",
                ) from None
            expected = self._index.shards[shard].bytes
            bundle = self._index.shards[shard].checksum == tensor_bundle.CHECKSUM
            if actual < expected or (actual != expected and not bundle):
                raise DataLossError(
                    None, None,
                    f"Checkpoint data file {path} is {'truncated' if actual < expected else 'corrupted'}:"
                    f" it has {actual} bytes but the index records {expected}. Restore an earlier "
                    "checkpoint.",
                )
            f = self._files[shard] = fs.open_read(path)
        return f, path

    def close(self) -> None:
        files, self._files = self._files, {}
        for f in files.values():
            f.close()

    def __enter__(self) -> CheckpointReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def NewCheckpointReader(filepattern: str) -> CheckpointReader:  # noqa: N802 - TensorFlow's name
    """``tf.train.NewCheckpointReader``: a reader for the checkpoint at ``filepattern``."""
    return CheckpointReader(filepattern)


def resolve_checkpoint(ckpt_dir_or_file: str) -> str:
    """The checkpoint prefix of a prefix, or the latest checkpoint of a directory."""
    if fs.isdir(ckpt_dir_or_file):
        found = latest_checkpoint(ckpt_dir_or_file)
        if found is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory {ckpt_dir_or_file}")
        return found
    return ckpt_dir_or_file


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """``tf.train.load_checkpoint``: a reader for a checkpoint prefix or the latest one in a
    directory.

    Raises:
        ValueError: a directory without checkpoints.
        NotFoundError: no checkpoint at the prefix.
    """
    return CheckpointReader(resolve_checkpoint(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """``tf.train.list_variables``: sorted ``(name, shape)`` pairs of a checkpoint."""
    with load_checkpoint(ckpt_dir_or_file) as reader:
        return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """``tf.train.load_variable``: one tensor's value (a ``:0`` suffix is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    with load_checkpoint(ckpt_dir_or_file) as reader:
        return reader.get_tensor(name)
