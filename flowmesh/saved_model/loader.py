"""``tf.saved_model.loader.load``: imports a SavedModel's meta graph (chosen by tags) into a
session's graph, restores its variables and runs its main op."""

from __future__ import annotations

import os
from typing import Any

from flowmesh import gfile
from flowmesh.errors import DataLossError, NotFoundError
from flowmesh.saved_model import constants
from flowmesh.saved_model._proto import SavedModel


def maybe_saved_model_directory(export_dir: str) -> bool:
    """True when ``export_dir`` holds a ``saved_model.pb`` or ``.pbtxt``."""
    return any(gfile.Exists(os.path.join(export_dir, name))
               for name in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT))


def read_saved_model(export_dir: str) -> Any:
    """The ``SavedModel`` protobuf of ``export_dir``.

    Raises:
        NotFoundError: no saved_model.pb(txt). DataLossError: the file does not parse.
    """
    from google.protobuf import message, text_format

    pb = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    txt = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    saved = SavedModel()
    try:
        if gfile.Exists(pb):
            with gfile.GFile(pb, "rb") as f:
                saved.ParseFromString(f.read())
        elif gfile.Exists(txt):
            with gfile.GFile(txt, "r") as f:
                text_format.Parse(f.read(), saved)
        else:
            raise NotFoundError(None, None, f"SavedModel file does not exist at: {export_dir}/"
                                f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}")
    except (message.DecodeError, text_format.ParseError) as exc:
        raise DataLossError(None, None, f"{export_dir} holds a corrupt SavedModel: {exc}") from None
    return saved


def load(sess: Any, tags: Any, export_dir: str, import_scope: str | None = None,
         **saver_kwargs: Any) -> Any:
    """Loads the meta graph tagged ``tags`` into ``sess.graph`` and restores the variables.

    Returns:
        The loaded ``MetaGraphDef`` (its ``signature_def`` names the inputs and outputs).
    Raises:
        NotFoundError: no SavedModel, or no meta graph with exactly these tags (lists the
            available tag sets).
    """
    from flowmesh.train.saver import import_meta_graph

    tags = [tags] if isinstance(tags, str) else list(tags)
    saved = read_saved_model(export_dir)
    found = [m for m in saved.meta_graphs if set(m.meta_info_def.tags) == set(tags)]
    if not found:
        available = [sorted(m.meta_info_def.tags) for m in saved.meta_graphs]
        raise NotFoundError(None, None, f"MetaGraphDef associated with tags {sorted(tags)} could not be "
                            f"found in SavedModel {export_dir}; available tag sets: {available}")
    meta = found[0]
    with sess.graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
        variables = os.path.join(export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)
        if saver is not None and gfile.Exists(variables + ".index"):
            saver.restore(sess, variables)
        init_ops = sess.graph.get_collection(constants.MAIN_OP_KEY) or \
            sess.graph.get_collection(constants.LEGACY_INIT_OP_KEY)
        if init_ops:
            sess.run(init_ops[0], feed_dict=_asset_feeds(meta, export_dir, import_scope))
    return meta


def _asset_feeds(meta: Any, export_dir: str, import_scope: str | None) -> dict[str, str]:
    """``{asset tensor name: its file in export_dir/assets}`` for the main op (e.g. the
    vocabulary file a table initializer reads), from the meta graph's ``asset_file_def`` or,
    as TensorFlow 1.x's builder writes them, its ``saved_model_assets`` collection."""
    from flowmesh.protos.meta_graph import AssetFileDef

    defs = list(meta.asset_file_def)
    if not defs and constants.ASSETS_KEY in meta.collection_def:
        defs = [AssetFileDef.FromString(any_proto.value)
                for any_proto in meta.collection_def[constants.ASSETS_KEY].any_list.value]
    prefix = f"{import_scope}/" if import_scope else ""
    assets = os.path.join(export_dir, constants.ASSETS_DIRECTORY)
    return {prefix + a.tensor_info.name: os.path.join(assets, a.filename) for a in defs if a.tensor_info.name}
