"""``tf.train.Saver``: save and restore variables as checkpoints.

Example:
    >>> w = tf.Variable(tf.zeros([784, 10]), name="w")
    >>> saver = tf.train.Saver(max_to_keep=3)
    >>> with tf.Session() as sess:
    ...     sess.run(tf.global_variables_initializer())
    ...     path = saver.save(sess, "/tmp/run/model.ckpt", global_step=100)  # ".../model.ckpt-100"
    ...     saver.restore(sess, tf.train.latest_checkpoint("/tmp/run"))

A checkpoint ``PREFIX`` is ``PREFIX.index`` plus ``PREFIX.data-0000k-of-0000n`` files
(safetensors; see ``flowmesh.checkpoint``) and ``PREFIX.meta``. Saves are atomic: a crash
in the middle of one leaves the previous checkpoints and the ``checkpoint`` state file
valid. With ``sharded=True`` every device (every ps task) writes its own shard in
parallel, and the shards are merged into one checkpoint; restores run on each variable's
own device. In a cluster the path must therefore be reachable from every ps task (shared
storage or an fsspec URL such as ``s3://``), as in TensorFlow.

Checkpoint formats: ``restore`` (and ``NewCheckpointReader``, ``list_variables``,
``init_from_checkpoint``) reads both flowmesh's format and TensorFlow's tensor bundle,
whichever the index file is. ``save`` writes flowmesh's format by default (safetensors
data, chunked checksums) and TensorFlow's tensor bundle when the Saver is created with an
explicit ``write_version=tf.train.SaverDef.V2``, so TensorFlow's own ``Saver`` can restore
it. (TensorFlow's default *is* V2; flowmesh's default, ``write_version=None``, is its own
format, and code that names V2 explicitly gets files TensorFlow reads.)

Deliberate differences from TensorFlow: a missing parent directory is
created instead of being an error, and ``restore`` on a missing checkpoint raises a
``NotFoundError`` that is also a ``ValueError`` (TensorFlow's type).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

from flowmesh.checkpoint.state import (
    checkpoint_exists,
    get_checkpoint_mtimes,
    missing_checkpoint,
    remove_checkpoint,
    update_checkpoint_state,
)
from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.errors import InvalidArgumentError, NotFoundError, OpError
from flowmesh.formats import filesystem as fs
from flowmesh.train import meta_graph, saver_builder
from flowmesh.train.training_util import global_step as _read_global_step

logger = logging.getLogger("flowmesh.train")
_now = time.time  # tests may replace the clock


@dataclass
class SaverDef:
    """TensorFlow's ``SaverDef``: the names a Saver runs, plus its policy."""

    LEGACY = 0
    V1 = 1
    V2 = 2

    filename_tensor_name: str = ""
    save_tensor_name: str = ""
    restore_op_name: str = ""
    max_to_keep: int = 5
    sharded: bool = False
    keep_checkpoint_every_n_hours: float = 10000.0
    version: int = 2

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> SaverDef:
        return SaverDef(**{k: v for k, v in data.items() if k in SaverDef.__dataclass_fields__})


