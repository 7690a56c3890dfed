"""flowmesh's TensorFlow message schemas: built in a private pool, field-for-field equal to
TensorFlow's own descriptors (when TensorFlow is installed), byte-compatible both ways."""

from __future__ import annotations

import importlib

import pytest
from google.protobuf import descriptor_pool

from flowmesh.protos import graph, meta_graph, tensor, tensor_bundle
from flowmesh.protos.builder import POOL, build
from flowmesh.testing.tf_oracle import require_tensorflow

OURS = {
    "tensorflow.core.framework.tensor_pb2": tensor.tensor_pb2,
    "tensorflow.core.framework.tensor_shape_pb2": tensor.tensor_shape_pb2,
    "tensorflow.core.framework.attr_value_pb2": graph.attr_value_pb2,
    "tensorflow.core.framework.node_def_pb2": graph.node_def_pb2,
    "tensorflow.core.framework.versions_pb2": graph.versions_pb2,
    "tensorflow.core.framework.graph_pb2": graph.graph_pb2,
    "tensorflow.core.protobuf.saver_pb2": meta_graph.saver_pb2,
    "tensorflow.core.framework.variable_pb2": meta_graph.variable_pb2,
    "tensorflow.core.protobuf.meta_graph_pb2": meta_graph.meta_graph_pb2,
    "tensorflow.core.protobuf.tensor_bundle_pb2": tensor_bundle.tensor_bundle_pb2,
    "tensorflow.core.framework.tensor_slice_pb2": tensor_bundle.tensor_slice_pb2,
}


def _fields(desc) -> dict:
    return {f.number: (f.name, f.type, f.is_repeated,
                       (f.message_type or f.enum_type).full_name if (f.message_type or f.enum_type) else "",
                       bool(f.containing_oneof))
            for f in desc.fields}


def _compare(ours, theirs, path: str) -> int:
    mine, ref = _fields(ours), _fields(theirs)
    for number, spec in mine.items():
        assert ref.get(number) == spec, f"{path} field {number}: ours {spec}, TensorFlow's {ref.get(number)}"
    checked = len(mine)
    for nested in ours.nested_types:
        checked += _compare(nested, theirs.nested_types_by_name[nested.name], f"{path}.{nested.name}")
    return checked


@pytest.mark.parametrize("module", list(OURS))
def test_fields_match_tensorflows_descriptors(module):
    require_tensorflow()
    theirs = importlib.import_module(module).DESCRIPTOR
    ours = OURS[module].DESCRIPTOR
    assert ours.name == theirs.name
    for name, desc in ours.message_types_by_name.items():
        assert _compare(desc, theirs.message_types_by_name[name], name) > 0
    for name, enum in ours.enum_types_by_name.items():
        ref = theirs.enum_types_by_name[name]
        assert [(v.name, v.number) for v in enum.values] == [(v.name, v.number) for v in ref.values]


def test_messages_live_in_a_private_pool():
    assert POOL is not descriptor_pool.Default()
    assert graph.GraphDef.DESCRIPTOR.file.pool is POOL
    try:  # TensorFlow (when imported) owns the default pool's tensorflow.GraphDef
        default = descriptor_pool.Default().FindMessageTypeByName("tensorflow.GraphDef")
    except KeyError:
        default = None
    assert default is not graph.GraphDef.DESCRIPTOR


def test_tensorflow_graph_def_round_trips_bytes_exactly():
    tf1 = require_tensorflow()
    with tf1.Graph().as_default() as g:
        x = tf1.placeholder(tf1.float32, [None, 3], name="x")
        tf1.nn.relu(tf1.matmul(x, tf1.ones([3, 2])) + [1.0, 2.0], name="y")
    data = g.as_graph_def().SerializeToString(deterministic=True)
    ours = graph.GraphDef.FromString(data)
    assert [n.op for n in ours.node] == [n.op for n in g.as_graph_def().node]
    assert ours.node[0].attr["dtype"].type == tensor.DataType.Value("DT_FLOAT")
    assert ours.SerializeToString(deterministic=True) == data


def test_builder_reports_unknown_types_and_rebuilds_idempotently():
    with pytest.raises(ValueError, match="unknown type 'Missing'"):
        build('syntax = "proto3"; package t; message A { Missing m = 1; }', "flowmesh_test/bad.proto")
    first = build('syntax = "proto3"; package t; message B { map<string, int64> m = 1; }', "flowmesh_test/b.proto")
    again = build("ignored", "flowmesh_test/b.proto")
    assert first.B is again.B
    msg = first.B()
    msg.m["k"] = 3
    assert first.B.FromString(msg.SerializeToString()).m["k"] == 3


def test_proto3_optional_fields_keep_explicit_presence():
    module = build('''
        syntax = "proto3";
        package flowmesh_test;
        message WithOptional { oneof kind { int32 a = 1; } optional bool flag = 2; bool plain = 3; }
    ''', "flowmesh_test/with_optional.proto")
    message = module.WithOptional(flag=False, plain=False)
    assert message.HasField("flag") and message.SerializeToString() == b"\x10\x00"
    assert [o.name for o in message.DESCRIPTOR.oneofs] == ["kind", "_flag"]
    assert not module.WithOptional().HasField("flag")
