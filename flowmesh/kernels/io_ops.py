"""Kernels of ``flowmesh/ops/io_ops.py``: checkpoint save, restore and merge.

The values reach the checkpoint writer as zero-copy NumPy views of the torch storage
(the writer copies each chunk before checksumming and writing it, so a variable updated
concurrently never yields a checksum that disagrees with the bytes on disk).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.checkpoint.reader import CheckpointReader
from flowmesh.checkpoint.slices import Slice, parse_spec
from flowmesh.checkpoint.tensor_bundle import write_bundle
from flowmesh.checkpoint.writer import SaveSpec, merge_checkpoints, write_checkpoint
from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_torch, torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.contract.resources import VariableState


def scalar_string(value: Any) -> str:
    """A scalar string runtime value (0-d object array, bytes or str) as ``str``."""
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise InvalidArgumentError(None, None, f"expected a scalar string, got shape {list(value.shape)}")
        value = value.reshape(-1)[0]
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


def as_array(value: Any) -> np.ndarray:
    """A runtime value as a NumPy array, sharing memory with torch CPU storage."""
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            import ml_dtypes

            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return t.numpy()
    return np.asarray(value)


@kernel("SaveV2")
def _save_v2(ctx: KernelContext):
    names: list[str] = ctx.attr("tensor_names")
    specs: list[str] = ctx.attr("shape_and_slices")
    kinds: list[dtypes.DType] = ctx.attr("dtypes")
    write = write_bundle if ctx.attr("_tensor_bundle", False) else write_checkpoint

    def save(prefix: Any, *values: Any) -> None:
        to_write = []
        for name, spec, dtype, value in zip(names, specs, kinds, values):
            array = as_array(value)
            box = parse_spec(spec, tuple(array.shape), name)
            to_write.append(SaveSpec(name, array, dtype.name, box))
        write(scalar_string(prefix), to_write)

    return save


@kernel("RestoreV2")
def _restore_v2(ctx: KernelContext):
    names: list[str] = ctx.attr("tensor_names")
    boxes = [parse_spec(s, None, n) for s, n in zip(ctx.attr("shape_and_slices"), names)]
    kinds: list[dtypes.DType] = ctx.attr("dtypes")
    shapes = [s.as_list() if s.rank is not None else None for s in ctx.attr("shapes")]
    targets: list[str] = ctx.attr("targets")
    reshape = bool(ctx.attr("reshape", False))
    device = ctx.torch_device

    def restore(prefix: Any) -> Any:
        path = scalar_string(prefix)
        out = []
        with CheckpointReader(path) as reader:
            for i, name in enumerate(names):
                array = _read_one(reader, name, boxes[i], kinds[i], targets[i], path)
                array = _fit_shape(array, shapes[i], reshape, name, targets[i], path)
                out.append(to_torch(array, kinds[i], device))
        return out[0] if len(out) == 1 else tuple(out)

    return restore


def _read_one(reader: CheckpointReader, name: str, box: Slice | None, dtype: dtypes.DType,
              target: str, path: str) -> np.ndarray:
    entry = reader.entry(name)
    _check_entry(entry.dtype, entry.shape, box, dtype, name, target, path)
    return reader.read(name, box)


def _fit_shape(array: np.ndarray, expected: Sequence[int | None] | None, reshape: bool, name: str,
               target: str, path: str) -> np.ndarray:
    shape = _target_shape(tuple(array.shape), expected, reshape, name, target, path)
    return array if shape == tuple(array.shape) else array.reshape(shape)


@kernel("CheckpointPathBytes")
def _path_bytes(ctx: KernelContext):
    return lambda prefix: torch.from_numpy(np.frombuffer(scalar_string(prefix).encode(), dtype=np.uint8).copy())


@kernel("RestoreVariables")
def _restore_variables(ctx: KernelContext):
    names: list[str] = ctx.attr("tensor_names")
    boxes = [parse_spec(s, None, n) for s, n in zip(ctx.attr("shape_and_slices"), names)]
    kinds: list[dtypes.DType] = ctx.attr("dtypes")
    shapes = [s.as_list() if s.rank is not None else None for s in ctx.attr("shapes")]
    targets: list[str] = ctx.attr("targets")
    reshape = bool(ctx.attr("reshape", False))
    device = ctx.torch_device

    def restore(prefix: Any, *states: VariableState) -> None:
        path = as_array(prefix).tobytes().decode()
        with CheckpointReader(path) as reader:
            for i, state in enumerate(states):
                _restore_one(reader, state, names[i], boxes[i], kinds[i], shapes[i], targets[i], reshape,
                             path, device)

    return restore


def _restore_one(reader: CheckpointReader, state: VariableState, name: str, box: Slice | None,
                 dtype: dtypes.DType, expected: list[int | None] | None, target: str, reshape: bool,
                 path: str, device: torch.device) -> None:
    """Restores one variable, reading into its existing storage when the layout allows."""
    entry = reader.entry(name)
    _check_entry(entry.dtype, entry.shape, box, dtype, name, target, path)
    stored_shape = box.shape if box is not None else tuple(entry.shape)
    shape = _target_shape(stored_shape, expected, reshape, name, target, path)
    current = state.value
    if (isinstance(current, torch.Tensor) and tuple(current.shape) == shape and current.device.type == "cpu"
            and current.dtype == torch_dtype(dtype) and current.is_contiguous() and dtype != dtypes.string):
        reader.read_into(name, box, as_array(current).reshape(stored_shape))
        return
    value = reader.read(name, box).reshape(shape)
    restored = to_torch(value, dtype, device)
    if isinstance(current, torch.Tensor) and tuple(current.shape) == shape and current.dtype == restored.dtype:
        current.copy_(restored)
    else:
        state.value = restored


def _check_entry(saved_dtype: str, saved_shape: Sequence[int], box: Slice | None, dtype: dtypes.DType,
                 name: str, target: str, path: str) -> None:
    if saved_dtype != dtype.name:
        raise InvalidArgumentError(
            None, None,
            f"tensor_name = {name}; expected dtype {dtype.name} does not equal original dtype "
            f"{saved_dtype}: variable '{target}' is {dtype.name} but checkpoint {path} saved it as "
            f"{saved_dtype}. Cast the variable or restore into a variable of dtype {saved_dtype}.",
        )
    if box is not None and tuple(saved_shape) != box.full_shape:
        raise InvalidArgumentError(
            None, None,
            f"Partitioned variable '{target}' has full shape {list(box.full_shape)} but checkpoint "
            f"{path} saved '{name}' with shape {list(saved_shape)}.",
        )


def _target_shape(stored: tuple[int, ...], expected: Sequence[int | None] | None, reshape: bool, name: str,
                  target: str, path: str) -> tuple[int, ...]:
    """The shape the restored value takes: the stored one, or the variable's with reshape."""
    if expected is None:
        return stored
    if len(expected) == len(stored) and all(e is None or e == a for e, a in zip(expected, stored)):
        return stored
    if reshape and None not in expected and int(np.prod(expected)) == int(np.prod(stored)):
        return tuple(int(d) for d in expected)
    hint = ("" if reshape else " (tf.train.Saver(reshape=True) restores a tensor with the same "
            "number of elements into a different shape)")
    raise InvalidArgumentError(
        None, None,
        f"Restoring variable '{target}' from checkpoint {path} failed: the checkpoint holds "
        f"'{name}' with shape {list(stored)} but the variable has shape "
        f"{[-1 if d is None else d for d in expected]}. The graph does not match the checkpoint{hint}.",
    )


