"""tf.print and tf.strings.format: the text printed by flowmesh equals TensorFlow's for the
same graph (tensors of each dtype and rank, truncation, Python structures, sep/end)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

CASES = {
    "float32": lambda t: (t.constant([1.5, 2.0, 1 / 3.0, 1e-7, 123456789.0, -0.5, np.nan, -np.inf], t.float32),),
    "float64": lambda t: (t.constant([1 / 3.0, 0.1, 1e20, 123456789.0], t.float64),),
    "float16": lambda t: (t.constant([1 / 3.0, 1000.5], t.float16),),
    "int_matrix": lambda t: (t.constant(np.arange(12).reshape(3, 4)),),
    "truncated_vector": lambda t: (t.constant(np.arange(30)),),
    "truncated_matrix": lambda t: (t.constant(np.arange(200).reshape(20, 10)),),
    "rank3": lambda t: (t.constant(np.arange(60).reshape(3, 4, 5)),),
    "rank3_truncated": lambda t: (t.constant(np.arange(8 * 2 * 2).reshape(8, 2, 2)),),
    "bool_strings": lambda t: (t.constant([True, False]), t.constant(["ab", "c"]), t.constant("s")),
    "scalar_string_alone": lambda t: (t.constant("just text"),),
    "structures": lambda t: ("hello", t.constant(3), {"b": 2, "a": t.constant([1.0])}, [t.constant(True), "x"],
                             None, 5.5, (1, t.constant(2))),
    "empty": lambda t: (t.constant(np.zeros((0, 3))),),
    "braces_in_text": lambda t: ("a {} b", t.constant(1)),
}


def _printed(lib, build, capfd, config=None, **kwargs):
    with lib.Graph().as_default() as g:
        op = lib.print(*build(lib), output_stream=sys.stdout, **kwargs)
        with lib.Session(graph=g, config=config) as sess:
            capfd.readouterr()
            sess.run(op)
            sys.stdout.flush()
    return capfd.readouterr().out


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_print_matches_tensorflow(name, capfd):
    tf1 = require_tensorflow()
    ours = _printed(tf, CASES[name], capfd)
    assert ours == _printed(tf1, CASES[name], capfd, session_config(tf1))
    assert ours.strip()


@pytest.mark.oracle
def test_print_summarize_sep_end(capfd):
    tf1 = require_tensorflow()
    build = CASES["truncated_matrix"]
    for kwargs in ({"summarize": 1}, {"summarize": -1}, {"sep": "|", "end": "$\n"}):
        ours = _printed(tf, lambda t: build(t) + ("z",), capfd, **kwargs)
        assert ours == _printed(tf1, lambda t: build(t) + ("z",), capfd, session_config(tf1), **kwargs), kwargs


def test_print_to_a_file_and_under_control_dependencies(tmp_path):
    path = tmp_path / "log.txt"
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.int32, [2])
        with tf.control_dependencies([tf.print("x =", x, output_stream=f"file://{path}")]):
            y = x + 1
        assert list(sess.run(y, {x: [1, 2]})) == [2, 3]
        sess.run(y, {x: [5, 6]})
    assert path.read_text() == "x = [1 2]\nx = [5 6]\n"


def test_print_rejects_unknown_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Unrecognized keyword"):
            tf.print(tf.constant(1), colour="red")
        with pytest.raises(ValueError, match="Unsupported output stream"):
            tf.print(tf.constant(1), output_stream="nowhere")


def test_py_function_gets_arrays_with_numpy():
    tf1 = require_tensorflow()
    results = []
    for lib in (tf, tf1):
        with lib.Graph().as_default(), lib.Session() as sess:
            x = lib.constant([1.0, 2.0, 4.0])
            y = lib.py_function(lambda v, k: v.numpy() * k.numpy() + 1.0, [x, lib.constant(3.0)], lib.float32)
            s, n = lib.py_function(lambda v: (v.numpy().sum(), np.int64(v.shape[0])), [x], [lib.float32, lib.int64])
            results.append(sess.run([y, s, n]))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b)
