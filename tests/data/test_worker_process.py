"""The input pipeline in a forked worker process: same elements and order as threads, the
end, errors, re-initialisation, teardown (no leaked process), and what stays on threads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.kernels.pipeline import element_wire, worker_process
from tests.data.helpers import assert_same_elements, drain

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker processes need fork")


def _children() -> set[int]:
    """The live (or unreaped) child processes of this process."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            found.add(int(entry))
    return found


def _wait_until(predicate, timeout: float = 20.0) -> bool:
    done = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return True
        done.wait(0.02)
    return predicate()


def _options(worker: bool | None) -> tf.data.Options:
    options = tf.data.Options()
    options.experimental_worker_process = worker
    return options


def _write_examples(path, count: int = 300) -> None:
    rng = np.random.default_rng(0)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(count):
            feature = {
                "image": tf.train.Feature(float_list=tf.train.FloatList(
                    value=rng.random(8, dtype=np.float32))),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "tags": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[b"t%d" % j for j in range(i % 3)])),
                "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"n%d" % i]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature))
                         .SerializeToString())


def _record_pipeline(path):
    spec = {"image": tf.FixedLenFeature([8], tf.float32), "label": tf.FixedLenFeature([], tf.int64),
            "tags": tf.VarLenFeature(tf.string), "name": tf.FixedLenFeature([], tf.string)}
    return tf.data.TFRecordDataset(str(path)).map(lambda r: tf.parse_single_example(r, spec)) \
        .map(lambda d: (d["image"] * 2.0, d["label"], d["tags"], d["name"])) \
        .shuffle(50, seed=3).repeat(2).batch(32).prefetch(2)


def _run(dataset, worker: bool | None) -> tuple[list, set[int]]:
    """All elements with the worker process on/off, and the children seen while running."""
    with tf.Graph().as_default():
        element = dataset().with_options(_options(worker)).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            first = sess.run(element)
            running = _children()
            return [first, *drain(tf, sess, element)], running


def _dense(elements: list) -> list:
    return [(e[0], e[1], e[2].indices, e[2].values, e[2].dense_shape, e[3]) for e in elements]


def test_same_elements_in_the_same_order_as_threads(tmp_path):
    _write_examples(tmp_path / "x.tfrecord")
    before = _children()
    threads, none = _run(lambda: _record_pipeline(tmp_path / "x.tfrecord"), False)
    process, running = _run(lambda: _record_pipeline(tmp_path / "x.tfrecord"), True)
    assert none == before, "with the option off no process starts"
    assert len(running - before) == 1, "one worker process per iterator"
    assert len(process) == 19  # 600 elements in batches of 32
    assert process[-1][0].shape == (600 - 18 * 32, 8)  # the short last batch
    assert_same_elements(_dense(process), _dense(threads))
    assert _wait_until(lambda: _children() == before), "the worker was not reaped at the end"


def test_the_setting_uses_the_worker_for_an_eligible_pipeline(monkeypatch):
    """Off by default (threads); FLOWMESH_DATA_WORKER_PROCESS=1 turns it on everywhere."""
    for setting, workers in (("0", 0), ("1", 1)):
        monkeypatch.setenv("FLOWMESH_DATA_WORKER_PROCESS", setting)
        before = _children()
        with tf.Graph().as_default():
            element = tf.data.Dataset.range(100).map(lambda x: x * 3).batch(10).prefetch(1) \
                .make_one_shot_iterator().get_next()
            with tf.Session() as sess:
                np.testing.assert_array_equal(sess.run(element), np.arange(10) * 3)
                assert len(_children() - before) == workers
                assert len(drain(tf, sess, element)) == 9
        assert _wait_until(lambda: _children() == before)
    monkeypatch.delenv("FLOWMESH_DATA_WORKER_PROCESS")
    assert not worker_process.wanted(True, None), "off by default"


