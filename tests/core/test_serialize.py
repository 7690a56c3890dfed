"""Round trips and bad input for the portable graph encoding (flowmesh.core.serialize)."""

from __future__ import annotations

import dataclasses
import random

import ml_dtypes
import msgpack
import numpy as np
import pytest

import flowmesh as tf
from flowmesh.core import registry, serialize
from flowmesh.core.graph import Graph
from flowmesh.errors import DataLossError, InvalidArgumentError, NotFoundError, OpError


def _roundtrip(graph: Graph) -> Graph:
    data = serialize.graph_to_bytes(graph)
    assert isinstance(data, bytes)
    return serialize.graph_from_bytes(data)[0]


def _model_graph() -> tuple[Graph, list[str]]:
    g = Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        with tf.device("/job:ps/task:0"):
            b = tf.Variable(tf.zeros([2]), name="b")
        y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
        with tf.control_dependencies([y]):
            z = tf.identity(tf.reduce_sum(y), name="z")
        tf.global_variables_initializer()
    return g, [y.name, z.name, w.initializer.name]


def test_graph_roundtrip_preserves_structure():
    g, _ = _model_graph()
    g2 = _roundtrip(g)
    assert [op.name for op in g2.get_operations()] == [op.name for op in g.get_operations()]
    for a, b in zip(g.get_operations(), g2.get_operations()):
        assert a.type == b.type
        assert [t.name for t in a.inputs] == [t.name for t in b.inputs]
        assert [c.name for c in a.control_inputs] == [c.name for c in b.control_inputs]
        assert a.device == b.device
        assert a.colocation_groups() == b.colocation_groups()
        assert [(t.dtype, t.shape.as_tuple()) for t in a.outputs] == [
            (t.dtype, t.shape.as_tuple()) for t in b.outputs]
        assert a.traceback == b.traceback
    assert g2.get_operation_by_name("b").device == "/job:ps/task:0"


def test_decoded_graph_runs_like_the_original():
    g, names = _model_graph()
    g2 = _roundtrip(g)
    feed = np.array([[1.0, -2.0, 3.0]], dtype=np.float32)
    results = []
    for graph in (g, g2):
        with tf.Session(graph=graph, config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(graph.get_operation_by_name("init"))
            results.append(sess.run([names[0], names[1]], {"x:0": feed}))
    np.testing.assert_allclose(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


@pytest.mark.parametrize("value", [
    True, 0, -7, 2**40, 1.5, "text", b"\x00bytes", None, [1, [2, "x"]], (1, 2.0, (3,)),
    {"a": 1, "b": [True, None]}, {1: "int key"}, 3 + 4j,
])
def test_python_attr_values_roundtrip(value):
    assert serialize.decode_value(serialize.encode_value(value)) == value
    assert type(serialize.decode_value(serialize.encode_value(value))) is type(value)


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=np.float32).reshape(3, 4),
    np.array([[1, 2], [3, 4]], dtype=np.int64),
    np.array([True, False]),
    np.zeros((0, 5), dtype=np.float64),
    np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16),
    np.array([1 + 2j], dtype=np.complex64),
    np.array(7, dtype=np.uint8),
    np.array([b"a", b"", b"\xff\x00"], dtype=object),
    np.array([[b"x"], [b"yz"]], dtype=object),
])
def test_array_values_roundtrip(array):
    out = serialize.decode_value(serialize.encode_value(array))
    assert isinstance(out, np.ndarray) and out.dtype == array.dtype and out.shape == array.shape
    assert out.flags.writeable
    if array.dtype == object:
        assert out.tolist() == array.tolist()
    else:
        np.testing.assert_array_equal(out.astype(np.float64) if array.dtype.name == "bfloat16" else out,
                                      array.astype(np.float64) if array.dtype.name == "bfloat16" else array)


def test_numpy_scalars_dtypes_and_shapes_roundtrip():
    value = [np.float32(2.5), tf.float32, tf.bfloat16, tf.string, tf.TensorShape([None, 3]),
             tf.TensorShape(None), tf.TensorShape([])]
    out = serialize.decode_value(serialize.encode_value(value))
    assert type(out[0]) is np.float32 and out[0] == 2.5
    assert out[1] == tf.float32 and out[2] == tf.bfloat16 and out[3] == tf.string
    assert out[4].as_list() == [None, 3] and out[5].rank is None and out[6].rank == 0


