"""``tf.train.write_graph``: a graph's ``GraphDef`` to a file, binary or text format."""

from __future__ import annotations

from typing import Any

from flowmesh.formats import filesystem as fs


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes the ``GraphDef`` of a Graph (or a ``GraphDef``) to ``logdir/name``, atomically.

    Args:
        graph_or_graph_def: a ``tf.Graph`` or a ``GraphDef`` (flowmesh's or TensorFlow's).
        logdir: the directory (created when missing; local path or fsspec URL).
        name: the file name.
        as_text: protobuf text format (``.pbtxt``) instead of binary (``.pb``).

    Returns:
        The path written.
    """
    from google.protobuf import text_format

    from flowmesh.core.graph_def import as_graph_def_message

    graph_def = graph_or_graph_def.as_graph_def() if hasattr(graph_or_graph_def, "get_operations") \
        else as_graph_def_message(graph_or_graph_def)
    path = fs.join(logdir, name)
    fs.makedirs(logdir)
    data = text_format.MessageToString(graph_def).encode() if as_text else graph_def.SerializeToString()
    fs.write_bytes_atomic(path, data)
    return path
