"""``tf.train.warm_start`` and ``tf.train.VocabInfo``: initialize a model's variables from
another model's checkpoint (flowmesh's or TensorFlow's), remapping the rows (or columns)
of vocabulary-indexed matrices when the vocabularies differ.

As TensorFlow's ``warm_starting_util``: variables without a ``VocabInfo`` go through
``init_from_checkpoint`` (their initializers become checkpoint reads). A variable with
one gets an initializer that reads the old matrix and, for each entry of the new
vocabulary (one token per line of ``new_vocab``), takes the old row of the same token
(among the first ``old_vocab_size`` lines of ``old_vocab``); cells without an old value
get ``backup_initializer`` values (zeros by default) in row-major order, then the
``num_oov_buckets`` out-of-vocabulary rows come from the backup initializer
(``checkpoint_ops._load_and_remap_matrix``). Partitioned variables remap per part. The
vocabulary files are read when ``warm_start`` is called (TensorFlow reads them when the
initializer runs).
"""

from __future__ import annotations

import collections
import logging
from typing import Any

import numpy as np

from flowmesh.checkpoint.reader import load_checkpoint, resolve_checkpoint
from flowmesh.core import dtypes
from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.ops import array_ops, gather_ops, init_ops, io_ops, math_ops, select_ops
from flowmesh.ops import resource_variable_ops as rv
from flowmesh.ops.constant_op import constant
from flowmesh.ops.nd_index_ops import scatter_nd
from flowmesh.ops.partitioned_variables import PartitionedVariable
from flowmesh.ops.variables import Variable
from flowmesh.train.checkpoint_utils import init_from_checkpoint