def test_string_and_bfloat16_constants_run_after_roundtrip():
    g = Graph()
    with g.as_default():
        tf.constant([b"ab", b"c"], name="s")
        tf.cast(tf.constant([1.5, 2.0], dtype=tf.bfloat16), tf.float32, name="f")
    g2 = _roundtrip(g)
    with tf.Session(graph=g2) as sess:
        s, f = sess.run(["s:0", "f:0"])
    assert s.tolist() == [b"ab", b"c"]
    np.testing.assert_array_equal(f, [1.5, 2.0])


def test_attrs_of_every_supported_kind_roundtrip_on_a_node():
    g = Graph()
    attrs = {"flag": True, "n": 3, "f": 0.5, "s": "str", "b": b"raw", "none": None,
             "list": [1, 2], "tuple": (1, 2), "dict": {"k": [1.0]}, "dtype": tf.int64,
             "shape": tf.TensorShape([2, None]), "array": np.ones((2, 2), np.float16)}
    with g.as_default():
        g.create_op("NoOp", [], attrs=dict(attrs), name="holder")
    out = _roundtrip(g).get_operation_by_name("holder").attrs
    assert set(out) == set(attrs)
    for key in ("flag", "n", "f", "s", "b", "none", "list", "tuple", "dict", "dtype", "shape"):
        assert out[key] == attrs[key], key
    np.testing.assert_array_equal(out["array"], attrs["array"])


def test_nested_graph_attr_plain_graph():
    inner = Graph()
    with inner.as_default():
        tf.constant(3.0, name="c")
    g = Graph()
    with g.as_default():
        g.create_op("NoOp", [], attrs={"body": inner}, name="holder")
    body = _roundtrip(g).get_operation_by_name("holder").get_attr("body")
    assert isinstance(body, Graph) and body is not inner
    with tf.Session(graph=body) as sess:
        assert sess.run("c:0") == 3.0


class _TaggedGraph(Graph):
    """A Graph subclass with extra state, standing in for function graphs."""

    def __init__(self, tag: str = ""):
        super().__init__()
        self.tag = tag

    def _serialize_extra(self):
        return {"tag": self.tag, "outputs": ["c:0"]}


def test_nested_graph_attr_uses_registered_decoder():
    def decode(build, extra):
        graph = build(_TaggedGraph(extra["tag"]))
        graph.outputs = [graph.get_tensor_by_name(n) for n in extra["outputs"]]
        return graph

    serialize.register_graph_attr_decoder("_TaggedGraph", decode)
    inner = _TaggedGraph("branch")
    with inner.as_default():
        tf.constant(1.0, name="c")
    g = Graph()
    with g.as_default():
        g.create_op("NoOp", [], attrs={"branches": [inner, inner]}, name="holder")
    branches = _roundtrip(g).get_operation_by_name("holder").get_attr("branches")
    assert all(isinstance(b, _TaggedGraph) and b.tag == "branch" for b in branches)
    assert branches[0].outputs[0].name == "c:0"


def test_unregistered_graph_kind_is_not_found():
    class Strange(Graph):
        pass

    g = Graph()
    with g.as_default():
        g.create_op("NoOp", [], attrs={"body": Strange()}, name="holder")
    with pytest.raises(NotFoundError, match="Strange"):
        _roundtrip(g)


def test_subset_with_references_extends_a_graph():
    g = Graph()
    with g.as_default():
        a = tf.constant(2.0, name="a")
        b = tf.multiply(a, 3.0, name="b")
    first = [a.op]
    target, added = serialize.graph_from_bytes(serialize.graph_to_bytes(g, first))
    assert [op.name for op in added] == ["a"]
    rest = [op for op in g.get_operations() if op not in first]
    _, added = serialize.graph_from_bytes(serialize.graph_to_bytes(g, rest), target)
    assert b.op.name in [op.name for op in added]
    with tf.Session(graph=target) as sess:
        assert sess.run("b:0") == 6.0


