"""``MetaGraphDef`` protobufs: what TensorFlow reads from flowmesh's ``.meta`` files and what
flowmesh reads from TensorFlow's.

flowmesh writes one ``MetaGraphDef`` holding two views of the graph:

* ``graph_def``, ``saver_def``, ``collection_def`` in TensorFlow's form, for TensorFlow's
  ``import_meta_graph``. Ops TensorFlow does not have (flowmesh's direct-to-storage restore,
  function-valued ``If``/``While``) are left out together with every op that depends on
  them; the ``SaverDef`` is kept when its ops survive (``Saver(write_version=SaverDef.V2)``
  builds TensorFlow's save/restore graph);
* ``meta_info_def.any_info``: flowmesh's lossless graph (:mod:`flowmesh.core.serialize`,
  msgpack) under the type URL :data:`TYPE_URL`, which flowmesh's ``import_meta_graph`` prefers.

A ``MetaGraphDef`` without that payload (written by TensorFlow) is imported through
``import_graph_def`` with its collections (tensors and operations) and its ``SaverDef``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Graph, Operation, Tensor
from flowmesh.protos.meta_graph import MetaGraphDef, SaverDef, VariableDef

TYPE_URL = "type.googleapis.com/flowmesh.MetaGraph"
FLOWMESH_ONLY_OPS = {"RestoreVariables", "CheckpointPathBytes", "CheckpointTempPrefix"}


def _portable_ops(graph: Graph) -> tuple[list[Operation], set[str]]:
    """The ops TensorFlow can import, and the names of those left out."""
    dropped: set[str] = set()
    kept = []
    for op in graph.get_operations():  # creation order: producers first
        if (op.type in FLOWMESH_ONLY_OPS or any(hasattr(v, "get_operations") for v in op.attrs.values())
                or any(t.op.name in dropped for t in op.inputs)
                or any(c.name in dropped for c in op.control_inputs)):
            dropped.add(op.name)
        else:
            kept.append(op)
    return kept, dropped


def _variable_def(var: Any) -> bytes:
    return VariableDef(
        variable_name=var.handle.name, initializer_name=var.initializer.name,
        snapshot_name=getattr(var, "_snapshot", var.handle).name,
        initial_value_name=var.initial_value.name, is_resource=True,
        trainable=bool(getattr(var, "trainable", True))).SerializeToString()


def _collection(proto: Any, values: list[Any], dropped: set[str]) -> bool:
    """Fills a CollectionDef from one collection's values; False when it has no proto form."""
    if values and all(hasattr(v, "handle") and hasattr(v, "initializer") for v in values):
        proto.bytes_list.value.extend(_variable_def(v) for v in values if v.op.name not in dropped)
    elif values and all(isinstance(v, (Tensor, Operation)) for v in values):
        names = [v.name for v in values if (v.op.name if isinstance(v, Tensor) else v.name) not in dropped]
        proto.node_list.value.extend(names)
    elif values and all(isinstance(v, (str, bytes)) for v in values):
        proto.bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
    elif values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        proto.int64_list.value.extend(values)
    elif values and all(isinstance(v, float) for v in values):
        proto.float_list.value.extend(values)
    else:
        return False
    return True


def to_proto(graph: Graph, payload: bytes, saver_def: Any, collection_keys: list[str],
             clear_devices: bool) -> MetaGraphDef:
    """The ``MetaGraphDef`` of ``graph`` with flowmesh's lossless ``payload``."""
    from flowmesh.core.graph_def import graph_to_graph_def

    ops, dropped = _portable_ops(graph)
    meta = MetaGraphDef()
    meta.meta_info_def.meta_graph_version = "flowmesh"
    meta.meta_info_def.any_info.type_url = TYPE_URL
    meta.meta_info_def.any_info.value = payload
    meta.graph_def.CopyFrom(graph_to_graph_def(graph, ops))
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    names = ({saver_def.restore_op_name, saver_def.save_tensor_name.split(":")[0],
              saver_def.filename_tensor_name.split(":")[0]} if saver_def is not None else set())
    if saver_def is not None and saver_def.restore_op_name and not names & dropped:
        meta.saver_def.CopyFrom(SaverDef(
            filename_tensor_name=saver_def.filename_tensor_name, save_tensor_name=saver_def.save_tensor_name,
            restore_op_name=saver_def.restore_op_name, max_to_keep=saver_def.max_to_keep,
            sharded=saver_def.sharded, keep_checkpoint_every_n_hours=saver_def.keep_checkpoint_every_n_hours,
            version=SaverDef.V2))
    for key in collection_keys:
        proto = meta.collection_def[key]
        if not _collection(proto, list(graph.get_collection(key)), dropped):
            del meta.collection_def[key]
    return meta


def flowmesh_payload(meta: MetaGraphDef) -> bytes | None:
    """flowmesh's lossless graph in a ``MetaGraphDef``, or None (TensorFlow wrote it)."""
    info = meta.meta_info_def.any_info
    return bytes(info.value) if info.type_url == TYPE_URL else None


def import_tensorflow(meta: MetaGraphDef, graph: Graph, clear_devices: bool, import_scope: str | None) -> Any:
    """Imports a TensorFlow-written meta graph into ``graph``; returns its ``SaverDef`` as a
    dict (or None)."""
    from flowmesh.core.importer import import_graph_def

    graph_def = meta.graph_def
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    prefix = f"{import_scope}/" if import_scope else ""
    before = len(graph.get_operations())
    with graph.as_default():
        import_graph_def(graph_def, name=import_scope or "")
    for op in graph.get_operations()[before:]:
        if op.type == "SaveV2":       # TensorFlow's saver graph writes TensorFlow's format
            op.attrs["_tensor_bundle"] = True
    for key, collection in meta.collection_def.items():
        if collection.WhichOneof("kind") == "node_list":
            for name in collection.node_list.value:
                full = prefix + name
                item = graph.get_tensor_by_name(full) if ":" in name else graph.get_operation_by_name(full)
                graph.add_to_collection(key, item)
    if not meta.HasField("saver_def") or not meta.saver_def.restore_op_name:
        return None
    proto = meta.saver_def  # as a flowmesh SaverDef dict (train/saver.py builds the Saver)
    return {"filename_tensor_name": prefix + proto.filename_tensor_name,
            "save_tensor_name": prefix + proto.save_tensor_name,
            "restore_op_name": prefix + proto.restore_op_name, "max_to_keep": proto.max_to_keep,
            "sharded": proto.sharded,
            "keep_checkpoint_every_n_hours": proto.keep_checkpoint_every_n_hours or 10000.0}
