"""``tf.saved_model.simple_save``: one serving meta graph with a predict signature."""

from __future__ import annotations

from typing import Any

from flowmesh.saved_model.builder import SavedModelBuilder
from flowmesh.saved_model.constants import signature_constants, tag_constants
from flowmesh.saved_model.signature_def_utils import predict_signature_def


def simple_save(session: Any, export_dir: str, inputs: dict, outputs: dict,
                legacy_init_op: Any = None) -> None:
    """Saves ``session``'s model to ``export_dir`` with tag ``serve`` and a
    ``serving_default`` predict signature of ``inputs`` and ``outputs``."""
    from flowmesh.ops.lookup_ops import tables_initializer

    with session.graph.as_default():
        main_op = legacy_init_op if legacy_init_op is not None else tables_initializer()
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING], main_op=main_op,
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                           predict_signature_def(inputs, outputs)})
    builder.save()
