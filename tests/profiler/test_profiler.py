"""tf.profiler (tfprof): parameter and float-operation profiles against TensorFlow's, the op
and code views, timed steps, the advisor, write_op_log and the proto schemas."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow

Builder = tf.profiler.ProfileOptionBuilder


def model(lib):
    """The same graph in flowmesh or TensorFlow: a dense layer, a loss, a frozen variable."""
    x = lib.placeholder(lib.float32, [8, 4], name="x")
    with lib.variable_scope("dense"):
        w = lib.get_variable("kernel", [4, 3], initializer=lib.ones_initializer())
        b = lib.get_variable("bias", [3], initializer=lib.zeros_initializer())
    y = lib.nn.bias_add(lib.matmul(x, w), b, name="logits")
    lib.get_variable("frozen", [5, 5], trainable=False, initializer=lib.zeros_initializer())
    loss = lib.reduce_sum(lib.square(y, name="sq"), name="loss")
    return x, loss


def chain(node):
    """The op view's groups: each is the child of the one before (tfprof's layout)."""
    found = []
    while node.children:
        node = node.children[0]
        found.append((node.name, node.float_ops, node.total_float_ops))
    return found


def tree(node, key):
    return (node.name, getattr(node, key), tuple(tree(c, key) for c in node.children))


def profiles(lib):
    quiet = {"output": "none"}
    params = lib.profiler.profile(lib.get_default_graph(),
                                  options={**lib.profiler.ProfileOptionBuilder.trainable_variables_parameter(),
                                           **quiet})
    flops = lib.profiler.profile(lib.get_default_graph(),
                                 options={**lib.profiler.ProfileOptionBuilder.float_operation(), **quiet})
    by_op = lib.profiler.profile(lib.get_default_graph(), cmd="op",
                                 options={**lib.profiler.ProfileOptionBuilder.float_operation(), **quiet})
    by_input = lib.profiler.profile(lib.get_default_graph(), cmd="graph",
                                    options={**lib.profiler.ProfileOptionBuilder.float_operation(), **quiet})
    return params, flops, by_op, by_input


def test_parameters_float_operations_and_the_op_view():
    with tf.Graph().as_default():
        model(tf)
        params, flops, by_op, by_input = profiles(tf)
    assert isinstance(params, tf.profiler.GraphNodeProto) and params.name == "_TFProfRoot"
    assert params.total_parameters == 4 * 3 + 3
    assert tree(params, "total_parameters") == (
        "_TFProfRoot", 15, (("dense", 15, (("dense/bias", 3, ()), ("dense/kernel", 12, ()))),))
    assert flops.total_float_ops == 8 * 3 * 4 * 2 + 24 + 24 + 23  # MatMul, BiasAdd, Square, Sum
    assert isinstance(by_op, tf.profiler.MultiGraphNodeProto)
    assert chain(by_op) == [("MatMul", 192, 263), ("BiasAdd", 24, 71), ("Square", 24, 47), ("Sum", 23, 23)]
    assert [n.name for n in by_op.children[0].graph_nodes] == ["MatMul"]
    assert tree(by_input, "float_ops") == (
        "_TFProfRoot", 0, (("loss", 23, (("sq", 24, (("logits", 24, (("MatMul", 192, ()),)),)),)),))


def test_default_options_print_a_report(capsys):
    with tf.Graph().as_default():
        model(tf)
        result = tf.profiler.profile()
    out = capsys.readouterr().out
    assert result.total_parameters == 15
    assert "node name | # parameters" in out and "dense/kernel (4x3, 12/12 params)" in out
    assert "_TFProfRoot (--/15 params)" in out


def test_timed_steps_profiler_class_and_advice(tmp_path):
    with tf.Graph().as_default():
        x, loss = model(tf)
        profiler = tf.profiler.Profiler()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(2):
                run_meta = tf.RunMetadata()
                sess.run(loss, {x: np.ones((8, 4), np.float32)},
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=run_meta)
                profiler.add_step(step, run_meta)
        options = Builder(Builder.time_and_memory(min_bytes=0)).with_empty_output().build()
        by_scope = profiler.profile_name_scope(options)
        assert by_scope.total_exec_micros > 0
        names = {c.name for c in by_scope.children}
        assert {"logits", "loss", "sq"} <= names
        by_op = profiler.profile_operations(Builder(Builder.time_and_memory(min_bytes=0))
                                            .select(["micros", "occurrence"]).with_empty_output().build())
        assert "MatMul" in [name for name, _, _ in chain(by_op)]
        one_step = profiler.profile_graph(Builder(Builder.time_and_memory(min_bytes=0)).with_step(1)
                                          .with_empty_output().build())
        assert one_step.children[0].name == "loss" and one_step.total_run_count > 0
        code = profiler.profile_python(Builder(Builder.trainable_variables_parameter())
                                       .with_empty_output().build())
        assert code.total_parameters == 15 and "test_profiler.py" in code.children[0].name
        advice = profiler.advise()
        assert isinstance(advice, tf.profiler.AdviceProto)
        assert any(r.startswith("top 1 operation type:") for r in advice.checkers["ExpensiveOperationChecker"].reports)
        timeline = str(tmp_path / "timeline.json")
        profiler.profile_graph(Builder(Builder.time_and_memory()).with_timeline_output(timeline).build())
        assert os.path.getsize(timeline) > 0


def test_write_op_log_and_bad_options(tmp_path):
    with tf.Graph().as_default():
        model(tf)
        tf.profiler.write_op_log(tf.get_default_graph(), str(tmp_path))
        log = tf.profiler.OpLogProto()
        with open(tmp_path / "tfprof_log", "rb") as f:
            log.ParseFromString(f.read())
        entries = {e.name: e for e in log.log_entries}
        assert list(entries["dense/kernel"].types) == ["_trainable_variables"]
        assert entries["MatMul"].float_ops == 192 and "frozen" not in entries or not entries["frozen"].types
        with pytest.raises(tf.errors.InvalidArgumentError, match="unknown cmd"):
            tf.profiler.profile(cmd="lines")
        with pytest.raises(ValueError, match="order_by"):
            tf.profiler.profile(options=Builder().order_by("size").build())
        with pytest.raises(ValueError, match="outfile"):
            tf.profiler.profile(options={**Builder.float_operation(), "output": "file"})


@pytest.mark.oracle
def test_against_tensorflow():
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    with tf1.Graph().as_default():
        model(tf1)
        theirs = profiles(tf1)
    with tf.Graph().as_default():
        model(tf)
        ours = profiles(tf)
    assert tree(ours[0], "total_parameters") == tree(theirs[0], "total_parameters")
    assert tree(ours[0], "parameters") == tree(theirs[0], "parameters")
    assert ours[1].total_float_ops == theirs[1].total_float_ops
    assert tree(ours[1], "total_float_ops") == tree(theirs[1], "total_float_ops")
    assert chain(ours[2]) == chain(theirs[2])
    assert tree(ours[3], "total_float_ops") == tree(theirs[3], "total_float_ops")
    for method in ("trainable_variables_parameter", "float_operation", "time_and_memory"):
        assert getattr(Builder, method)() == getattr(tf1.profiler.ProfileOptionBuilder, method)()
    assert Builder().with_max_depth(3).select(["params"]).build() == \
        tf1.profiler.ProfileOptionBuilder().with_max_depth(3).select(["params"]).build()


@pytest.mark.oracle
def test_proto_schemas_match_tensorflow():
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    for name in ("GraphNodeProto", "MultiGraphNodeProto", "AdviceProto", "OpLogProto"):
        ours, theirs = getattr(tf.profiler, name).DESCRIPTOR, getattr(tf1.profiler, name).DESCRIPTOR
        assert ours.full_name == theirs.full_name
        assert {(f.name, f.number) for f in ours.fields} == {(f.name, f.number) for f in theirs.fields}


def test_graph_view_of_a_graph_deeper_than_the_recursion_limit():
    with tf.Graph().as_default():
        y = tf.placeholder(tf.float32, [2, 2])
        for _ in range(1100):
            y = y * 1.5
        options = Builder(Builder.float_operation()).with_empty_output().build()
        deep = tf.profiler.profile(cmd="graph", options=options)
    assert deep.total_float_ops == 1100 * 4 and deep.children[0].total_float_ops == 1100 * 4
