"""``tf.saved_model.builder.SavedModelBuilder``: writes ``saved_model.pb`` (TensorFlow's
``SavedModel`` protobuf of tagged ``MetaGraphDef``s with signature defs) and the variables
as a TensorFlow checkpoint bundle in ``variables/variables``.

Example:
    >>> builder = tf.saved_model.builder.SavedModelBuilder("/tmp/export/1")
    >>> builder.add_meta_graph_and_variables(sess, [tf.saved_model.tag_constants.SERVING],
    ...     signature_def_map={"serving_default": tf.saved_model.predict_signature_def(
    ...         {"x": x}, {"y": y})})
    >>> builder.save()
"""

from __future__ import annotations

import os
from typing import Any

from flowmesh import gfile
from flowmesh.core.graph import Graph, get_default_graph
from flowmesh.errors import AlreadyExistsError, InvalidArgumentError
from flowmesh.saved_model import constants
from flowmesh.saved_model._proto import SavedModel


class SavedModelBuilder:
    """Builds one SavedModel in ``export_dir`` (which must not exist yet)."""

    def __init__(self, export_dir: str):
        if gfile.Exists(export_dir):
            if gfile.ListDirectory(export_dir):
                raise AlreadyExistsError(None, None, f"Export directory {export_dir} already exists and is "
                                         "not empty; give a new directory for each SavedModel")
        else:
            gfile.MakeDirs(export_dir)
        self._export_dir = export_dir
        self._saved_model = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_variables = False

    def _check_tags(self, tags: Any) -> list[str]:
        if isinstance(tags, str):
            tags = [tags]
        tags = list(tags or [])
        if not tags:
            raise InvalidArgumentError("a meta graph of a SavedModel needs at least one tag, e.g. "
                                       "tf.saved_model.tag_constants.SERVING")
        for meta in self._saved_model.meta_graphs:
            if set(meta.meta_info_def.tags) == set(tags):
                raise InvalidArgumentError(f"this SavedModel already has a meta graph with tags {tags}")
        return tags

    def _add(self, graph: Graph, tags: list[str], signature_def_map: Any, saver: Any,
             main_op: Any, clear_devices: bool) -> None:
        from flowmesh.train.meta_graph import export_meta_graph

        signature_def_map = dict(signature_def_map or {})
        for key, sig in signature_def_map.items():
            if not sig.method_name or not len(sig.outputs):
                raise InvalidArgumentError(f"signature '{key}' needs a method_name and outputs")
        if main_op is not None:
            graph.clear_collection(constants.MAIN_OP_KEY)
            graph.add_to_collection(constants.MAIN_OP_KEY, main_op)
        saver_def = saver.as_saver_def() if saver is not None else None
        meta = export_meta_graph(graph=graph, saver_def=saver_def, clear_devices=clear_devices)
        meta.meta_info_def.tags.extend(tags)
        for key, sig in signature_def_map.items():
            meta.signature_def[key].CopyFrom(sig)
        self._saved_model.meta_graphs.append(meta)

    def add_meta_graph_and_variables(self, sess: Any, tags: Any, signature_def_map: Any = None,
                                     assets_collection: Any = None, legacy_init_op: Any = None,
                                     clear_devices: bool = False, main_op: Any = None,
                                     strip_default_attrs: bool = False, saver: Any = None) -> None:
        """Saves ``sess``'s variables and adds its graph under ``tags`` (the first meta graph).

        Raises:
            InvalidArgumentError: no tags, tags used before, a signature without outputs.
            AssertionError-like misuse: a second call (use :meth:`add_meta_graph`).
        """
        from flowmesh.train.saver import Saver, SaverDef

        if self._has_variables:
            raise InvalidArgumentError("add_meta_graph_and_variables was already called; add more "
                                       "meta graphs with add_meta_graph")
        tags = self._check_tags(tags)
        graph = sess.graph
        with graph.as_default():
            saver = saver or Saver(sharded=True, write_version=SaverDef.V2, allow_empty=True)
            variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
            gfile.MakeDirs(variables_dir)
            saver.save(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME),
                       write_meta_graph=False, write_state=False)
            self._add(graph, tags, signature_def_map, saver, main_op or legacy_init_op, clear_devices)
        self._has_variables = True

    def add_meta_graph(self, tags: Any, signature_def_map: Any = None, assets_collection: Any = None,
                       legacy_init_op: Any = None, clear_devices: bool = False, main_op: Any = None,
                       strip_default_attrs: bool = False, saver: Any = None) -> None:
        """Adds the default graph under ``tags``, sharing the variables saved first."""
        from flowmesh.train.saver import Saver, SaverDef

        if not self._has_variables:
            raise InvalidArgumentError("call add_meta_graph_and_variables before add_meta_graph")
        tags = self._check_tags(tags)
        graph = get_default_graph()
        saver = saver or Saver(sharded=True, write_version=SaverDef.V2, allow_empty=True)
        self._add(graph, tags, signature_def_map, saver, main_op or legacy_init_op, clear_devices)

    def save(self, as_text: bool = False) -> str:
        """Writes ``saved_model.pb`` (``.pbtxt`` with ``as_text``); returns its path."""
        if as_text:
            from google.protobuf import text_format

            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString()
        with gfile.GFile(path, "wb") as f:
            f.write(data)
        return path
