"""Checkpoint I/O as graph ops: ``SaveV2``, ``RestoreV2``, ``MergeV2Checkpoints``,
*(flowmesh)* ``RestoreVariables`` (restore straight into variable storage) and the file-name
helpers ``ShardedFilename``, ``ShardedFilespec``, ``CheckpointTempPrefix``,
``CheckpointPathBytes``.

They run on the device they are placed on, so in a distributed session a save op placed
on ``/job:ps/task:k`` writes task k's variables from task k's process (one shard per
task, in parallel), and a restore op there reads them back without moving the values
through another task. ``tf.train.Saver`` builds these ops; users rarely call them.

Differences from TensorFlow: ``tensor_names``/``shape_and_slices`` are attrs rather than
constant inputs; ``RestoreV2`` also takes the expected ``shapes`` (so a mismatch is an
``InvalidArgumentError`` naming the variable) and ``MergeV2Checkpoints`` takes the shard
prefixes as a list of scalar tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops._builders import make_op, make_tensor


def _check_string_scalar(op_type: str, tensor: Tensor, arg: str) -> None:
    if tensor.dtype != dtypes.string:
        raise TypeError(f"{op_type}: '{arg}' must be a string tensor, got {tensor.dtype.name}")
    if tensor.shape.rank not in (None, 0):
        raise InvalidArgumentError(None, None, f"{op_type}: '{arg}' must be a scalar, got shape {tensor.shape}")


def _check_lists(op_type: str, attrs: dict[str, Any], count: int) -> None:
    names, slices = attrs["tensor_names"], attrs["shape_and_slices"]
    if not len(names) == len(slices) == count:
        raise InvalidArgumentError(
            None, None,
            f"{op_type}: got {len(names)} tensor_names, {len(slices)} shape_and_slices and {count} "
            "tensors; they must have the same length.",
        )


# --- SaveV2 ---------------------------------------------------------------------------------------
def _save_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _check_string_scalar("SaveV2", inputs[0], "prefix")
    _check_lists("SaveV2", attrs, len(inputs) - 1)
    return []


register_op("SaveV2", _save_shape, not_differentiable=True, stateful=True)


def save_v2(prefix: Any, tensor_names: Sequence[str], shape_and_slices: Sequence[str],
            tensors: Sequence[Any], name: str | None = None, tensor_bundle: bool = False) -> Operation:
    """Writes ``tensors`` as a complete single-shard checkpoint at ``prefix``.

    Args:
        prefix: scalar string tensor, the checkpoint prefix.
        tensor_names: the name of each tensor in the checkpoint.
        shape_and_slices: ``""`` for whole tensors, or TensorFlow slice specs
            (``"10 4 0,5:-"``) for slices of partitioned variables.
        tensors: the values to save.
        name: op name.
        tensor_bundle: write TensorFlow's format (attr ``_tensor_bundle``) instead of
            flowmesh's.

    Returns:
        The op (it has no outputs).
    """
    prefix = convert_to_tensor(prefix, dtype=dtypes.string)
    values = [convert_to_tensor(t) for t in tensors]
    attrs = {"tensor_names": [str(n) for n in tensor_names],
             "shape_and_slices": [str(s) for s in shape_and_slices],
             "dtypes": [t.dtype for t in values]}
    if tensor_bundle:
        attrs["_tensor_bundle"] = True
    return make_op("SaveV2", [prefix, *values], attrs, name=name or "SaveV2")


# --- RestoreV2 -----------------------------------------------------------------------------------
def _restore_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    _check_string_scalar("RestoreV2", inputs[0], "prefix")
    _check_lists("RestoreV2", attrs, len(attrs["dtypes"]))
    shapes = attrs.get("shapes") or [unknown_shape()] * len(attrs["dtypes"])
    return [(dtypes.as_dtype(d), as_shape(s)) for d, s in zip(attrs["dtypes"], shapes)]


register_op("RestoreV2", _restore_shape, not_differentiable=True, stateful=True)


def restore_v2(prefix: Any, tensor_names: Sequence[str], shape_and_slices: Sequence[str],
               dtypes_: Sequence[Any], shapes: Sequence[Any] | None = None, reshape: bool = False,
               targets: Sequence[str] | None = None, name: str | None = None) -> list[Tensor]:
    """Reads tensors (or slices) from the checkpoint at ``prefix``.

    Args:
        prefix: scalar string tensor, the checkpoint prefix.
        tensor_names: names in the checkpoint.
        shape_and_slices: ``""`` or a slice spec per tensor.
        dtypes_: the expected dtype of each tensor.
        shapes: the expected shape of each tensor (or slice); a mismatch is an error
            naming the target unless ``reshape`` allows the same element count.
        reshape: accept a saved tensor with another shape but the same number of elements.
        targets: what each tensor restores (variable names), for error messages.
        name: op name.

    Returns:
        One tensor per name.
    """
    prefix = convert_to_tensor(prefix, dtype=dtypes.string)
    count = len(tensor_names)
    attrs = {
        "tensor_names": [str(n) for n in tensor_names],
        "shape_and_slices": [str(s) for s in shape_and_slices],
        "dtypes": [dtypes.as_dtype(d) for d in dtypes_],
        "shapes": [as_shape(s) for s in shapes] if shapes is not None else [unknown_shape()] * count,
        "reshape": bool(reshape),
        "targets": [str(t) for t in targets] if targets is not None else [str(n) for n in tensor_names],
    }
    return list(make_op("RestoreV2", [prefix], attrs, name=name or "RestoreV2").outputs)


# --- MergeV2Checkpoints -------------------------------------------------------------------------
def _merge_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    """flowmesh passes one scalar per shard prefix; TensorFlow's graphs (imported
    SavedModels and meta graphs) pass them as one string vector: both are accepted."""
    *prefixes, dest = inputs
    _check_string_scalar("MergeV2Checkpoints", dest, "destination_prefix")
    if len(prefixes) == 1 and prefixes[0].shape.rank == 1:
        if prefixes[0].dtype != dtypes.string:
            raise TypeError(f"MergeV2Checkpoints: 'checkpoint_prefixes' must be a string tensor, got "
                            f"{prefixes[0].dtype.name}")
        return []
    for i, t in enumerate(prefixes):
        _check_string_scalar("MergeV2Checkpoints", t, f"checkpoint_prefixes[{i}]")
    return []


register_op("MergeV2Checkpoints", _merge_shape, not_differentiable=True, stateful=True)


def merge_v2_checkpoints(checkpoint_prefixes: Sequence[Any], destination_prefix: Any,
                         delete_old_dirs: bool = True, name: str | None = None) -> Operation:
    """Merges single-shard checkpoints (one per device) into ``destination_prefix``."""
    prefixes = [convert_to_tensor(p, dtype=dtypes.string) for p in checkpoint_prefixes]
    dest = convert_to_tensor(destination_prefix, dtype=dtypes.string)
    return make_op("MergeV2Checkpoints", [*prefixes, dest], {"delete_old_dirs": bool(delete_old_dirs)},
                   name=name or "MergeV2Checkpoints")


# --- file names -------------------------------------------------------------------------------------
register_op("ShardedFilename", lambda inputs, attrs: [(dtypes.string, TensorShape([]))],
            not_differentiable=True)
register_op("ShardedFilespec", lambda inputs, attrs: [(dtypes.string, TensorShape([]))],
            not_differentiable=True)
register_op("CheckpointTempPrefix", lambda inputs, attrs: [(dtypes.string, TensorShape([]))],
            not_differentiable=True)


def sharded_filename(basename: Any, shard: Any, num_shards: Any, name: str | None = None) -> Tensor:
    """``basename-0000k-of-0000n`` (``tf.io.sharded_filename``)."""
    inputs = [convert_to_tensor(basename, dtype=dtypes.string),
              convert_to_tensor(shard, dtype=dtypes.int32),
              convert_to_tensor(num_shards, dtype=dtypes.int32)]
    return make_tensor("ShardedFilename", inputs, name=name or "ShardedFilename")


def sharded_filespec(basename: Any, num_shards: Any, name: str | None = None) -> Tensor:
    """``basename-?????-of-0000n``, the glob of all shards."""
    inputs = [convert_to_tensor(basename, dtype=dtypes.string),
              convert_to_tensor(num_shards, dtype=dtypes.int32)]
    return make_tensor("ShardedFilespec", inputs, name=name or "ShardedFilespec")


def checkpoint_temp_prefix(prefix: Any, suffix: str, name: str | None = None) -> Tensor:
    """*(flowmesh)* ``prefix + suffix``: where the shards of a sharded save are written
    before ``MergeV2Checkpoints`` moves them next to ``prefix``."""
    return make_tensor("CheckpointTempPrefix", [convert_to_tensor(prefix, dtype=dtypes.string)],
                       {"suffix": str(suffix)}, name=name or "CheckpointTempPrefix")


# --- fused restore into variables -------------------------------------------------------------
register_op("CheckpointPathBytes", lambda inputs, attrs: [(dtypes.uint8, TensorShape([None]))],
            not_differentiable=True)


def checkpoint_path_bytes(prefix: Any, name: str | None = None) -> Tensor:
    """*(flowmesh)* The UTF-8 bytes of a scalar string as a ``uint8`` vector.

    ``RestoreVariables`` takes the checkpoint prefix in this form so that it has no string
    input: string ops are pinned to CPUs, and the restore op must run wherever its
    variables live (a GPU included).
    """
    return make_tensor("CheckpointPathBytes", [convert_to_tensor(prefix, dtype=dtypes.string)],
                       name=name or "CheckpointPathBytes")


def _restore_variables_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    if inputs[0].dtype != dtypes.uint8:
        raise TypeError(f"RestoreVariables: the prefix must be uint8 bytes, got {inputs[0].dtype.name}")
    for t in inputs[1:]:
        if t.dtype != dtypes.resource:
            raise TypeError(f"RestoreVariables: expected variable handles, got {t.dtype.name} ({t.name})")
    _check_lists("RestoreVariables", attrs, len(inputs) - 1)
    return []


register_op("RestoreVariables", _restore_variables_shape, not_differentiable=True, stateful=True)


def restore_variables(prefix_bytes: Tensor, handles: Sequence[Tensor], tensor_names: Sequence[str],
                      shape_and_slices: Sequence[str], dtypes_: Sequence[Any], shapes: Sequence[Any],
                      reshape: bool = False, targets: Sequence[str] | None = None,
                      name: str | None = None) -> Operation:
    """*(flowmesh)* Reads checkpoint tensors straight into the storage of the variables
    behind ``handles`` (no intermediate copy), on the variables' device.

    Same checks and errors as :func:`restore_v2` (dtype, shape, missing keys, data loss).
    """
    attrs = {
        "tensor_names": [str(n) for n in tensor_names],
        "shape_and_slices": [str(s) for s in shape_and_slices],
        "dtypes": [dtypes.as_dtype(d) for d in dtypes_],
        "shapes": [as_shape(s) for s in shapes],
        "reshape": bool(reshape),
        "targets": [str(t) for t in targets] if targets is not None else [str(n) for n in tensor_names],
    }
    return make_op("RestoreVariables", [prefix_bytes, *handles], attrs, name=name or "RestoreVariables")