def test_elements_bigger_than_the_socket_buffer_are_received_ahead_by_a_thread():
    big = np.arange(3 << 20, dtype=np.float32)  # 12 MB: more than half of any socket buffer
    before = _children()
    with tf.Graph().as_default():
        element = tf.data.Dataset.range(4).map(lambda i: tf.constant(big) + tf.cast(i, tf.float32)) \
            .prefetch(2).with_options(_options(True)).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            got = [sess.run(element), sess.run(element)]
            receivers = [t for t in threading.enumerate() if t.name.endswith(":receive")]
            assert len(receivers) == 1 and len(_children() - before) == 1
            rest = drain(tf, sess, element)
    assert [float(e[1]) for e in [*got, *rest]] == [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(rest[-1], big + 3.0)
    assert _wait_until(lambda: _children() == before and not receivers[0].is_alive())


@pytest.mark.parametrize("case", ["py_func", "generator", "random", "not_outermost", "option_off",
                                  "nested_dataset"])
def test_ineligible_pipelines_stay_on_threads(case):
    def build():
        base = tf.data.Dataset.range(20)
        if case == "py_func":
            return base.map(lambda x: tf.py_func(lambda v: v + 1, [x], tf.int64)).prefetch(2)
        if case == "generator":
            return tf.data.Dataset.from_generator(lambda: iter(range(20)), tf.int64, []).prefetch(2)
        if case == "random":
            return base.map(lambda x: tf.cast(x, tf.float32) + tf.random.uniform([])).prefetch(2)
        if case == "not_outermost":
            return base.prefetch(2).map(lambda x: x + 1)
        if case == "option_off":
            return base.prefetch(2).with_options(_options(False))
        return base.window(2).prefetch(2).flat_map(lambda w: w)

    before = _children()
    with tf.Graph().as_default():
        element = build().make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            sess.run(element)
            assert _children() == before
            assert len(drain(tf, sess, element)) == 19


def test_setting_turns_the_worker_off(monkeypatch):
    monkeypatch.setenv("FLOWMESH_DATA_WORKER_PROCESS", "0")
    assert not worker_process.wanted(True, None)
    assert worker_process.wanted(True, True), "the option still forces it"
    monkeypatch.setenv("FLOWMESH_DATA_WORKER_PROCESS", "1")
    assert not worker_process.wanted(False, True), "never for an ineligible pipeline"
    assert not worker_process.wanted(True, False)


def test_reinitialisation_reads_new_feeds_and_reaps_the_old_worker():
    before = _children()
    with tf.Graph().as_default():
        data = tf.placeholder(tf.float32, [None])
        iterator = tf.data.Dataset.from_tensor_slices(data).map(lambda v: v + 1.0).batch(2) \
            .prefetch(2).with_options(_options(True)).make_initializable_iterator()
        element = iterator.get_next()
        with tf.Session() as sess:
            sess.run(iterator.initializer, {data: np.arange(5, dtype=np.float32)})
            np.testing.assert_array_equal(sess.run(element), [1.0, 2.0])
            first = _children() - before
            sess.run(iterator.initializer, {data: np.full(3, 10.0, np.float32)})
            second = _children() - before
            assert len(first) == len(second) == 1 and first != second
            assert [list(e) for e in drain(tf, sess, element)] == [[11.0, 11.0], [11.0]]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(element)
    assert _wait_until(lambda: _children() == before)


def test_a_failing_function_raises_its_error_and_the_worker_stops():
    def checked(x):
        with tf.control_dependencies([tf.debugging.assert_less(x, tf.constant(3, tf.int64),
                                                               message="x too large")]):
            return tf.identity(x)

    before = _children()
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(10).map(checked).prefetch(2).with_options(_options(True))
        element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert [sess.run(element) for _ in range(3)] == [0, 1, 2]
            with pytest.raises(tf.errors.InvalidArgumentError, match="x too large"):
                sess.run(element)
            assert _wait_until(lambda: _children() == before), "the worker outlived its error"
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(element)


def test_errors_cross_with_their_class_and_python_errors_with_their_traceback():
    def fail():
        raise ValueError("bad value in a stage")

    try:
        fail()
    except ValueError as exc:
        fields = worker_process._error_fields(exc, "it")
    error = worker_process._error_from(fields)
    assert isinstance(error, tf.errors.InvalidArgumentError)
    assert "bad value in a stage" in error.message and "Traceback" in error.message
    assert "in fail" in error.message
    lost = worker_process._error_from(worker_process._error_fields(
        tf.errors.DataLossError(None, None, "corrupted record at 12"), "it"))
    assert type(lost) is tf.errors.DataLossError and lost.message == "corrupted record at 12"


def test_session_close_mid_stream_reaps_the_worker():
    before = _children()
    with tf.Graph().as_default():
        element = tf.data.Dataset.range(10**9).map(lambda x: x + 1).prefetch(4) \
            .with_options(_options(True)).make_one_shot_iterator().get_next()
        sess = tf.Session()
        assert sess.run(element) == 1
        assert len(_children() - before) == 1
        sess.close()
    assert _wait_until(lambda: _children() == before)


def test_a_killed_worker_is_an_internal_error():
    before = _children()
    with tf.Graph().as_default():
        element = tf.data.Dataset.range(10**9).prefetch(1).with_options(_options(True)) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert sess.run(element) == 0
            (pid,) = _children() - before
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(tf.errors.InternalError, match="worker process .* exited"):
                for _ in range(1000):  # elements already sent (in the socket) still arrive
                    sess.run(element)
    assert _wait_until(lambda: _children() == before)


_ORPHAN = textwrap.dedent("""
    import os, sys
    import flowmesh as tf
    element = tf.data.Dataset.range(10**9).prefetch(2).make_one_shot_iterator().get_next()
    sess = tf.Session()
    sess.run(element)
    print(" ".join(sorted(os.listdir(f"/proc/{os.getpid()}/task"))), flush=True)
    workers = [p for p in os.listdir("/proc") if p.isdigit() and
               open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == str(os.getpid())]
    print(" ".join(workers), flush=True)
    if sys.argv[1] == "crash":
        os._exit(3)  # no cleanup at all: the worker must notice by itself
    # "exit": leave without closing the session (atexit stops the pipeline)
""")


@pytest.mark.parametrize("how", ["crash", "exit"])
def test_the_worker_ends_with_its_parent(how):
    proc = subprocess.run([sys.executable, "-c", _ORPHAN, how], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "FLOWMESH_DATA_WORKER_PROCESS": "1"})
    assert proc.returncode == (3 if how == "crash" else 0), proc.stderr
    workers = [int(p) for p in proc.stdout.splitlines()[1].split()]
    assert len(workers) == 1

    def gone() -> bool:
        try:
            with open(f"/proc/{workers[0]}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # reparented zombie
        except OSError:
            return True

    assert _wait_until(gone, 30), "the worker outlived its parent"


@pytest.mark.parametrize("value", [
    np.arange(12, dtype=np.float32).reshape(3, 4), np.array(7, dtype=np.int64),
    np.zeros((0, 3), np.float64), np.array([True, False]), np.array([1.5], dtype=np.float16)])
def test_wire_round_trip_of_tensors(value):
    import torch

    tensor = torch.from_numpy(value.copy())
    for given in (tensor, tensor.to(torch.bfloat16) if value.dtype.kind == "f" else tensor, value):
        data = b"".join(element_wire.encode((given,)))
        kind, layout_size, body_size = element_wire.HEADER.unpack_from(data)
        assert kind == element_wire.ELEMENT
        body = bytearray(data[element_wire.HEADER.size:])
        (got,) = element_wire.decode(body[:layout_size], body, layout_size)
        assert type(got) is type(given)
        assert got.dtype == given.dtype and tuple(got.shape) == tuple(given.shape)
        np.testing.assert_array_equal(np.asarray(got.float() if isinstance(got, torch.Tensor)
                                                 else got, dtype=np.float64),
                                      np.asarray(given.float() if isinstance(given, torch.Tensor)
                                                 else given, dtype=np.float64))


def test_wire_round_trip_of_strings_and_sparse_values():
    import torch

    from flowmesh.kernels.pipeline.sparse_value import SparseValue

    words = np.empty((2, 2), dtype=object)
    words[:] = [[b"", b"ab"], [b"\x00c", b"long" * 100]]
    sparse = SparseValue(torch.tensor([[0, 1], [2, 0]]), np.array([b"x", b"yz"], dtype=object),
                         torch.tensor([3, 2]))
    data = b"".join(element_wire.encode((words, b"record", sparse)))
    _, layout_size, _ = element_wire.HEADER.unpack_from(data)
    body = bytearray(data[element_wire.HEADER.size:])
    got_words, got_bytes, got_sparse = element_wire.decode(body[:layout_size], body, layout_size)
    assert got_words.shape == (2, 2) and got_words.tolist() == words.tolist()
    assert got_bytes == b"record"
    assert got_sparse.values.tolist() == [b"x", b"yz"]
    assert got_sparse.indices.tolist() == [[0, 1], [2, 0]] and got_sparse.shape == (3, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot leave"):
        element_wire.encode((object(),))
