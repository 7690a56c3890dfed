"""tf.TensorArray against TensorFlow 2.21's tf.compat.v1 graph mode (TF 1.x control flow,
i.e. resource TensorArrays, as TensorFlow 1.x programs ran): forward values and gradients
of a table of programs, the errors TensorFlow raises, and a dynamic RNN written with
TensorArrays and while_loop as TensorFlow's own ``dynamic_rnn`` is."""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3, 2)).astype(np.float32)   # [time, batch, depth]
W = RNG.standard_normal((2, 5)).astype(np.float32)
U = (0.5 * RNG.standard_normal((5, 5))).astype(np.float32)


@contextlib.contextmanager
def tf1_control_flow(tf1):
    """TensorFlow 1.x control flow (TensorArrayV3 resources) while building the graph."""
    was = tf1.control_flow_v2_enabled()
    tf1.disable_control_flow_v2()
    try:
        yield
    finally:
        if was:
            tf1.enable_control_flow_v2()


# --- the programs: build(tf) -> (outputs, xs); both modules run the same code -------------
def write_read_stack(t):
    x = t.constant(X[0])
    ta = t.TensorArray(t.float32, size=3, clear_after_read=False)
    ta = ta.write(0, x).write(1, x * 2.0).write(2, t.sin(x))
    return [ta.stack(), ta.read(1) * 3.0], [x]


def unstack_gather(t):
    x = t.constant(X)
    ta = t.TensorArray(t.float32, size=4, clear_after_read=False).unstack(x * x)
    return [ta.gather([3, 0]), ta.read(1), ta.read(1)], [x]


def scatter_gather(t):
    x = t.constant(X[:3])
    ta = t.TensorArray(t.float32, size=5, element_shape=[3, 2]).scatter([4, 0, 2], t.tanh(x))
    return [ta.stack()], [x]


def split_concat(t):
    x = t.constant(X.reshape(12, 2))
    ta = t.TensorArray(t.float32, size=3, infer_shape=False).split(x, [5, 3, 4])
    return [ta.concat() * 2.0, ta.size()], [x]


def concat_equal(t):
    x = t.constant(X)
    ta = t.TensorArray(t.float32, size=0, dynamic_size=True)
    ta = ta.write(0, x[0]).write(1, x[1] * x[2]).write(3, x[3])
    return [ta.concat(), ta.size()], [x]


def dynamic_rnn(t):
    """TensorFlow's dynamic_rnn pattern: input TensorArray read per step, output written."""
    x, w, u = t.constant(X), t.constant(W), t.constant(U)
    h0 = t.zeros([3, 5])
    steps = t.shape(x)[0]
    inputs = t.TensorArray(t.float32, size=steps).unstack(x)
    outputs = t.TensorArray(t.float32, size=steps)

    def body(time, h, out):
        h = t.tanh(t.matmul(inputs.read(time), w) + t.matmul(h, u))
        return time + 1, h, out.write(time, h)

    _, h_final, outputs = t.while_loop(lambda time, *_: time < steps, body,
                                       [t.constant(0), h0, outputs])
    return [outputs.stack(), h_final], [x, w, u]


def loop_dynamic_size(t):
    x = t.constant(X[0])
    ta = t.TensorArray(t.float32, size=0, dynamic_size=True, element_shape=[3, 2])

    def body(i, acc, ta):
        acc = acc * x + 1.0
        return [i + 1, acc, ta.write(i, acc)]

    _, _, ta = t.while_loop(lambda i, acc, ta: i < 5, body, [0, t.ones([3, 2]), ta],
                            maximum_iterations=4)
    return [ta.stack(), ta.size()], [x]


def cond_write(t):
    x = t.constant(X[0])
    ta = t.TensorArray(t.float32, size=2).write(0, x)
    taken = t.cond(t.reduce_sum(x) > -100.0, lambda: ta.write(1, x * x),
                   lambda: ta.write(1, -x))
    return [taken.stack()], [x]


def loop_reads_written_array(t):
    """A loop that reads what an earlier loop wrote (backprop through both)."""
    x = t.constant(X[0])
    first = t.TensorArray(t.float32, size=3)
    _, first = t.while_loop(lambda i, ta: i < 3,
                            lambda i, ta: (i + 1, ta.write(i, x * t.cast(i + 1, t.float32))),
                            [0, first])

    def body(i, total):
        return i + 1, total + t.exp(first.read(i) * 0.3)

    _, total = t.while_loop(lambda i, _: i < 3, body, [0, t.zeros([3, 2])])
    return [total], [x]


