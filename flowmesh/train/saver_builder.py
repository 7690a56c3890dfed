"""Builds the save and restore ops of a ``tf.train.Saver``.

The graph mirrors TensorFlow's (names included), so ``SaverDef`` names such as
``save/Const:0`` and ``save/restore_all`` work the same:

* ``save/Const`` - the checkpoint prefix, a ``PlaceholderWithDefault`` that ``save`` and
  ``restore`` feed;
* non-sharded: one ``save/SaveV2`` reading every variable; ``save/control_dependency``
  returns the prefix after it ran;
* sharded: per device, ``save/ShardedFilename_k`` and ``save/SaveV2_k`` placed on that
  CPU device (or the ``CPU:0`` of a GPU's task), writing one shard under ``PREFIX_temp_<uuid>/``; then
  ``save/MergeV2Checkpoints`` moves the shards next to the prefix and writes the index;
* restore: per device, one ``save/RestoreVariables_k`` reading the checkpoint straight into
  the storage of that device's variables (it consumes their handles, so it runs where they
  live), grouped in ``save/restore_all``. (TensorFlow uses ``RestoreV2`` + ``Assign``; the
  fused op saves a full copy of the model per restore.)

Variables are grouped by their requested device, so in a distributed session every ps
task saves and restores its own variables in parallel.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from flowmesh.checkpoint.slices import Slice
from flowmesh.core import dtypes
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import io_ops
from flowmesh.ops import resource_variable_ops as rv
from flowmesh.ops.constant_op import constant, placeholder_with_default
from flowmesh.ops.control_flow_ops import group, with_dependencies
from flowmesh.train.checkpoint_sharding import ShardableTensor, ShardingCallback
from flowmesh.train.python_state import PYTHON_STATE, PythonState


@dataclass
class Saveable:
    """One variable (or one slice of a partitioned variable) to save and restore.

    Attributes:
        name: its name in the checkpoint (the full name for slices).
        variable: the ``tf.Variable`` holding it.
        box: the slice it is of the full tensor, or None for a whole variable.
    """

    name: str
    variable: Any
    box: Slice | None = None
    python_state: PythonState | None = None
    feed: Tensor | None = None  # a PythonState's string, fed by ``Saver.save``

    @property
    def device(self) -> str:
        return "" if self.python_state is not None else self.variable.device

    @property
    def spec(self) -> str:
        return self.box.spec() if self.box is not None else ""

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.string if self.python_state is not None else self.variable.dtype.base_dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape([]) if self.python_state is not None else self.variable.shape


def saveables_from(var_list: Any) -> list[Saveable]:
    """Turns a Saver ``var_list`` (list or dict) into saveables with unique names.

    Accepted: ``tf.Variable``, partitioned variables (objects with
    ``_get_variable_list()``), variables carrying ``_save_slice_info``, and in a dict a
    list of slice variables under their full name or a ``PythonState`` (saved under
    ``<key>_py_state``, TensorFlow's name).

    Raises:
        TypeError: an entry is not a variable.
        ValueError: two entries have the same checkpoint name.
    """
    if isinstance(var_list, dict):
        items: Iterable[tuple[str | None, Any]] = var_list.items()
    else:
        items = ((None, v) for v in var_list)
    saveables: list[Saveable] = []
    seen: dict[tuple[str, str], Any] = {}
    for name, value in items:
        for saveable in _expand(name, value):
            key = (saveable.name, saveable.spec)
            if key in seen:
                raise ValueError(
                    f"At least two variables have the same name: {saveable.name}. Give them "
                    "different names, or pass var_list as a dict name -> variable.")
            seen[key] = saveable
            saveables.append(saveable)
    return saveables


def _expand(name: str | None, value: Any) -> list[Saveable]:
    if isinstance(value, PythonState):
        if name is None:
            raise TypeError(f"A PythonState in var_list needs a name: pass var_list as a dict "
                            f"name -> object (got {value!r} in a list).")
        return [Saveable(f"{name}_{PYTHON_STATE}", None, python_state=value)]
    parts = getattr(value, "_get_variable_list", None)
    if parts is not None:
        return [s for part in parts() for s in _expand(name or value.name, part)]
    if isinstance(value, (list, tuple)):
        if name is None:
            raise TypeError("A list of slices in var_list must be given under a name (use a dict).")
        return [s for part in value for s in _expand(name, part)]
    if not hasattr(value, "handle") or not hasattr(value, "initializer"):
        raise TypeError(
            f"Saver var_list entries must be tf.Variable or partitioned variables, got "
            f"{type(value).__name__} ({value!r}).")
    info = getattr(value, "_save_slice_info", None)
    if info is not None:
        box = Slice(tuple(int(d) for d in info.full_shape), tuple(int(d) for d in info.var_offset),
                    tuple(int(d) for d in info.var_shape))
        return [Saveable(name or info.full_name, value, box)]
    if name is None:
        name = value.op.name
    return [Saveable(name, value, None)]


def io_device(device: str) -> str:
    """Where the save/restore op for variables on ``device`` runs: that CPU device, or the
    ``CPU:0`` of the task of a GPU (or partially specified) device ("" when none is given)."""
    if not device:
        return ""
    spec = DeviceSpec.from_string(device)
    if spec.device_type == "CPU" and spec.device_index is not None:
        return spec.to_string()
    return spec.replace(device_type="CPU", device_index=0).to_string()


def group_by_device(saveables: Sequence[Saveable]) -> list[tuple[str, list[Saveable]]]:
    """Saveables grouped by their variable's device, in first-seen order; each group is
    keyed by the device its I/O ops run on (see :func:`io_device`)."""
    groups: dict[str, list[Saveable]] = {}
    for s in saveables:
        key = DeviceSpec.from_string(s.device).to_string() if s.device else ""
        groups.setdefault(key, []).append(s)
    return [(io_device(device), members) for device, members in groups.items()]


@dataclass
class BuiltSaver:
    """Names of what :func:`build` created (TensorFlow's ``SaverDef`` fields)."""

    filename_tensor: Tensor
    save_tensor: Tensor
    restore_op: Operation
    python_states: list[tuple[PythonState, Tensor, Tensor]]  # (object, save feed, restored value)


def build(saveables: Sequence[Saveable], *, sharded: bool, filename: str, reshape: bool,
          restore_sequentially: bool, name: str | None, tensor_bundle: bool = False,
          sharding_callback: ShardingCallback | None = None) -> BuiltSaver:
    """Creates the save and restore ops under the name scope ``name`` (default ``save``).

    With ``sharded`` and a ``sharding_callback``, each device's tensors are split into the
    shards the callback returns (one ``SaveV2`` per shard, on that device)."""
    graph = get_default_graph()
    with graph.name_scope(name or "save"):
        default = placeholder_with_default(constant(filename or "model", name="filename/input"),
                                           shape=[], name="filename")
        prefix = placeholder_with_default(default, shape=[], name="Const")
        groups = group_by_device(saveables)
        if sharded:
            save_tensor = _sharded_save(prefix, groups, tensor_bundle, sharding_callback)
        else:
            save_tensor = _single_save(prefix, saveables, tensor_bundle)
        states = [s for s in saveables if s.python_state is not None]
        groups = [(d, [s for s in members if s.python_state is None]) for d, members in groups]
        groups = [(d, members) for d, members in groups if members]
        if tensor_bundle and not sharded:
            restore_op = _restore_all_portable(prefix, groups, reshape, restore_sequentially)
        else:
            restore_op = _restore_all(prefix, groups, reshape, restore_sequentially)
        restored = io_ops.restore_v2(prefix, [s.name for s in states], [""] * len(states),
                                     [dtypes.string] * len(states), name="RestorePythonState") \
            if states else []
    return BuiltSaver(prefix, save_tensor, restore_op,
                      [(s.python_state, s.feed, value) for s, value in zip(states, restored)])


def _on(device: str) -> Any:
    """A device scope for ``device``, or no scope at all for ""."""
    return get_default_graph().device(device) if device else contextlib.nullcontext()


def _read(saveable: Saveable) -> Tensor:
    if saveable.python_state is not None:  # TensorFlow's PythonStringStateSaveable: fed on save
        saveable.feed = placeholder_with_default(constant(b"", name="py_state_default"), shape=[],
                                                 name="py_state")
        return saveable.feed
    var = saveable.variable
    with get_default_graph().colocate_with(var.handle.op):
        return rv.read_variable_op(var.handle, saveable.dtype, name="Read/ReadVariableOp")


def _save_op(prefix: Tensor, saveables: Sequence[Saveable], tensor_bundle: bool) -> Operation:
    return io_ops.save_v2(prefix, [s.name for s in saveables], [s.spec for s in saveables],
                          [_read(s) for s in saveables], tensor_bundle=tensor_bundle)


def _single_save(prefix: Tensor, saveables: Sequence[Saveable], tensor_bundle: bool) -> Tensor:
    save = _save_op(prefix, saveables, tensor_bundle)
    return with_dependencies([save], prefix, name="control_dependency")


def _shard_contents(groups: list[tuple[str, list[Saveable]]],
                    callback: ShardingCallback | None) -> list[tuple[str, list[tuple[str, str, Tensor]]]]:
    """(device, [(name, slice spec, tensor)]) per shard: one per device, or the callback's."""
    shards = []
    for device, members in groups:
        with _on(device):
            tensors = [_read(s) for s in members]
            if callback is None:
                shards.append((device, [(s.name, s.spec, t) for s, t in zip(members, tensors)]))
                continue
            shardable = [ShardableTensor(None, t, s.dtype, DeviceSpec.from_string(device), s.name,
                                         s.shape, s.spec, s.name, s.variable)
                         for s, t in zip(members, tensors)]
            result = callback(shardable)
            shards.extend((device, [(key, spec, tensor) for key, slices in shard.items()
                                    for spec, tensor in slices.items()]) for shard in result if shard)
    return shards


def _sharded_save(prefix: Tensor, groups: list[tuple[str, list[Saveable]]], tensor_bundle: bool,
                  callback: ShardingCallback | None = None) -> Tensor:
    temp = io_ops.checkpoint_temp_prefix(prefix, f"_temp_{uuid.uuid4().hex}/part")
    shards = _shard_contents(groups, callback)
    count = constant(len(shards), dtype=dtypes.int32, name="num_shards")
    shard_done: list[Tensor] = []
    last_device = ""
    for k, (device, entries) in enumerate(shards):
        with _on(device):
            shard_prefix = io_ops.sharded_filename(temp, constant(k, dtype=dtypes.int32, name="shard"), count)
            save = io_ops.save_v2(shard_prefix, [n for n, _, _ in entries], [s for _, s, _ in entries],
                                  [t for _, _, t in entries], tensor_bundle=tensor_bundle)
            shard_done.append(with_dependencies([save], shard_prefix, name="control_dependency"))
        last_device = device
    with _on(last_device):
        merge = io_ops.merge_v2_checkpoints(shard_done, prefix, delete_old_dirs=True)
        return with_dependencies([merge, *shard_done], prefix, name="Identity")


def _restore_all(prefix: Tensor, groups: list[tuple[str, list[Saveable]]], reshape: bool,
                 sequential: bool) -> Operation:
    """One ``RestoreVariables`` per device group, reading straight into the variables."""
    graph = get_default_graph()
    shards: list[Operation] = []
    path = io_ops.checkpoint_path_bytes(prefix)
    for _, members in groups:
        deps = shards[-1:] if sequential else []
        with graph.control_dependencies(deps):
            op = io_ops.restore_variables(
                path, [s.variable.handle for s in members], [s.name for s in members],
                [s.spec for s in members], [s.dtype for s in members], [s.shape for s in members],
                reshape, targets=[s.variable.op.name for s in members])
        with graph.control_dependencies([op]):
            shards.append(group(op, name="restore_shard"))
    return group(*shards, name="restore_all")


def _restore_all_portable(prefix: Tensor, groups: list[tuple[str, list[Saveable]]], reshape: bool,
                          sequential: bool) -> Operation:
    """TensorFlow's restore graph (``RestoreV2`` + ``AssignVariableOp`` per variable), used by
    ``Saver(write_version=SaverDef.V2)`` so an exported meta graph's saver runs in TensorFlow."""
    graph = get_default_graph()
    shards: list[Operation] = []
    for device, members in groups:
        deps = shards[-1:] if sequential else []
        with graph.control_dependencies(deps), _on(device):
            values = io_ops.restore_v2(
                prefix, [s.name for s in members], [s.spec for s in members], [s.dtype for s in members],
                [s.shape for s in members], reshape, targets=[s.variable.op.name for s in members])
            assigns = []
            for s, value in zip(members, values):
                with graph.colocate_with(s.variable.handle.op):
                    assigns.append(rv.assign_variable_op(s.variable.handle, value, name="AssignVariableOp"))
            shards.append(group(*assigns, name="restore_shard"))
    return group(*shards, name="restore_all")
