"""Meta graphs: the graph, the Saver's names and the collections, in one ``.meta`` file.

``Saver.save`` writes ``PREFIX.meta`` next to each checkpoint; ``tf.train.import_meta_graph``
(``train/saver.py``) reads it back into a graph and returns a ``Saver`` that restores the
checkpoint::

    saver = tf.train.import_meta_graph("/ckpt/model.ckpt-100.meta")
    with tf.Session() as sess:
        saver.restore(sess, "/ckpt/model.ckpt-100")
        sess.run("logits:0", {"x:0": batch})

The file is TensorFlow's ``MetaGraphDef`` protobuf (TensorFlow's ``import_meta_graph``
reads it; see :mod:`flowmesh.train.meta_graph_proto`), whose ``meta_info_def.any_info``
carries flowmesh's lossless view, msgpack (``flowmesh.core.serialize``), never pickle::

    {"format": "flowmesh.meta_graph", "version": 1, "graph": <graph dict>,
     "saver_def": {...} | None, "collections": {key: [{"kind": k, "name": n}, ...]}}

Files holding only that dict (written before) and TensorFlow's ``.meta`` files are read too.

Collections keep tensors, operations and variables by name. Differences from
TensorFlow: imported graphs have their tensors and operations in the collections, but
not ``tf.Variable`` objects (``tf.global_variables()`` is empty after an import), so
build a fresh ``Saver`` only from the original code; use the returned one otherwise.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from flowmesh.core.graph import Graph, Operation, Tensor, get_default_graph
from flowmesh.core.serialize import decode_value, encode_value, graph_from_dict, graph_to_dict
from flowmesh.errors import DataLossError, InvalidArgumentError
from flowmesh.formats import filesystem as fs

logger = logging.getLogger("flowmesh.train")

FORMAT = "flowmesh.meta_graph"
VERSION = 1


def _collection_items(graph: Graph, key: str) -> list[dict[str, str]]:
    items = []
    for value in graph.get_collection(key):
        if isinstance(value, Tensor):
            items.append({"kind": "tensor", "name": value.name})
        elif isinstance(value, Operation):
            items.append({"kind": "operation", "name": value.name})
        elif hasattr(value, "handle") and hasattr(value, "initializer"):
            items.append({"kind": "variable", "name": value.op.name})
        elif isinstance(value, (str, bytes, int, float)):
            items.append({"kind": "value", "name": value if not isinstance(value, bytes) else value.decode()})
    return items


def create_meta_graph(graph: Graph | None = None, saver_def: Any = None,
                      collection_list: Sequence[str] | None = None,
                      clear_devices: bool = False) -> dict[str, Any]:
    """The meta graph of ``graph`` as a dict (see the module docstring)."""
    graph = graph or get_default_graph()
    encoded = graph_to_dict(graph)
    if clear_devices:
        for node in encoded["nodes"]:
            node["device"] = ""
    keys = graph.get_all_collection_keys() if collection_list is None else list(collection_list)
    collections = {k: _collection_items(graph, k) for k in keys}
    return {
        "format": FORMAT,
        "version": VERSION,
        "graph": encoded,
        "saver_def": saver_def.to_dict() if saver_def is not None else None,
        "collections": {k: v for k, v in collections.items() if v},
    }


def export_meta_graph(filename: str | None = None, graph: Graph | None = None, saver_def: Any = None,
                      collection_list: Sequence[str] | None = None, clear_devices: bool = False,
                      as_text: bool = False, meta_info_def: Any = None, graph_def: Any = None,
                      export_scope: str | None = None, **kwargs: Any) -> Any:
    """Writes the meta graph to ``filename`` (atomically) when given; returns it as a
    ``MetaGraphDef`` protobuf that TensorFlow's ``import_meta_graph`` reads (see
    :mod:`flowmesh.train.meta_graph_proto`), in text format with ``as_text``.

    Raises:
        InvalidArgumentError: the graph holds an op that cannot be serialized (py_func), or
            ``export_scope`` is given (not supported).
    """
    from flowmesh.train import meta_graph_proto

    if export_scope:
        raise InvalidArgumentError(None, None, "export_meta_graph(export_scope=...) is not supported.")
    graph = graph or get_default_graph()
    meta = create_meta_graph(graph, saver_def, collection_list, clear_devices)
    keys = graph.get_all_collection_keys() if collection_list is None else list(collection_list)
    proto = meta_graph_proto.to_proto(graph, encode_value(meta), saver_def, keys, clear_devices)
    if filename:
        from google.protobuf import text_format

        fs.makedirs(fs.dirname(filename))
        data = text_format.MessageToString(proto).encode() if as_text else proto.SerializeToString()
        fs.write_bytes_atomic(filename, data)
    return proto


def read_meta_graph(filename: str) -> Any:
    """Reads a ``.meta`` file: flowmesh's meta dict, or TensorFlow's ``MetaGraphDef``.

    Raises:
        NotFoundError: no such file. DataLossError: neither format (naming the file).
    """
    return _parse_meta(fs.read_bytes(filename), filename)


def _parse_meta(data: bytes, where: str) -> Any:
    from google.protobuf import message, text_format

    from flowmesh.protos.meta_graph import MetaGraphDef
    from flowmesh.train import meta_graph_proto

    try:  # flowmesh's first format: the msgpack dict alone
        meta = decode_value(data)
        if isinstance(meta, dict) and meta.get("format") == FORMAT:
            return meta
    except (DataLossError, InvalidArgumentError, ValueError, TypeError):
        pass
    proto = MetaGraphDef()
    try:
        proto.ParseFromString(data)
    except message.DecodeError:
        try:
            text_format.Parse(data.decode(), proto)
        except (text_format.ParseError, UnicodeDecodeError):
            raise DataLossError(None, None, f"{where} is not a meta graph file (neither a MetaGraphDef "
                                "nor flowmesh's format).") from None
    payload = meta_graph_proto.flowmesh_payload(proto)
    return _parse_meta(payload, where) if payload is not None else proto


def import_graph(meta_graph_or_file: Any, clear_devices: bool = False,
                 import_scope: str | None = None) -> dict[str, Any] | None:
    """Adds a saved meta graph to the default graph; returns its ``SaverDef`` dict (or None;
    ``saver.import_meta_graph`` builds the ``Saver``).

    Args:
        meta_graph_or_file: a ``.meta`` path (flowmesh's or TensorFlow's), a
            ``MetaGraphDef`` (flowmesh's or TensorFlow's message) or a dict from
            :func:`create_meta_graph`.
        clear_devices: drop the device requests of the imported ops.
        import_scope: a name prefix for TensorFlow-written meta graphs (not supported for
            flowmesh's own).

    Raises:
        InvalidArgumentError: ``import_scope`` given for a flowmesh meta graph, or the graph
            conflicts with ops already in the default graph.
    """
    from flowmesh.train import meta_graph_proto

    meta = meta_graph_or_file
    if isinstance(meta, str):
        meta = read_meta_graph(meta)
    elif hasattr(meta, "SerializeToString"):
        meta = _parse_meta(meta.SerializeToString(), "the MetaGraphDef")
    if not isinstance(meta, dict):
        return meta_graph_proto.import_tensorflow(meta, get_default_graph(), clear_devices, import_scope)
    if import_scope:
        raise InvalidArgumentError(None, None, "import_meta_graph(import_scope=...) is not supported for "
                                   "meta graphs written by flowmesh.")
    graph_dict = meta["graph"]
    if clear_devices:
        for node in graph_dict["nodes"]:
            node["device"] = ""
    graph = get_default_graph()
    graph_from_dict(graph_dict, graph)
    for key, items in meta.get("collections", {}).items():
        for item in items:
            _restore_collection_item(graph, key, item)
    return meta.get("saver_def")


def _restore_collection_item(graph: Graph, key: str, item: dict[str, str]) -> None:
    kind, name = item.get("kind"), item.get("name")
    if kind == "tensor":
        graph.add_to_collection(key, graph.get_tensor_by_name(name))
    elif kind == "operation":
        graph.add_to_collection(key, graph.get_operation_by_name(name))
    elif kind == "value":
        graph.add_to_collection(key, name)
    else:
        logger.debug("import_meta_graph: skipping %s %r of collection %r", kind, name, key)