_log = logging.getLogger("flowmesh.train")


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How to remap a vocabulary-indexed variable when warm-starting (``tf.train.VocabInfo``).

    Args:
        new_vocab: the new vocabulary file (one token per line).
        new_vocab_size: how many of its lines the variable indexes.
        num_oov_buckets: out-of-vocabulary rows after the vocabulary (initialized anew).
        old_vocab: the vocabulary file the checkpointed matrix was indexed by.
        old_vocab_size: how many of its first lines count (-1: all).
        backup_initializer: initializer for what the checkpoint cannot provide (zeros).
        axis: 0 to remap rows (embeddings), 1 to remap columns (output classes).

    Raises:
        ValueError: ``axis`` is not 0 or 1.
    """

    def __new__(cls, new_vocab: str, new_vocab_size: int, num_oov_buckets: int, old_vocab: str,
                old_vocab_size: int = -1, backup_initializer: Any = None, axis: int = 0):
        if axis not in (0, 1):
            raise ValueError("The only supported values for the axis argument are 0 and 1.  "
                             f"Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


def warm_start(ckpt_to_initialize_from: str, vars_to_warm_start: Any = ".*",
               var_name_to_vocab_info: dict[str, VocabInfo] | None = None,
               var_name_to_prev_var_name: dict[str, str] | None = None) -> None:
    """Makes the selected variables' initializers load ``ckpt_to_initialize_from``.

    Args:
        ckpt_to_initialize_from: a checkpoint prefix or a directory (its latest checkpoint).
        vars_to_warm_start: a regular expression over TRAINABLE_VARIABLES names (``None``:
            only the variables of ``var_name_to_vocab_info``), a list of such expressions
            (over GLOBAL_VARIABLES), or a list of variables.
        var_name_to_vocab_info: variable name -> :class:`VocabInfo`.
        var_name_to_prev_var_name: variable name -> its name in the checkpoint.

    Raises:
        ValueError: a name in the two dicts matches no selected variable, a bad
            ``vars_to_warm_start``, or a checkpoint tensor that is missing or mis-shaped.
    """
    _log.info("Warm-starting from: %s", ckpt_to_initialize_from)
    grouped = _grouped_variables(vars_to_warm_start)
    vocab_infos = var_name_to_vocab_info or {}
    prev_names = var_name_to_prev_var_name or {}
    vocabless: dict[str, Any] = {}
    for var_name, parts in grouped.items():
        prev = prev_names.get(var_name)
        info = vocab_infos.get(var_name)
        if info:
            _warm_start_with_vocab(parts, info, ckpt_to_initialize_from, prev or var_name)
        elif vars_to_warm_start:
            value = parts[0] if len(parts) == 1 else parts
            key = prev or var_name
            if key in vocabless:  # one checkpoint tensor for two variables: a call each
                init_from_checkpoint(ckpt_to_initialize_from, {key: value})
            else:
                vocabless[key] = value
    if vocabless:
        init_from_checkpoint(ckpt_to_initialize_from, vocabless)
    _check_used("var_name_to_prev_var_name", prev_names, grouped)
    _check_used("var_name_to_vocab_info", vocab_infos, grouped)
    _log.info("Warm-started %d variables.", len(grouped))


def _check_used(what: str, mapping: dict[str, Any], grouped: dict[str, Any]) -> None:
    unused = set(mapping) - set(grouped)
    if unused:
        raise ValueError(f"You provided the following variables in {what} that were not used: "
                         f"{sorted(unused)}.  Perhaps you misspelled them?  Here is the list of "
                         f"viable variable names: {sorted(grouped)}")


def _grouped_variables(selection: Any) -> dict[str, list[Any]]:
    """Selected variables by name (a partitioned variable's parts under its full name)."""
    graph = get_default_graph()
    if isinstance(selection, str) or selection is None:
        found = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=selection)
    elif isinstance(selection, list) and all(isinstance(v, str) for v in selection):
        found = [v for s in selection for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES,
                                                                     scope=s)]
    elif isinstance(selection, list) and all(isinstance(v, (Variable, PartitionedVariable))
                                             for v in selection):
        found = [p for v in selection for p in (list(v) if isinstance(v, PartitionedVariable)
                                                 else [v])]
    else:
        raise ValueError("`vars_to_warm_start` must be a `list` of all `Variable` or all `str`, "
                         f"or a `str`.  Given: {selection!r}")
    grouped: dict[str, list[Any]] = {}
    for var in found:
        info = getattr(var, "_save_slice_info", None)
        grouped.setdefault(info.full_name if info is not None else var.op.name, []).append(var)
    return grouped


def _read_vocab(path: str, start: int, count: int, what: str) -> list[str]:
    from flowmesh.gfile import GFile

    with GFile(path, "r") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    end = len(lines) if count < 0 else start + count
    if end > len(lines):
        raise ValueError(f"{what} {path} has {len(lines)} entries, fewer than the {end} the "
                         "warm-start needs (check new_vocab_size / old_vocab_size)")
    return lines[start:end]


def _remapping(new_vocab: str, old_vocab: str, offset: int, count: int,
               old_size: int) -> np.ndarray:
    """Old index of each new entry ``offset .. offset+count`` (-1: not in the old vocab)."""
    old = {token: i for i, token in enumerate(_read_vocab(old_vocab, 0, old_size, "old_vocab"))}
    new = _read_vocab(new_vocab, offset, count, "new_vocab")
    return np.array([old.get(token, -1) for token in new], np.int64)