@kernel("MergeV2Checkpoints")
def _merge(ctx: KernelContext):
    delete_old_dirs = bool(ctx.attr("delete_old_dirs", True))

    def merge(*args: Any) -> None:
        prefixes = [scalar_string(p) for a in args[:-1] for p in np.asarray(a, dtype=object).reshape(-1)]
        merge_checkpoints(prefixes, scalar_string(args[-1]), delete_old_dirs)

    return merge


def _as_int(value: Any) -> int:
    return int(value.item() if hasattr(value, "item") else value)


@kernel("ShardedFilename")
def _sharded_filename(ctx: KernelContext):
    def name(basename: Any, shard: Any, num_shards: Any) -> np.ndarray:
        text = f"{scalar_string(basename)}-{_as_int(shard):05d}-of-{_as_int(num_shards):05d}"
        return np.array(text.encode(), dtype=object)

    return name


@kernel("ShardedFilespec")
def _sharded_filespec(ctx: KernelContext):
    def spec(basename: Any, num_shards: Any) -> np.ndarray:
        return np.array(f"{scalar_string(basename)}-?????-of-{_as_int(num_shards):05d}".encode(), dtype=object)

    return spec


@kernel("CheckpointTempPrefix")
def _temp_prefix(ctx: KernelContext):
    suffix = ctx.attr("suffix")

    def prefix(base: Any) -> np.ndarray:
        return np.array((scalar_string(base) + suffix).encode(), dtype=object)

    return prefix
