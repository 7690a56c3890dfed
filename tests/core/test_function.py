"""Function graphs: capture, control captures, signatures, serialization of If/While."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.core import serialize
from flowmesh.core.function import FuncGraph, resolve_captured, variable_spec
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops.function_call import unify_captures


def test_capture_creates_one_placeholder_per_outer_tensor():
    outer = tf.get_default_graph()
    x = tf.constant([1.0, 2.0], name="x")
    fn = FuncGraph("fn", outer)
    with fn.as_default():
        assert tf.get_default_graph() is fn
        y = x * 2.0
        z = x + y
    assert y.graph is fn and z.graph is fn
    assert fn.external_captures == [x]
    placeholder = fn.captured_inputs[0]
    assert placeholder.op.type == "Placeholder" and placeholder.shape == x.shape
    assert fn.external_of(placeholder) is x
    assert resolve_captured(placeholder) is x


def test_nested_function_captures_through_its_enclosing_function():
    x = tf.constant(3.0)
    outer_fn = FuncGraph("outer", tf.get_default_graph())
    inner_fn = FuncGraph("inner", outer_fn)
    with inner_fn.as_default():
        y = x * x
    assert y.graph is inner_fn
    # the enclosing function captured x first; the inner one captured its placeholder
    assert outer_fn.external_captures == [x]
    assert inner_fn.external_captures == [outer_fn.captured_inputs[0]]
    assert resolve_captured(inner_fn.captured_inputs[0]) is x


def test_variable_reads_are_captured_through_the_handle():
    v = tf.Variable(np.zeros((2, 3), np.float32), name="v")
    fn = FuncGraph("fn", tf.get_default_graph())
    with fn.as_default():
        y = v * 2.0  # uses the snapshot v/read
    assert fn.external_captures == [v.handle]
    read = y.op.inputs[0]
    assert read.op.type == "ReadVariableOp" and read.graph is fn
    assert read.shape.as_list() == [2, 3]
    assert variable_spec(fn.captured_inputs[0]) == (tf.float32, tf.TensorShape([2, 3]))


def test_outer_control_dependencies_become_control_captures():
    a = tf.no_op(name="a")
    fn = FuncGraph("fn", tf.get_default_graph())
    with fn.as_default():
        inner = tf.no_op(name="inner")
        with tf.control_dependencies([a, inner]):
            out = tf.constant(1.0)
    assert fn.control_captures == [a]
    assert out.op.control_inputs == [inner]


def test_capture_rejects_unrelated_graphs_and_sealed_functions():
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1.0)
    fn = FuncGraph("fn", tf.get_default_graph())
    with pytest.raises(ValueError, match="enclosing"):
        fn.capture(foreign)
    fn.seal()
    with pytest.raises(RuntimeError, match="already used"):
        fn.capture(tf.constant(2.0))


def test_unify_captures_gives_both_functions_the_same_signature():
    x, y = tf.constant(1.0), tf.constant(2.0)
    f1, f2 = FuncGraph("f1", tf.get_default_graph()), FuncGraph("f2", tf.get_default_graph())
    with f1.as_default():
        tf.identity(x)
    with f2.as_default():
        tf.identity(y)
        tf.identity(x)
    externals = unify_captures([f1, f2])
    assert externals == [x, y]
    assert f1.external_captures == [x, y] and f2.external_captures == [x, y]


def test_add_input_must_come_before_captures():
    outer = tf.constant(1.0)
    fn = FuncGraph("fn", tf.get_default_graph())
    arg = fn.add_input(tf.float32, [2], "arg")
    assert fn.inputs == [arg] and fn.num_args == 1
    with fn.as_default():
        tf.identity(outer)
    assert len(fn.inputs) == 2 and fn.captured_inputs == fn.inputs[1:]
    with pytest.raises(ValueError, match="before capturing"):
        fn.add_input(tf.float32, [])


# --- serialization -------------------------------------------------------------------------
def _control_flow_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, [3], name="x")
        p = tf.placeholder(tf.bool, [], name="p")
        c = tf.cond(p, lambda: tf.sin(x) * x, lambda: x * 3.0, name="choose")
        _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.tanh(y) * c), (0, c),
                             name="loop")
        g = tf.gradients(tf.reduce_sum(y), x, name="grad")[0]
    return graph, ["choose:0", y.name, g.name]


def _run(graph, names, feed):
    with tf.Session(graph=graph) as sess:
        fetches = [graph.get_tensor_by_name(n) for n in names]
        return sess.run(fetches, {graph.get_tensor_by_name(k): v for k, v in feed.items()})


def test_if_and_while_graphs_round_trip_through_serialization():
    graph, names = _control_flow_graph()
    data = serialize.graph_to_bytes(graph)
    decoded, _ = serialize.graph_from_bytes(data)
    loop = decoded.get_operation_by_name("loop")
    assert isinstance(loop.attrs["body"], FuncGraph) and loop.attrs["body"].sealed
    assert len(loop.outputs) == len(graph.get_operation_by_name("loop").outputs)
    for pv in (True, False):
        feed = {"x:0": np.array([0.3, -0.5, 1.2]), "p:0": pv}
        for a, b in zip(_run(graph, names, feed), _run(decoded, names, feed)):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_gradients_can_be_built_on_a_decoded_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, [2], name="x")
        tf.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * x), (0, x), name="loop")
    decoded, _ = serialize.graph_from_bytes(serialize.graph_to_bytes(graph))
    with decoded.as_default():
        y = decoded.get_tensor_by_name("loop:2")
        g = tf.gradients(tf.reduce_sum(y), decoded.get_tensor_by_name("x:0"))[0]
        with tf.Session(graph=decoded) as sess:
            np.testing.assert_allclose(sess.run(g, {"x:0": [2.0, -1.0]}), [12.0, 3.0])


def test_py_func_inside_a_branch_cannot_be_serialized():
    p = tf.placeholder(tf.bool, [])
    tf.cond(p, lambda: tf.py_func(lambda: np.float32(1.0), [], tf.float32), lambda: tf.constant(0.0))
    with pytest.raises(InvalidArgumentError, match="cannot be serialized"):
        serialize.graph_to_bytes(tf.get_default_graph())


def test_corrupt_function_metadata_is_an_invalid_argument():
    graph, _ = _control_flow_graph()
    data = serialize.graph_to_dict(graph)
    choose = next(n for n in data["nodes"] if n["name"] == "choose")
    branch = choose["attrs"]["then_branch"]
    payload = serialize.encode_value(branch)
    decoded_branch = serialize.decode_value(payload)
    assert isinstance(decoded_branch, FuncGraph)
    bad = branch._serialize_extra()
    bad["outputs"] = ["no_such_tensor:0"]
    with pytest.raises(ValueError, match="missing tensor"):
        FuncGraph("x").restore(bad)


def test_creating_a_variable_inside_a_branch_is_a_clear_error():
    p = tf.placeholder(tf.bool, [])
    with pytest.raises(ValueError, match="Cannot create variable .* inside the function"):
        tf.cond(p, lambda: tf.Variable(1.0) * 2.0, lambda: tf.constant(0.0))


def test_only_floating_tensors_and_variables_are_differentiable():
    from flowmesh.core.function import is_differentiable

    assert is_differentiable(tf.constant(1.0))
    assert not is_differentiable(tf.constant(1))
    assert is_differentiable(tf.Variable(1.0).handle)
    assert not is_differentiable(tf.Variable(1).handle)
    assert not is_differentiable(tf.placeholder(tf.resource, []))  # e.g. an iterator handle