def nested_loops(t):
    x = t.constant(X[0])
    ta = t.TensorArray(t.float32, size=6)

    def outer(i, ta):
        def inner(j, ta):
            return j + 1, ta.write(i * 2 + j, t.sin(x[i] * t.cast(j + 1, t.float32)))

        _, ta = t.while_loop(lambda j, ta: j < 2, inner, [0, ta])
        return i + 1, ta

    _, ta = t.while_loop(lambda i, ta: i < 3, outer, [0, ta])
    return [ta.stack()], [x]


def loop_in_cond(t):
    x = t.constant(X[0])
    ta = t.TensorArray(t.float32, size=3)

    def loop():
        _, out = t.while_loop(lambda i, ta: i < 3,
                              lambda i, ta: (i + 1, ta.write(i, x[i] * x[i])), [0, ta])
        return out

    out = t.cond(t.reduce_sum(x) > -100.0, loop, lambda: ta.unstack(x))
    return [out.stack()], [x]


def cond_in_loop(t):
    x = t.constant(X[0])
    ta = t.TensorArray(t.float32, size=3)

    def body(i, ta):
        ta = t.cond(t.equal(i % 2, 0), lambda: ta.write(i, t.sin(x[i])),
                    lambda: ta.write(i, x[i] * x[i]))
        return i + 1, ta

    _, ta = t.while_loop(lambda i, ta: i < 3, body, [0, ta])
    return [ta.stack()], [x]


class _TinyCell:
    """A duck-typed RNN cell (TensorFlow's rnn_cell classes need tf-keras)."""

    output_size = 3
    state_size = 3

    def __init__(self, t, kernel):
        self.t, self.kernel = t, kernel

    def zero_state(self, batch, dtype):
        return self.t.zeros([batch, 3], dtype)

    def __call__(self, inputs, state, scope=None):
        h = self.t.tanh(self.t.matmul(self.t.concat([inputs, state], 1), self.kernel))
        return h, h


def raw_rnn_loop_state(t):
    """tf.nn.raw_rnn with a TensorArray in its loop state (the attention-history pattern)."""
    x = t.constant(X)
    kernel = t.constant(np.linspace(-0.5, 0.5, 5 * 3, dtype=np.float32).reshape(5, 3))
    cell = _TinyCell(t, kernel)

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            state = cell.zero_state(3, t.float32)
            history = t.TensorArray(t.float32, size=0, dynamic_size=True, element_shape=[3, 3])
        else:
            state, history = cell_state, loop_state.write(time - 1, cell_output * 2.0)
        finished = t.tile(t.reshape(time >= 4, [1]), [3])
        step = t.cond(t.reduce_all(finished), lambda: t.zeros([3, 2]),
                      lambda: t.gather(x, t.minimum(time, 3)))
        return finished, step, state, cell_output, history

    emitted, state, history = t.nn.raw_rnn(cell, loop_fn)
    return [emitted.stack(), state, history.stack()], [x, kernel]


PROGRAMS = [write_read_stack, unstack_gather, scatter_gather, split_concat, concat_equal,
            dynamic_rnn, loop_dynamic_size, cond_write, loop_reads_written_array, nested_loops,
            loop_in_cond, cond_in_loop, raw_rnn_loop_state]


def _run(t, build, session):
    outputs, xs = build(t)
    floats = [o for o in outputs if o.dtype == t.float32]
    weights = [1.0 - t.cast(t.reshape(t.range(t.size(o)), t.shape(o)), t.float32) * 0.1
               for o in floats]
    loss = t.add_n([t.reduce_sum(o * w) for o, w in zip(floats, weights)])
    grads = [t.convert_to_tensor(g) for g in t.gradients(loss, xs)]
    session.run(t.global_variables_initializer())
    return session.run([outputs, grads])