def _warm_start_with_vocab(parts: list[Any], info: VocabInfo, ckpt: str, prev_name: str) -> None:
    if not (info.new_vocab and info.new_vocab_size and ckpt and info.old_vocab):
        raise ValueError("Invalid args: Must provide all of [current_vocab_path, "
                         "current_vocab_size, prev_ckpt, prev_vocab_path].")
    prefix = resolve_checkpoint(ckpt)
    with load_checkpoint(prefix) as reader:
        shapes = reader.get_variable_to_shape_map()
    if prev_name not in shapes:
        raise ValueError(f"Tensor {prev_name} is not found in the checkpoint {prefix} (needed to "
                         f"warm-start with a VocabInfo).")
    total_rows = sum(p.shape.as_list()[0] for p in parts)
    for var in parts:
        shape = var.shape.as_list()
        if len(shape) != 2:
            raise ValueError(f"VocabInfo warm-starts 2-D variables; {var.op.name} has shape {shape}")
        slice_info = getattr(var, "_save_slice_info", None)
        offset = slice_info.var_offset[0] if slice_info is not None else 0
        remap = _Remap(prefix, prev_name, var.dtype, info, total_rows)
        value = remap.partition(shape, offset)
        with var.graph.colocate_with(var.op), var.graph.name_scope(var.op.name + "/"):
            var._initializer_value = rv.assign_variable_op(var.handle, value,
                                                           name="Assign_warm_start")
        var._initial_value = value


class _Remap:
    """TensorFlow's ``_load_and_remap_matrix_initializer`` for one variable."""

    def __init__(self, prefix: str, name: str, dtype: dtypes.DType, info: VocabInfo,
                 total_rows: int):
        self.prefix, self.name, self.dtype, self.info = prefix, name, dtype, info
        self.initializer = info.backup_initializer or init_ops.zeros_initializer()
        if info.axis == 0:
            self.row_vocab, self.rows = (info.new_vocab, info.old_vocab), info.new_vocab_size
            self.row_oov, self.col_vocab, self.col_oov = info.num_oov_buckets, None, 0
        else:
            self.row_vocab, self.rows, self.row_oov = None, total_rows, 0
            self.col_vocab, self.col_oov = (info.new_vocab, info.old_vocab), info.num_oov_buckets

    def _init(self, shape: list[int]) -> Any:
        return self.initializer(shape, dtype=self.dtype)

    def partition(self, shape: list[int], offset: int) -> Any:
        cols = shape[1] - self.col_oov
        if offset + shape[0] > self.rows + self.row_oov:
            raise ValueError(f"Trying to initialize {shape[0]} additional rows after {offset} "
                             f"rows have already been initialized, which would exceed expected "
                             f"total row count of {self.rows + self.row_oov}.")
        oov_rows = min(shape[0], max(0, offset + shape[0] - self.rows))
        load = shape[0] - oov_rows
        if load == 0:
            return self._init(shape)
        value = self._load(offset, load, cols)
        if oov_rows:
            value = array_ops.concat([value, self._init([oov_rows, cols])], 0)
        if self.col_oov:
            value = array_ops.concat([value, self._init([shape[0], self.col_oov])], 1)
        return value

    def _load(self, offset: int, rows: int, cols: int) -> Any:
        info = self.info
        row_map = (_remapping(*self.row_vocab, offset, rows, info.old_vocab_size) if self.row_vocab
                   else np.arange(offset, offset + rows, dtype=np.int64))
        col_map = (_remapping(*self.col_vocab, 0, cols, info.old_vocab_size) if self.col_vocab
                   else None)
        old = io_ops.restore_v2(self.prefix, [self.name], [""], [self.dtype],
                                name="warm_start_restore")[0]
        loaded = gather_ops.gather(old, constant(np.maximum(row_map, 0)))
        row_ok = row_map >= 0
        col_ok = np.ones(cols, bool) if col_map is None else col_map >= 0
        if col_map is not None:
            loaded = gather_ops.gather(loaded, constant(np.maximum(col_map, 0)), axis=1)
        missing = np.argwhere(~(row_ok[:, None] & col_ok[None, :]))
        if not len(missing):
            return loaded
        fill = array_ops.reshape(self._init([len(missing), 1]), [-1])
        filled = scatter_nd(constant(missing.astype(np.int64)), fill, [rows, cols])
        keep = math_ops.logical_and(constant(row_ok[:, None]), constant(col_ok[None, :]))
        return select_ops.where_v2(keep, loaded, filled)


__all__ = ["VocabInfo", "warm_start"]