class Saver:
    """Saves and restores variables (``tf.train.Saver``).

    Args:
        var_list: variables to save: a list (checkpoint names are the variables' op
            names; partitioned variables are saved under their full name with slice
            info) or a dict ``name -> variable``; a dict value may be a
            ``tf.train.experimental.PythonState``, saved as the string its ``serialize()``
            returns under ``<name>_py_state`` and handed to its ``deserialize`` by
            ``restore``. Default: every global variable.
        reshape: restore into variables of a different shape with the same number of
            elements.
        sharded: one save op per device (ps task), writing in parallel, then merged.
        max_to_keep: how many recent checkpoints to keep (None or 0: keep all).
        keep_checkpoint_every_n_hours: additionally keep one checkpoint per this period.
        name: the name scope of the saver's ops (default ``save``).
        restore_sequentially: restore one device after another (less peak memory).
        saver_def: build from an existing ``SaverDef`` (e.g. from a meta graph).
        defer_build: build the ops later with :meth:`build`.
        allow_empty: allow a saver with no variables (its save/restore do nothing).
        write_version: None (flowmesh's format) or ``SaverDef.V2`` (TensorFlow's tensor
            bundle); V1 is not supported (warns and writes flowmesh's format).
        pad_step_number: write ``model.ckpt-00000100`` instead of ``model.ckpt-100``.
        save_relative_paths: store paths relative to the directory in the state file.
        filename: the default prefix when ``save_path`` is not fed to the ops directly.
        experimental_sharding_callback: with ``sharded=True``, a
            ``tf.train.experimental.ShardingCallback`` splitting each device's tensors into
            shard files (flowmesh's addition; TensorFlow takes it in ``CheckpointOptions``
            of ``tf.train.Checkpoint`` only). Restores are unchanged.

    Raises:
        ValueError: no variables to save (and ``allow_empty`` is False), duplicate names.
        TypeError: ``var_list`` holds something that is not a variable.
    """

    def __init__(self, var_list: Any = None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: int | None = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: str | None = None, restore_sequentially: bool = False,
                 saver_def: SaverDef | None = None, builder: Any = None, defer_build: bool = False,
                 allow_empty: bool = False, write_version: int | None = None,
                 pad_step_number: bool = False, save_relative_paths: bool = False,
                 filename: str | None = None, experimental_sharding_callback: Any = None):
        if defer_build and var_list is not None:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either set "
                             "defer_build=False or var_list=None.")
        if write_version not in (SaverDef.V2, None):
            logger.warning("flowmesh cannot write V1 checkpoints; write_version=%s ignored", write_version)
        self._tensor_bundle = write_version == SaverDef.V2
        if builder is not None:
            raise InvalidArgumentError(None, None, "Saver(builder=...) is not supported by flowmesh.")
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep or 0
        self._keep_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._sharding_callback = experimental_sharding_callback
        if experimental_sharding_callback is not None and not sharded:
            raise ValueError("experimental_sharding_callback needs Saver(sharded=True).")
        self._is_built = False
        self._is_empty = False
        self._python_states: list[tuple[Any, Any, Any]] = []
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._last_preserved_timestamp = 0.0
        self._next_checkpoint_time = _now() + keep_checkpoint_every_n_hours * 3600
        if saver_def is not None:
            self._is_built = True
            self._max_to_keep = saver_def.max_to_keep
            self._keep_hours = saver_def.keep_checkpoint_every_n_hours
            self._sharded = saver_def.sharded
            self._next_checkpoint_time = _now() + self._keep_hours * 3600
        elif not defer_build:
            self.build()

    # --- building -----------------------------------------------------------------------------
    def build(self) -> None:
        """Creates the save/restore ops (call once when ``defer_build=True``)."""
        if self._is_built:
            return
        self._is_built = True
        var_list = self._var_list
        if var_list is None:
            graph = get_default_graph()
            var_list = graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + \
                graph.get_collection(GraphKeys.SAVEABLE_OBJECTS)
        saveables = saver_builder.saveables_from(var_list)
        if not saveables:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        built = saver_builder.build(
            saveables, sharded=self._sharded, filename=self._filename or "model",
            reshape=self._reshape, restore_sequentially=self._restore_sequentially, name=self._name,
            tensor_bundle=self._tensor_bundle, sharding_callback=self._sharding_callback)
        self._python_states = built.python_states
        self.saver_def = SaverDef(
            filename_tensor_name=built.filename_tensor.name,
            save_tensor_name=built.save_tensor.name,
            restore_op_name=built.restore_op.name,
            max_to_keep=self._max_to_keep,
            sharded=self._sharded,
            keep_checkpoint_every_n_hours=self._keep_hours,
        )

    def as_saver_def(self) -> SaverDef | None:
        return self.saver_def

    to_proto = as_saver_def

    # --- bookkeeping --------------------------------------------------------------------------
    @property
    def last_checkpoints(self) -> list[str]:
        """The kept checkpoint prefixes, oldest first."""
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: list[str]) -> None:
        self._last_checkpoints = [(p, 0.0) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list[tuple[str, float]]) -> None:
        self._last_checkpoints = [(str(p), float(t)) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths: list[str]) -> None:
        """Adopts existing checkpoints (e.g. after a restart) so ``max_to_keep`` covers them."""
        with_times = []
        for path in checkpoint_paths:
            try:
                mtimes = get_checkpoint_mtimes([path])
            except NotFoundError:
                continue
            if mtimes:
                with_times.append((path, mtimes[0]))
        self.set_last_checkpoints_with_time(with_times)

    def _record_last_checkpoint(self, path: str) -> None:
        if not self._max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, _now()))
        if len(self._last_checkpoints) > self._max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if stamp > self._next_checkpoint_time:
                self._next_checkpoint_time += self._keep_hours * 3600
                self._last_preserved_timestamp = stamp
                logger.info("Keeping checkpoint %s (keep_checkpoint_every_n_hours)", path)
                continue
            try:
                remove_checkpoint(path, SaverDef.V2, meta_graph_suffix)
            except OpError as exc:
                logger.warning("Ignoring: could not delete old checkpoint %s: %s", path, exc)

    # --- save / restore -----------------------------------------------------------------------
    def save(self, sess: Any, save_path: str, global_step: Any = None, latest_filename: str | None = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False, save_debug_info: bool = False) -> str | None:
        """Saves the variables; returns the checkpoint prefix (``save_path-<step>``).

        Args:
            sess: the session holding the variables.
            save_path: the prefix, e.g. ``/tmp/run/model.ckpt`` (local path or URL).
            global_step: an int or a tensor/variable; appended as ``-<step>``.
            latest_filename: the state file's name (default ``checkpoint``).
            meta_graph_suffix: extension of the meta graph file.
            write_meta_graph: also write ``PREFIX.meta`` (skipped with a warning when the
                graph holds ops that cannot be serialized, such as ``py_func``).
            write_state: update the state file and delete checkpoints beyond
                ``max_to_keep``.

        Returns:
            The checkpoint prefix, or None for an empty saver.

        Raises:
            RuntimeError: ``defer_build`` and :meth:`build` was not called.
            ValueError: ``latest_filename`` has path components or collides with the prefix.
            OpError: writing failed (``PermissionDeniedError``, ``ResourceExhaustedError``).
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if fs.dirname(latest_filename):
            raise ValueError("'latest_filename' must not contain path components")
        save_path = save_path.decode() if isinstance(save_path, bytes) else str(save_path)
        checkpoint_file = self._checkpoint_name(sess, save_path, global_step, latest_filename)
        save_dir = fs.dirname(save_path)
        model_checkpoint_path = None
        if not self._is_empty:
            feeds = {self.saver_def.filename_tensor_name: checkpoint_file}
            feeds.update({feed: state.serialize() for state, feed, _ in self._python_states})
            result = sess.run(self.saver_def.save_tensor_name, feeds)
            model_checkpoint_path = result.decode() if isinstance(result, bytes) else str(result)
            if write_state:
                self._record_last_checkpoint(model_checkpoint_path)
                update_checkpoint_state(
                    save_dir, model_checkpoint_path, self.last_checkpoints, latest_filename,
                    all_model_checkpoint_timestamps=[t for _, t in self._last_checkpoints] or None,
                    last_preserved_timestamp=self._last_preserved_timestamp,
                    save_relative_paths=self._save_relative_paths)
                self._maybe_delete_old_checkpoints(meta_graph_suffix)
        if write_meta_graph:
            meta_file = f"{checkpoint_file}.{meta_graph_suffix}"
            try:
                self.export_meta_graph(meta_file, graph=getattr(sess, "graph", None))
            except InvalidArgumentError as exc:  # e.g. a py_func: the checkpoint itself is fine
                logger.warning("Checkpoint %s saved, but not its meta graph %s: %s",
                               model_checkpoint_path or checkpoint_file, meta_file, exc.message)
        return model_checkpoint_path

    def _checkpoint_name(self, sess: Any, save_path: str, global_step: Any, latest_filename: str) -> str:
        if global_step is None:
            if fs.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                                 f"'{save_path}'")
            return save_path
        if not isinstance(global_step, int):
            global_step = _read_global_step(sess, global_step)
        return f"{save_path}-{global_step:08d}" if self._pad_step_number else f"{save_path}-{global_step}"

    def restore(self, sess: Any, save_path: str) -> None:
        """Restores the variables from the checkpoint ``save_path``.

        Raises:
            ValueError: ``save_path`` is None.
            NotFoundError: no checkpoint at ``save_path`` (also a ValueError), or a
                variable missing from it.
            InvalidArgumentError: a variable's shape or dtype differs from the checkpoint.
            DataLossError: the checkpoint is truncated or corrupted.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = save_path.decode() if isinstance(save_path, bytes) else str(save_path)
        if not checkpoint_exists(prefix):
            raise missing_checkpoint(prefix)
        logger.info("Restoring parameters from %s", prefix)
        try:
            _, strings = sess.run([self.saver_def.restore_op_name,
                                   [value for _, _, value in self._python_states]],
                                  {self.saver_def.filename_tensor_name: prefix})
        except NotFoundError as err:
            raise _wrap_restore_error(err, "a Variable name or other graph key that is missing") from err
        except InvalidArgumentError as err:
            raise _wrap_restore_error(err, "a mismatch between the current graph and the graph") from err
        for (state, _, _), string in zip(self._python_states, strings):
            state.deserialize(string)

    def export_meta_graph(self, filename: str | None = None, collection_list: Any = None,
                          as_text: bool = False, export_scope: str | None = None,
                          clear_devices: bool = False, clear_extraneous_savers: bool = False,
                          strip_default_attrs: bool = False, save_debug_info: bool = False,
                          graph: Any = None) -> Any:
        """Writes the graph, this saver's ``SaverDef`` and the collections to ``filename``
        as a ``MetaGraphDef`` (returned) that TensorFlow and flowmesh both import."""
        return meta_graph.export_meta_graph(filename, graph=graph, saver_def=self.saver_def,
                                            collection_list=collection_list,
                                            clear_devices=clear_devices, as_text=as_text)


def import_meta_graph(meta_graph_or_file: Any, clear_devices: bool = False,
                      import_scope: str | None = None, **kwargs: Any) -> Saver | None:
    """``tf.train.import_meta_graph``: adds a saved meta graph (a ``.meta`` path or an
    :func:`~flowmesh.train.meta_graph.export_meta_graph` dict) to the default graph and
    returns the ``Saver`` it was saved with (None when it had none). See
    :func:`flowmesh.train.meta_graph.import_graph` for the arguments and errors."""
    saver_def = meta_graph.import_graph(meta_graph_or_file, clear_devices, import_scope)
    return None if saver_def is None else Saver(saver_def=SaverDef.from_dict(saver_def))


def _wrap_restore_error(err: OpError, cause: str) -> OpError:
    message = (f"Restoring from checkpoint failed. This is most likely due to {cause} from the "
               "checkpoint. Please ensure that you have not altered the graph expected based on "
               f"the checkpoint. Original error:\n\n{err.message}")
    return type(err)(err.node_def, err.op, message)
