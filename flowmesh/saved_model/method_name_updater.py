"""``tf.saved_model.signature_def_utils.MethodNameUpdater``: changes the ``method_name`` of
signature defs in an existing SavedModel and writes it back (``saved_model.pb``, or
``saved_model.pbtxt`` when the model was stored as text), as TensorFlow's updater does."""

from __future__ import annotations

import logging
import os
from typing import Any

from flowmesh import gfile
from flowmesh.saved_model import constants
from flowmesh.saved_model.loader import read_saved_model

_log = logging.getLogger("flowmesh.saved_model")


class MethodNameUpdater:
    """Updates the method names of a SavedModel's signatures::

        updater = tf.saved_model.signature_def_utils.MethodNameUpdater(export_dir)
        updater.replace_method_name(signature_key="serving_default", method_name="classify")
        updater.save(new_export_dir)

    Raises:
        NotFoundError / DataLossError: ``export_dir`` holds no readable SavedModel.
    """

    def __init__(self, export_dir: str) -> None:
        self._export_dir = export_dir
        self._saved_model = read_saved_model(export_dir)

    def replace_method_name(self, signature_key: str, method_name: str, tags: Any = None) -> None:
        """Sets ``method_name`` on the signature ``signature_key`` of every meta graph whose tag
        set equals ``tags`` (a tag or list of tags; None: every meta graph).

        Raises:
            ValueError: an empty key or method name, no meta graph with these tags, or a
                matching meta graph without this signature.
        """
        if not signature_key:
            raise ValueError("`signature_key` must be defined.")
        if not method_name:
            raise ValueError("`method_name` must be defined.")
        if tags is not None and not isinstance(tags, list):
            tags = [tags]
        found = False
        for meta_graph in self._saved_model.meta_graphs:
            if tags is not None and set(tags) != set(meta_graph.meta_info_def.tags):
                continue
            if signature_key not in meta_graph.signature_def:
                raise ValueError(f"MetaGraphDef associated with tags {tags} does not have a signature_def with "
                                 f"key: '{signature_key}'. This means either you specified the wrong signature "
                                 "key or forgot to put the signature_def with the corresponding key in your "
                                 "SavedModel.")
            meta_graph.signature_def[signature_key].method_name = method_name
            found = True
        if not found:
            raise ValueError(f"MetaGraphDef associated with tags {tags} could not be found in SavedModel. This "
                             "means either you specified invalid tags or your SavedModel does not have a "
                             "MetaGraphDef with the specified tags.")

    def save(self, new_export_dir: str | None = None) -> None:
        """Writes the updated SavedModel proto to ``new_export_dir`` (default: in place), in
        the format it was read from. Only the proto is written: copy the variables and
        assets yourself when saving elsewhere."""
        text = gfile.Exists(os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT))
        target = new_export_dir or self._export_dir
        if text:
            path = os.path.join(target, constants.SAVED_MODEL_FILENAME_PBTXT)
            with gfile.GFile(path, "w") as f:
                f.write(str(self._saved_model))
        else:
            path = os.path.join(target, constants.SAVED_MODEL_FILENAME_PB)
            with gfile.GFile(path, "wb") as f:
                f.write(self._saved_model.SerializeToString(deterministic=True))
        _log.info("SavedModel written to: %s", path)
