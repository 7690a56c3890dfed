"""Checkpoint storage: safetensors data files, a checksummed index, atomic writes (through
``flowmesh.formats.filesystem``).

=========================  =========================================================
module                     what it holds
=========================  =========================================================
``safetensors_io``         streaming safetensors reader/writer with chunk CRC32s
``encoding``               dtype -> safetensors records (strings, complex, bfloat16)
``slices``                 ``shape_and_slices`` specs of partitioned variables
``index``                  the ``PREFIX.index`` file
``writer``                 ``write_checkpoint``, ``merge_checkpoints`` (sharded saves)
``reader``                 ``CheckpointReader``, ``load_checkpoint``, ``list_variables``
``state``                  the ``checkpoint`` state file, ``latest_checkpoint`` ...
=========================  =========================================================

The graph-level API (``tf.train.Saver``) lives in ``flowmesh.train.saver``; the save and
restore ops in ``flowmesh.ops.io_ops``.
"""

from flowmesh.checkpoint.reader import (
    CheckpointReader,
    NewCheckpointReader,
    list_variables,
    load_checkpoint,
    load_variable,
    read_index,
)
from flowmesh.checkpoint.state import (
    CheckpointNotFoundError,
    CheckpointState,
    checkpoint_exists,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    remove_checkpoint,
    update_checkpoint_state,
)
from flowmesh.checkpoint.writer import SaveSpec, add_write_observer, merge_checkpoints, write_checkpoint

__all__ = [
    "CheckpointNotFoundError",
    "CheckpointReader",
    "CheckpointState",
    "NewCheckpointReader",
    "SaveSpec",
    "add_write_observer",
    "checkpoint_exists",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "merge_checkpoints",
    "read_index",
    "remove_checkpoint",
    "update_checkpoint_state",
    "write_checkpoint",
]
