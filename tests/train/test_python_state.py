"""tf.train.Saver saves tf.train.experimental.PythonState objects as strings."""

from __future__ import annotations

from pathlib import Path

import pytest

import flowmesh as tf


class Counter(tf.train.experimental.PythonState):
    def __init__(self, n: int = 0):
        self.n = n

    def serialize(self) -> bytes:
        return str(self.n).encode()

    def deserialize(self, string_value: bytes) -> None:
        self.n = int(string_value)


def test_python_state_is_abstract() -> None:
    with pytest.raises(TypeError):
        tf.train.experimental.PythonState()  # type: ignore[abstract]


@pytest.mark.parametrize("kwargs", [{}, {"sharded": True}, {"write_version": tf.train.SaverDef.V2}])
def test_saver_round_trip(tmp_path: Path, kwargs: dict) -> None:
    counter = Counter(7)
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        saver = tf.train.Saver({"w": w, "counter": counter}, **kwargs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"))
            counter.n = 99
            sess.run(w.assign([0.0, 0.0]))
            saver.restore(sess, path)
            assert sess.run(w).tolist() == [1.0, 2.0]
    assert counter.n == 7
    reader = tf.train.load_checkpoint(path)
    assert reader.get_tensor("counter_py_state") == b"7"
    assert dict(tf.train.list_variables(path))["counter_py_state"] == []


def test_tensorflow_reads_the_python_state(tmp_path: Path) -> None:
    tft = pytest.importorskip("tensorflow")
    with tf.Graph().as_default():
        saver = tf.train.Saver({"counter": Counter(3)}, write_version=tf.train.SaverDef.V2)
        with tf.Session() as sess:
            path = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    assert tft.train.load_checkpoint(path).get_tensor("counter_py_state") == b"3"


def test_python_state_needs_a_name() -> None:
    with tf.Graph().as_default(), pytest.raises(TypeError, match="dict"):
        tf.train.Saver([Counter()])