def test_subset_with_stubs_carries_producer_specs():
    g = Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 2], name="x")
        parts = tf.split(x, 2, axis=0, name="sp")
        y = tf.add(parts[1], 1.0, name="y")
    data = serialize.graph_to_bytes(g, [y.op, y.op.inputs[1].op], external="stub")
    target, _ = serialize.graph_from_bytes(data)
    stub = target.get_operation_by_name("sp")
    assert stub.type == serialize.STUB_OP and len(stub.outputs) == 2
    assert stub.outputs[1].shape.as_list() == [2, 2]
    assert target.get_operation_by_name(y.op.name).inputs[0] is stub.outputs[1]
    # A later subset consuming the same producer reuses the existing stub.
    with g.as_default():
        z = tf.subtract(parts[0], 1.0, name="z")
    _, added = serialize.graph_from_bytes(
        serialize.graph_to_bytes(g, [z.op, z.op.inputs[1].op], external="stub"), target)
    assert "sp" not in {op.name for op in added}
    assert target.get_operation_by_name(z.op.name).inputs[0] is stub.outputs[0]


def test_unserializable_op_names_the_node(monkeypatch):
    op_def = registry.get_op_def("NoOp")
    monkeypatch.setitem(registry._OPS, "NoOp", dataclasses.replace(op_def, serializable=False))
    g = Graph()
    with g.as_default():
        g.create_op("NoOp", [], name="my_py_func")
    with pytest.raises(InvalidArgumentError, match="my_py_func"):
        serialize.graph_to_bytes(g)


def test_unportable_attr_value_names_node_and_attr():
    g = Graph()
    with g.as_default():
        g.create_op("NoOp", [], attrs={"fn": lambda: 1}, name="holder")
    with pytest.raises(InvalidArgumentError, match="'fn' of node 'holder'"):
        serialize.graph_to_bytes(g)


def test_unknown_op_type_is_not_found():
    data = serialize.graph_to_dict(_model_graph()[0])
    data["nodes"][0]["op"] = "FancyNewOp"
    with pytest.raises(NotFoundError, match="FancyNewOp"):
        serialize.graph_from_bytes(serialize.encode_value(data))


@pytest.mark.parametrize("mutate, error", [
    (lambda d: d.update(version=99), InvalidArgumentError),
    (lambda d: d.update(format="other"), InvalidArgumentError),
    (lambda d: d.update(nodes="x"), InvalidArgumentError),
    (lambda d: d["nodes"][3].update(inputs=["nowhere:0"]), InvalidArgumentError),
    (lambda d: d["nodes"][3].update(name="bad name!"), InvalidArgumentError),
    (lambda d: d["nodes"][3].update(outputs=[["float99", []]]), InvalidArgumentError),
    (lambda d: d["nodes"][3].update(device="/gpu:x"), InvalidArgumentError),
    (lambda d: d["nodes"].append(dict(d["nodes"][0])), InvalidArgumentError),
])
def test_invalid_structures_are_rejected(mutate, error):
    data = serialize.graph_to_dict(_model_graph()[0])
    mutate(data)
    with pytest.raises(error):
        serialize.graph_from_bytes(serialize.encode_value(data))


def test_truncated_and_corrupt_bytes_raise_data_loss():
    data = serialize.graph_to_bytes(_model_graph()[0])
    with pytest.raises(DataLossError):
        serialize.graph_from_bytes(data[: len(data) // 2])
    with pytest.raises(DataLossError):
        serialize.graph_from_bytes(data + b"\x00")
    with pytest.raises(DataLossError):
        serialize.decode_value(msgpack.packb(msgpack.ExtType(42, b"")))
    bad_array = msgpack.ExtType(3, msgpack.packb(["float32", [100], b"short", False]))
    with pytest.raises(DataLossError):
        serialize.decode_value(msgpack.packb(bad_array))


def test_random_corruption_never_crashes():
    data = bytearray(serialize.graph_to_bytes(_model_graph()[0]))
    rng = random.Random(0)
    for _ in range(300):
        corrupt = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            corrupt[rng.randrange(len(corrupt))] = rng.randrange(256)
        try:
            serialize.graph_from_bytes(bytes(corrupt))
        except OpError:
            pass


def test_session_graph_def_is_a_graph_def_proto():
    g, _ = _model_graph()
    with tf.Session(graph=g) as sess:
        graph_def = sess.graph_def
    assert isinstance(graph_def, tf.GraphDef)
    assert [n.name for n in graph_def.node] == [op.name for op in g.get_operations()]


def test_graph_to_dict_roundtrips():
    g, _ = _model_graph()
    graph_def = serialize.graph_to_dict(g)
    assert graph_def["format"] == serialize.FORMAT and len(graph_def["nodes"]) == len(g.get_operations())
    rebuilt, _ = serialize.graph_from_dict(graph_def)
    assert [op.name for op in rebuilt.get_operations()] == [op.name for op in g.get_operations()]