@pytest.mark.parametrize("build", PROGRAMS, ids=lambda f: f.__name__)
def test_values_and_gradients_match_tensorflow(build):
    tf1 = require_tensorflow()
    with tf.Graph().as_default(), tf.Session() as sess:
        ours = _run(tf, build, sess)
    with tf1_control_flow(tf1), tf1.Graph().as_default() as g, \
            tf1.Session(graph=g, config=session_config(tf1)) as sess:
        theirs = _run(tf1, build, sess)
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_dynamic_rnn_matches_tensorflow_v2_control_flow_too():
    tf1 = require_tensorflow()
    with tf.Graph().as_default(), tf.Session() as sess:
        ours = _run(tf, dynamic_rnn, sess)
    with tf1.Graph().as_default() as g, tf1.Session(graph=g, config=session_config(tf1)) as sess:
        theirs = _run(tf1, dynamic_rnn, sess)
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_static_properties():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[None, 2])
        assert ta.dtype == tf.float32 and ta.element_shape.as_list() == [None, 2]
        ta2 = ta.write(0, tf.zeros([4, 2]))
        assert ta.element_shape.as_list() == [4, 2]  # shared and inferred from the write
        assert ta2.handle is ta.handle and ta2.flow is not ta.flow
        assert ta2.stack().shape.as_list() == [3, 4, 2]
        assert ta2.identity().flow.op.type == "Identity"
        assert ta._type_spec == tf.TensorArraySpec([4, 2], tf.float32, False, True)
        assert ta2.read(0).shape.as_list() == [4, 2]


def test_colocate_with_first_write_call():
    with tf.Graph().as_default():
        with tf.device("/cpu:1"):
            value = tf.constant([1.0])
        ta = tf.TensorArray(tf.float32, size=2)
        later = ta.write(0, value).write(1, [2.0])
        fixed = tf.TensorArray(tf.float32, size=2, colocate_with_first_write_call=False)
        fixed.write(0, value)
        assert ta.handle.op.device == "/device:CPU:1" and fixed.handle.op.device == ""
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            np.testing.assert_array_equal(sess.run(later.stack()), [[1.0], [2.0]])


# --- errors: same messages as TensorFlow 1.x (naming the TensorArray and the index) -------
def err_write_twice(t):
    ta = t.TensorArray(t.float32, size=3)
    return ta.write(0, [1.0, 2.0]).write(0, [3.0, 4.0]).stack()


def err_write_out_of_bounds(t):
    return t.TensorArray(t.float32, size=3).write(5, [1.0, 2.0]).stack()


def err_read_out_of_bounds(t):
    return t.TensorArray(t.float32, size=3).write(0, [1.0, 2.0]).read(4)


def err_read_twice(t):
    ta = t.TensorArray(t.float32, size=3).write(0, [1.0, 2.0])
    first = ta.read(0)
    with t.control_dependencies([first]):
        return [first, ta.read(0)]


def err_runtime_shape(t):
    value = t.placeholder_with_default([1.0, 2.0, 3.0], [None])
    return t.TensorArray(t.float32, size=3).write(0, [1.0, 2.0]).write(1, value).stack()


def err_unwritten_unknown_shape(t):
    value = t.placeholder_with_default(np.ones((2, 2), np.float32), None)
    return t.TensorArray(t.float32, size=3, infer_shape=False).write(0, value).read(1)


def err_scatter_too_far(t):
    return t.TensorArray(t.float32, size=2).scatter([0, 3], [[1.0], [2.0]]).stack()


def err_split_lengths(t):
    return t.TensorArray(t.float32, size=2).split([1.0, 2.0, 3.0], [1, 1]).concat()


def err_empty_stack(t):
    return t.TensorArray(t.float32, size=0, dynamic_size=True).stack()


ERRORS = [err_write_twice, err_write_out_of_bounds, err_read_out_of_bounds, err_read_twice,
          err_runtime_shape, err_unwritten_unknown_shape, err_scatter_too_far,
          err_split_lengths, err_empty_stack]


def _error_text(t, build, session):
    fetch = build(t)
    with pytest.raises(Exception) as info:
        session.run(fetch)
    message = str(info.value)
    match = re.search(r"(TensorArray \S+?:? )?((Could not|Tried to|Expected|Max|TensorArray "
                      r"has|has size zero)[^\n\[]*)", message)
    assert match, message
    text = re.sub(r"TensorArray_\d+|TensorArray\S*", "TA", match.group(2)).strip()
    return type(info.value).__name__, text.removeprefix("TA "), message


