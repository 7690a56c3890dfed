"""Top-level framework names added for API breadth (issue 20): build constants, scopes,
switches, enums and messages, each compared with TensorFlow's where it has a value."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow


def test_build_constants_have_tensorflows_types():
    tf1 = require_tensorflow()
    for name in ("VERSION", "GIT_VERSION", "COMPILER_VERSION", "CXX11_ABI_FLAG", "CXX_VERSION", "MONOLITHIC_BUILD"):
        assert type(getattr(tf, name)) is type(getattr(tf1, name)), name
    assert tf.VERSION == tf.__version__ and tf.GIT_VERSION.endswith(tf.VERSION)
    assert tf.CXX_VERSION >= 201402 and tf.CXX11_ABI_FLAG in (0, 1) and tf.COMPILER_VERSION != "unknown"


@pytest.mark.parametrize("build", [
    lambda t: t.op_scope([], "outer", "dflt"),
    lambda t: t.op_scope([], None, "dflt"),
])
def test_op_scope_names_ops_as_tensorflow(build):
    tf1 = require_tensorflow()
    names = []
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            with build(lib) as scope:
                first = lib.constant(1.0, name="c")
            with build(lib) as scope2:
                second = lib.constant(1.0, name="c")
            names.append((scope, scope2, first.op.name, second.op.name))
    assert names[0] == names[1]


def test_variable_op_scope_names_variables_as_tensorflow():
    tf1 = require_tensorflow()
    names = []
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            with lib.variable_op_scope([], None, "layer"):
                a = lib.get_variable("w", [2])
            with lib.variable_op_scope([], "layer", reuse=True):
                b = lib.get_variable("w", [2])
            with lib.variable_op_scope([], None, "layer"):
                c = lib.get_variable("w", [2])
            names.append((a.name, b.name, c.name, a is b))
    assert names[0] == names[1]


def test_init_scope_lifts_variable_creation_out_of_a_cond_branch():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [])
        made = []

        def branch():
            with tf.init_scope():
                made.append(tf.Variable(3.0, name="lifted"))
                assert tf.get_default_graph() is g
            return x * made[0]

        with tf.control_dependencies([tf.no_op(name="dep")]):
            with tf.name_scope("outer"):
                out = tf.cond(x > 0.0, branch, lambda: x)
        assert made[0].op.graph is g if hasattr(made[0], "op") else True
        assert made[0].name.startswith("outer/")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(out, {x: 2.0}) == 6.0 and sess.run(out, {x: -1.0}) == -1.0


def test_container_puts_variables_in_the_named_container():
    with tf.Graph().as_default() as g:
        with tf.container("experiment"):
            v = tf.Variable(1.0)
        w = tf.Variable(2.0)
        handles = {op.attrs["container"] for op in g.get_operations() if op.type == "VarHandleOp"}
        assert handles == {"experiment", ""}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([v, w]) == [1.0, 2.0]


def test_tensor_equality_switch_keeps_graph_tensors_hashable_as_tensorflow():
    tf1 = require_tensorflow()
    for lib in (tf, tf1):
        lib.enable_tensor_equality()
        try:
            with lib.Graph().as_default():
                a, b = lib.constant(1.0), lib.constant(1.0)
                assert (a == b) is False and (a == a) is True and len({a, b}) == 2
        finally:
            lib.disable_tensor_equality()


def test_v2_tensorshape_switch():
    shape = tf.TensorShape([2, None])
    assert isinstance(shape[0], tf.Dimension)
    tf.enable_v2_tensorshape()
    try:
        assert shape[0] == 2 and type(shape[0]) is int and shape[1] is None and list(shape) == [2, None]
        assert tf.TensorShape(None)[0] is None
    finally:
        tf.disable_v2_tensorshape()
    assert isinstance(shape[1], tf.Dimension) and shape[1].value is None


def test_small_framework_helpers():
    assert tf.executing_eagerly_outside_functions() is False
    assert tf.NoGradient is tf.no_gradient and tf.OpError is tf.errors.OpError
    with tf.Graph().as_default():
        t = tf.constant([1, 2])
        assert tf.is_symbolic_tensor(t) and not tf.is_symbolic_tensor(np.ones(2))
        slices = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]))
        assert tf.convert_to_tensor_or_indexed_slices(slices) is slices
        assert tf.convert_to_tensor_or_indexed_slices([1.0], tf.float64).dtype == tf.float64
        with pytest.raises(ValueError, match="requested dtype int32"):
            tf.convert_to_tensor_or_indexed_slices(slices, tf.int32)
    assert tf.get_logger() is tf.logging.get_logger()


def test_enums_and_messages_match_tensorflow():
    tf1 = require_tensorflow()
    for enum_name in ("VariableAggregation", ("VariableSynchronization")):
        ours, theirs = getattr(tf, enum_name), getattr(tf1, enum_name)
        assert {m.name: m.value for m in ours} == {m.name: m.value for m in theirs}
    assert tf.distribute.ReduceOp.from_variable_aggregation(tf.VariableAggregation.MEAN).name == "MEAN"
    opts = dict(do_constant_folding=True, opt_level=-1, global_jit_level=2, max_folded_constant_in_bytes=99)
    assert tf.OptimizerOptions(**opts).SerializeToString() == tf1.OptimizerOptions(**opts).SerializeToString()
    log = dict(level=30, message="careful")
    assert tf.LogMessage(**log).SerializeToString() == tf1.LogMessage(**log).SerializeToString()
    info = tf1.TensorInfo(name="x:0", dtype=1)
    assert tf.TensorInfo.FromString(info.SerializeToString()).name == "x:0"


@pytest.mark.parametrize("name", ["load_op_library", "load_library", "load_file_system_library",
                                  "wrap_function", "function"])
def test_unsupported_names_say_why(name):
    with pytest.raises(tf.errors.UnimplementedError, match=f"tf.{name} is not supported by flowmesh: "):
        getattr(tf, name)("x")


def test_set_log_device_placement_logs_sessions_without_config(capsys):
    assert tf.debugging.get_log_device_placement() is False
    tf.debugging.set_log_device_placement(True)
    try:
        assert tf.debugging.get_log_device_placement() is True
        with tf.Graph().as_default(), tf.Session() as sess:
            sess.run(tf.add(tf.constant(1.0), 2.0, name="logged_add"))
    finally:
        tf.debugging.set_log_device_placement(False)
    out = capsys.readouterr()
    assert "logged_add: (AddV2)" in out.out + out.err
