"""``tf.nn.raw_rnn`` and ``tf.nn.static_state_saving_rnn`` against tensorflow.compat.v1:
same weights give the same emitted outputs, final and loop states, and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from tests.rnn.oracle import compare_with_tensorflow

X = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float32)  # time-major
LENGTHS = np.array([5, 2, 4], np.int32)


def lib_flat(names):
    return list(names) if isinstance(names, tuple) else [names]


def _flat(state):
    return list(state) if isinstance(state, tuple) else [state]


def _raw_rnn(lib, x, cell, emit_structure=None):
    """A decoder-style loop: step ``t`` reads ``x[t]`` until each sequence's length; the
    loop state sums the outputs."""
    lengths = lib.constant(LENGTHS)

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            next_state, loop_state = cell.zero_state(3, lib.float32), lib.zeros([3, 3])
            emit = emit_structure
        else:
            next_state, loop_state = cell_state, loop_state + cell_output
            emit = cell_output if emit_structure is None else lib.tanh(cell_output) * 2.0
        finished = time >= lengths
        next_input = lib.cond(lib.reduce_all(finished), lambda: lib.zeros([3, 4]),
                              lambda: lib.gather(x, lib.minimum(time, 4)))
        return finished, next_input, next_state, emit, loop_state

    emitted, state, loop_state = lib.nn.raw_rnn(cell, loop_fn)
    out = emitted.stack()
    out.set_shape([5, 3, 3])
    return [out, *_flat(state), loop_state]


@pytest.mark.parametrize("kind", ["lstm", "gru_emit_structure"])
def test_raw_rnn_matches_tensorflow(kind):
    def build(lib, x):
        if kind == "lstm":
            return _raw_rnn(lib, x, lib.nn.rnn_cell.LSTMCell(3))
        return _raw_rnn(lib, x, lib.nn.rnn_cell.GRUCell(3), lib.zeros([3]))

    got = compare_with_tensorflow(build, {"x": X})
    emitted = got["values"][0]
    for b, length in enumerate(LENGTHS):   # finished elements emit zeros
        assert np.all(emitted[length:, b] == 0) and np.all(emitted[:length, b] != 0)


def test_raw_rnn_emitted_outputs_read_back():
    with tf.Graph().as_default():
        emitted, _, _ = tf.nn.raw_rnn(tf.nn.rnn_cell.BasicRNNCell(2), lambda t, o, s, ls: (
            t >= LENGTHS, tf.ones([3, 4]), tf.zeros([3, 2]) if s is None else s, None, None))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            stacked, first, picked, size, flat = sess.run(
                [emitted.stack(), emitted.read(0), emitted.gather([1, 0]), emitted.size(),
                 emitted.concat()])
    assert stacked.shape == (5, 3, 2) and size == 5
    np.testing.assert_array_equal(first, stacked[0])
    np.testing.assert_array_equal(picked, stacked[[1, 0]])
    np.testing.assert_array_equal(flat, stacked.reshape(15, 2))
    assert tf.compat.v1.nn.raw_rnn is tf.nn.raw_rnn


def test_raw_rnn_bad_arguments():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.BasicRNNCell(2)
        with pytest.raises(TypeError, match="loop_fn"):
            tf.nn.raw_rnn(cell, None)
        with pytest.raises(ValueError, match="initial cell state"):
            tf.nn.raw_rnn(cell, lambda t, o, s, ls: (t >= 2, tf.ones([3, 4]), None, None, None))


class _VariableStateSaver:
    """Keeps each named state in a variable (what a segment-by-segment reader provides);
    with ``separate_output`` the saved states go to other variables (so that a run leaves
    the initial states as they were, for the oracle's comparison)."""

    def __init__(self, lib, sizes, separate_output=False):
        rng = np.random.default_rng(2)
        self.lib = lib
        self.variables = {name: lib.Variable(rng.standard_normal((3, size)).astype(np.float32),
                                             name=f"saved_{name}") for name, size in sizes.items()}
        self.outputs = self.variables if not separate_output else {
            name: lib.Variable(np.zeros((3, size), np.float32), name=f"out_{name}")
            for name, size in sizes.items()}

    def state(self, name):
        return self.lib.identity(self.variables[name])

    def save_state(self, name, value):
        return self.outputs[name].assign(value)


@pytest.mark.parametrize("kind", ["lstm_tuple_names", "gru_single_name"])
def test_static_state_saving_rnn_matches_tensorflow(kind):
    def build(lib, x):
        inputs = lib.unstack(x)
        if kind == "lstm_tuple_names":
            cell = lib.nn.rnn_cell.LSTMCell(3)
            saver, names = _VariableStateSaver(lib, {"c": 3, "h": 3}, True), ("c", "h")
        else:
            cell = lib.nn.rnn_cell.GRUCell(3)
            saver, names = _VariableStateSaver(lib, {"h": 3}, True), "h"
        outputs, state = lib.nn.static_state_saving_rnn(cell, inputs, saver, names,
                                                        sequence_length=LENGTHS)
        with lib.control_dependencies([outputs[-1]]):  # the saves ran: read them back
            saved = [lib.identity(saver.outputs[n]) for n in lib_flat(names)]
        return [lib.stack(outputs), *_flat(state), *saved]

    compare_with_tensorflow(build, {"x": X})


def test_static_state_saving_rnn_carries_the_state_between_runs():
    with tf.Graph().as_default():
        saver = _VariableStateSaver(tf, {"h": 3})
        saver.variables["h"].initializer  # noqa: B018
        outputs, state = tf.nn.static_state_saving_rnn(
            tf.nn.rnn_cell.GRUCell(3), tf.unstack(tf.constant(X)), saver, "h")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(state)
            np.testing.assert_array_equal(sess.run(saver.variables["h"]), first)
            second = sess.run(state)
        assert not np.allclose(first, second)
        with pytest.raises(ValueError, match="same type as `cell.state_size`"):
            tf.nn.static_state_saving_rnn(tf.nn.rnn_cell.LSTMCell(3), tf.unstack(tf.constant(X)),
                                          saver, "h")