@pytest.mark.parametrize("build", ERRORS, ids=lambda f: f.__name__)
def test_errors_match_tensorflow(build):
    tf1 = require_tensorflow()
    with tf.Graph().as_default(), tf.Session() as sess:
        kind, text, message = _error_text(tf, build, sess)
    with tf1_control_flow(tf1), tf1.Graph().as_default() as g, \
            tf1.Session(graph=g, config=session_config(tf1)) as sess:
        tf_kind, tf_text, _ = _error_text(tf1, build, sess)
    assert kind == tf_kind
    assert text == tf_text, message
    if "index" in text:
        assert "TensorArray TensorArray" in message or "Tried to read" in message, message


def test_unwritten_index_of_known_shape_reads_zeros_as_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[2]).write(0, [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(ta.stack()), [[1, 2], [0, 0], [0, 0]])


def test_graph_construction_errors_name_the_array_and_index():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=3, name="acc").write(0, [1.0, 2.0])
        with pytest.raises(InvalidArgumentError, match=r"TensorArray acc: .*index 1.*"
                           r"Inconsistent shapes: saw \(3,\) but expected \(2,\)"):
            ta.write(1, [1.0, 2.0, 3.0])
        with pytest.raises(InvalidArgumentError, match=r"TensorArray acc: .*index 2 because "
                           r"the value dtype is int32 but TensorArray dtype is float32.*tf.cast"):
            ta.write(2, tf.constant([1, 2]))
        with pytest.raises(ValueError, match="`size` must be provided"):
            tf.TensorArray(tf.float32)
        with pytest.raises(TypeError, match="must come back as the same TensorArray"):
            tf.while_loop(lambda i, t: i < 2, lambda i, t: (i + 1, tf.constant(0.0)), [0, ta])


def test_close_then_use_fails():
    with tf.Graph().as_default(), tf.Session() as sess:
        ta = tf.TensorArray(tf.float32, size=1).write(0, 1.0)
        closed = ta.close()
        with tf.control_dependencies([closed]):
            late = ta.read(0)
        with pytest.raises(InvalidArgumentError, match="has already been closed"):
            sess.run(late)


def test_two_gradient_calls_use_separate_gradient_arrays():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant(X)
        ta = tf.TensorArray(tf.float32, size=4).unstack(x)
        y = tf.reduce_sum(ta.stack() ** 2)
        g1 = tf.gradients(y, x)[0]
        g2 = tf.gradients(3.0 * y, x)[0]
        a, b = sess.run([g1, g2])
        np.testing.assert_allclose(a, 2 * X, rtol=1e-6)
        np.testing.assert_allclose(b, 6 * X, rtol=1e-6)


def _graph_def_program(t):
    x = t.placeholder(t.float32, [3, 2], name="x")
    ta = t.TensorArray(t.float32, size=3, clear_after_read=False).unstack(x * 2.0)
    t.identity(ta.gather([2, 0]) + ta.read(1), name="y")


def test_graph_defs_with_tensor_arrays_move_both_ways():
    """A TensorFlow 1.x GraphDef holding TensorArrayV3 ops runs in flowmesh, and flowmesh's
    runs in TensorFlow, with the same result."""
    tf1 = require_tensorflow()
    feed = X[0]
    with tf1_control_flow(tf1), tf1.Graph().as_default() as g:
        _graph_def_program(tf1)
        tf_def = g.as_graph_def().SerializeToString()
    with tf.Graph().as_default() as g:
        _graph_def_program(tf)
        our_def = g.as_graph_def().SerializeToString()
    results = []
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.import_graph_def(tf.GraphDef.FromString(tf_def), name="")
        results.append(sess.run("y:0", {"x:0": feed}))
    with tf1.Graph().as_default() as g, tf1.Session(graph=g, config=session_config(tf1)) as sess:
        tf1.import_graph_def(tf1.GraphDef.FromString(our_def), name="")
        results.append(sess.run("y:0", {"x:0": feed}))
    expected = np.stack([feed[2], feed[0]]) * 2.0 + feed[1] * 2.0
    for got in results:
        np.testing.assert_allclose(got, expected, rtol=1e-6)
