"""``Estimator.export_saved_model``: the serving graph, restored from a checkpoint, written
with ``SavedModelBuilder`` into a fresh timestamped directory (renamed into place)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from flowmesh import gfile
from flowmesh.core.graph import Graph
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.estimator_spec import validate_spec
from flowmesh.estimator.export import ServingInputReceiver, signature_defs
from flowmesh.estimator.mode_keys import ModeKeys


def _export_dir(base: str) -> str:
    stamp = int(time.time())
    while gfile.Exists(os.path.join(base, str(stamp))):
        stamp += 1
    return os.path.join(base, str(stamp))


def _copy_assets_extra(export_dir: str, assets_extra: dict | None) -> None:
    for dest, source in (assets_extra or {}).items():
        if os.path.isabs(dest) or ".." in dest.split("/"):
            raise InvalidArgumentError(f"assets_extra destination {dest!r} must be a relative path")
        target = os.path.join(export_dir, "assets.extra", dest)
        gfile.MakeDirs(os.path.dirname(target))
        gfile.Copy(source, target, overwrite=True)


def export_saved_model(estimator: Any, export_dir_base: str, receiver_fn: Callable,
                       checkpoint_path: str, as_text: bool, assets_extra: dict | None = None) -> bytes:
    from flowmesh.ops.lookup_ops import tables_initializer
    from flowmesh.runtime.session import Session
    from flowmesh.saved_model.builder import SavedModelBuilder
    from flowmesh.saved_model.constants import tag_constants
    from flowmesh.train.saver import Saver
    from flowmesh.train.training_util import get_or_create_global_step

    with Graph().as_default() as graph:
        get_or_create_global_step()
        receiver = receiver_fn()
        if not isinstance(receiver, ServingInputReceiver):
            raise InvalidArgumentError("serving_input_receiver_fn must return a "
                                       f"tf.estimator.export.ServingInputReceiver, got {type(receiver).__name__}")
        spec = validate_spec(estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT),
                             ModeKeys.PREDICT)
        signatures = signature_defs(spec.export_outputs, spec.predictions, receiver)
        main_op = tables_initializer()
        final = _export_dir(export_dir_base)
        temp = os.path.join(export_dir_base, f"temp-{os.path.basename(final)}")
        with Session(graph=graph, config=estimator.config.session_config) as sess:
            Saver(sharded=True).restore(sess, checkpoint_path)
            builder = SavedModelBuilder(temp)
            builder.add_meta_graph_and_variables(sess, [tag_constants.SERVING], signature_def_map=signatures,
                                                 main_op=main_op)
            builder.save(as_text)
    _copy_assets_extra(temp, assets_extra)
    gfile.Rename(temp, final)
    return final.encode()
