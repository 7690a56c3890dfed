"""Iterators across Session.run steps, re-initialisation, errors and pipeline threads."""

from __future__ import annotations

import gc
import threading
import tracemalloc

import numpy as np
import pytest

import flowmesh as tf
from tests.data.helpers import drain


def _pipeline_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("flowmesh-data:")]


def _wait_no_pipeline_threads(timeout: float = 10.0) -> None:
    deadline = threading.Event()
    for _ in range(int(timeout / 0.05)):
        if not _pipeline_threads():
            return
        deadline.wait(0.05)
    raise AssertionError(f"pipeline threads left: {_pipeline_threads()}")


def test_initializable_iterator_reads_feeds_at_each_initialisation():
    with tf.Graph().as_default():
        data = tf.placeholder(tf.float32, [None, 2])
        iterator = tf.data.Dataset.from_tensor_slices(data).map(lambda v: v * 2.0).batch(2) \
            .make_initializable_iterator()
        element = iterator.get_next()
        assert element.shape.as_list() == [None, 2]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
                sess.run(element)
            sess.run(iterator.initializer, {data: np.ones((3, 2), np.float32)})
            got = drain(tf, sess, element)
            assert [g.shape for g in got] == [(2, 2), (1, 2)]
            sess.run(iterator.initializer, {data: np.full((1, 2), 5.0, np.float32)})
            np.testing.assert_array_equal(sess.run(element), [[10.0, 10.0]])
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(element)


def test_from_structure_switches_between_datasets():
    with tf.Graph().as_default():
        train = tf.data.Dataset.range(100).batch(10)
        valid = tf.data.Dataset.range(1000, 1003).batch(10)
        iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
        element = iterator.get_next()
        train_init, valid_init = iterator.make_initializer(train), iterator.make_initializer(valid)
        with pytest.raises(TypeError, match="output types"):
            iterator.make_initializer(tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32)))
        with tf.Session() as sess:
            sess.run(train_init)
            assert list(sess.run(element)) == list(range(10))
            sess.run(valid_init)
            assert list(sess.run(element)) == [1000, 1001, 1002]
            sess.run(train_init)
            assert list(sess.run(element)) == list(range(10))


def test_string_handle_selects_the_iterator_per_step():
    with tf.Graph().as_default():
        a = tf.data.Dataset.range(0, 100).make_one_shot_iterator()
        b = tf.data.Dataset.range(100, 200).make_one_shot_iterator()
        handle = tf.placeholder(tf.string, [])
        element = tf.data.Iterator.from_string_handle(handle, a.output_types).get_next()
        with tf.Session() as sess:
            ha, hb = sess.run([a.string_handle(), b.string_handle()])
            got = [sess.run(element, {handle: h}) for h in (ha, ha, hb, ha)]
            assert got == [0, 1, 100, 2]


def test_one_shot_iterator_across_steps_and_compat_name():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(6)).batch(4)
        element = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        total = tf.reduce_sum(element)
        with tf.Session() as sess:
            assert sess.run(total) == 6
            assert sess.run(total) == 9
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                sess.run(total)


def test_one_shot_iterator_builds_its_dataset_once():
    # the dataset's ops are copied into the iterator's dataset_factory: no step runs them
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(10).map(lambda x: x * tf.constant(3, tf.int64)) \
            .shuffle(4, seed=1).batch(5)
        iterator = dataset.make_one_shot_iterator()
        handle = iterator._iterator_resource.op
        assert list(handle.inputs) == [] and handle.attrs["dataset_factory"] is not None
        element = iterator.get_next()
        with tf.Session() as sess:
            values = drain(tf, sess, element)
    assert sorted(np.concatenate(values).tolist()) == list(range(0, 30, 3))


def test_one_shot_iterator_over_state_takes_the_dataset_as_an_input():
    # a map reading a variable cannot be captured by value: the dataset stays an input
    with tf.Graph().as_default():
        scale = tf.Variable(2, dtype=tf.int64)
        iterator = tf.data.Dataset.range(4).map(lambda x: x * scale).make_one_shot_iterator()
        assert len(iterator._iterator_resource.op.inputs) == 1
        element = iterator.get_next()
        with tf.Session() as sess:
            sess.run(scale.initializer)
            assert drain(tf, sess, element) == [0, 2, 4, 6]


def test_monitored_training_session_stops_at_the_end_of_the_data():
    with tf.Graph().as_default():
        x = tf.data.Dataset.from_tensor_slices(np.arange(20, dtype=np.float32)).repeat(2) \
            .batch(4).prefetch(2).make_one_shot_iterator().get_next()
        w = tf.Variable(0.0)
        step = tf.train.get_or_create_global_step()
        train_op = tf.group(tf.assign_add(w, tf.reduce_sum(x)), tf.assign_add(step, 1))
        steps = 0
        with tf.train.MonitoredTrainingSession() as sess:
            while not sess.should_stop():
                sess.run(train_op)
                steps += 1
        assert steps == 10


def test_map_error_surfaces_with_traceback_and_stops_threads():
    def explode(x):
        if x == 3:
            raise ValueError("bad element three")
        return x

    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(10).map(
            lambda x: tf.py_func(explode, [x], tf.int64), num_parallel_calls=2).prefetch(4)
        element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert [sess.run(element) for _ in range(3)] == [0, 1, 2]
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(element)
            assert "bad element three" in str(info.value)
            assert "in explode" in str(info.value) or "explode" in str(info.value)
            assert "Traceback" in str(info.value)
            _wait_no_pipeline_threads()
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(element)


def test_session_close_stops_a_running_pipeline():
    options = tf.data.Options()
    options.experimental_worker_process = False  # threads (tests/data/test_worker_process.py)
    with tf.Graph().as_default():
        element = tf.data.Dataset.range(10**9).map(lambda x: x + 1, num_parallel_calls=2) \
            .prefetch(8).with_options(options).make_one_shot_iterator().get_next()
        sess = tf.Session()
        assert sess.run(element) == 1
        assert _pipeline_threads(), "prefetch/parallel map should run on threads"
        sess.close()
        _wait_no_pipeline_threads()


def test_prefetch_runs_ahead_of_the_consumer():
    produced = [threading.Event() for _ in range(6)]

    def gen():
        for i in range(6):
            produced[i].set()
            yield i

    with tf.Graph().as_default():
        element = tf.data.Dataset.from_generator(gen, tf.int64, []).prefetch(4) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert sess.run(element) == 0
            # without another get_next, the prefetch thread produces elements 1..4
            assert produced[4].wait(10), "prefetch did not run ahead"
            assert drain(tf, sess, element) == [1, 2, 3, 4, 5]


def test_shuffle_memory_is_bounded_by_the_buffer_over_many_epochs():
    """String elements live in Python memory (tracemalloc sees them): the peak must not grow
    with the number of epochs, and the buffer never holds more than buffer_size elements."""
    words = np.array([bytes([65 + i % 26]) * 2000 for i in range(400)], dtype=object)

    def peak_for(epochs: int) -> tuple[int, int]:
        with tf.Graph().as_default():
            element = tf.data.Dataset.from_tensor_slices(words).shuffle(50, seed=1).repeat(epochs) \
                .batch(100).make_one_shot_iterator().get_next()
            with tf.Session() as sess:
                sess.run(element)
                gc.collect()
                tracemalloc.start()
                base = tracemalloc.get_traced_memory()[0]
                count = 1 + len(drain(tf, sess, element))
                peak = tracemalloc.get_traced_memory()[1] - base
                tracemalloc.stop()
        assert count == 4 * epochs
        return peak, 0

    few, _ = peak_for(2)
    many, _ = peak_for(12)
    # 50 buffered elements + a batch of 100 are ~0.3 MB; 12 epochs hold 4.8M elements' worth
    # if anything accumulated: allow generous noise but far below accumulation
    assert many < few + 1_000_000, (few, many)


def test_shuffle_buffer_peak_statistic():
    from flowmesh.kernels.iterator_ops import IteratorState

    with tf.Graph().as_default():
        iterator = tf.data.Dataset.range(1000).shuffle(37, seed=5).repeat(5) \
            .make_initializable_iterator(shared_name="shuffle_peak")
        element = iterator.get_next()
        with tf.Session() as sess:
            sess.run(iterator.initializer)
            assert len(drain(tf, sess, element)) == 5000
            states = [r for d in sess._backend.devices for _, r in d.resources.items()
                      if isinstance(r, IteratorState)]
            assert states and states[0].ctx.stats["shuffle_buffer"] == 37


def test_cache_file_is_written_once_and_replayed(tmp_path):
    calls = []

    def record(x):
        calls.append(int(x))
        return x

    path = str(tmp_path / "cache")
    for _ in range(2):
        with tf.Graph().as_default():
            element = tf.data.Dataset.from_tensor_slices(np.array([b"x", b"yy", b"zzz"], dtype=object)) \
                .enumerate().map(lambda i, s: (tf.py_func(record, [i], tf.int64), s)) \
                .cache(path).repeat(2).make_one_shot_iterator().get_next()
            with tf.Session() as sess:
                got = drain(tf, sess, element)
        assert [(int(i), s) for i, s in got] == [(0, b"x"), (1, b"yy"), (2, b"zzz")] * 2
    assert calls == [0, 1, 2], "the cached pass ran the map again"
    assert (tmp_path / "cache.flowmesh-cache").exists()


def test_list_files_sorted_and_missing_pattern(tmp_path):
    for name in ("b.txt", "a.txt", "c.bin"):
        (tmp_path / name).write_bytes(b"1")
    with tf.Graph().as_default():
        files = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
        element = files.make_one_shot_iterator().get_next()
        missing = tf.data.Dataset.list_files(str(tmp_path / "*.none")).make_one_shot_iterator()
        with tf.Session() as sess:
            assert drain(tf, sess, element) == [str(tmp_path / n).encode() for n in ("a.txt", "b.txt")]
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"\*\.none"):
                sess.run(missing.get_next())


def test_bad_arguments_name_the_problem():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="scalar"):
            tf.data.Dataset.from_tensor_slices(np.float32(1.0))
        with pytest.raises(ValueError, match="0th dimension"):
            tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
        with pytest.raises(ValueError, match="scalar bool"):
            tf.data.Dataset.range(3).filter(lambda x: x)
        element = tf.data.Dataset.range(5).map(lambda x: tf.range(x)).batch(2) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="padded_batch"):
            sess.run(element)


@pytest.mark.timeout(60)
def test_interpreter_exits_cleanly_with_a_running_pipeline(tmp_path):
    """A program that never closes its session: the pipeline threads are stopped at exit
    (no hang, no abort from a thread still inside torch during finalization)."""
    import subprocess
    import sys

    script = tmp_path / "leave_running.py"
    script.write_text(
        "import torch\n"
        "torch.set_num_threads(1)\n"
        "import flowmesh as tf\n"
        "from benchmarks.input_pipeline import build_pipeline, write_records\n"
        f"write_records({str(tmp_path / 'r.tfrecord')!r}, 600, 784)\n"
        f"x = build_pipeline(tf, {str(tmp_path / 'r.tfrecord')!r}, 784, vectorize=False)\n"
        "sess = tf.Session()\n"
        "for _ in range(3):\n"
        "    print(sess.run(x)[0].shape)\n")
    from flowmesh.testing.cluster import REPO, child_env

    for _ in range(2):  # without the exit handler this aborted 2 runs in 3
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                timeout=50, env=child_env(), cwd=REPO)
        assert result.returncode == 0, result.stderr[-2000:]
        assert "(128, 784)" in result.stdout


def test_sparse_map_output_is_a_sparse_element():
    with tf.Graph().as_default():
        records = tf.data.Dataset.from_tensors(tf.constant(b""))
        parsed = records.map(lambda s: tf.parse_single_example(s, {"v": tf.VarLenFeature(tf.int64)}))
        assert isinstance(parsed.element_spec["v"], tf.SparseTensorSpec)
        dense = records.map(lambda s: tf.sparse.to_dense(
            tf.parse_single_example(s, {"v": tf.VarLenFeature(tf.int64)})["v"]))
        with tf.Session() as sess:
            assert sess.run(dense.make_one_shot_iterator().get_next()).tolist() == []
            value = sess.run(parsed.make_one_shot_iterator().get_next()["v"])
            assert value.dense_shape.tolist() == [0] and value.values.tolist() == []


@pytest.mark.timeout(60)
def test_one_shot_iterator_on_another_task_builds_its_dataset_there():
    # the dataset_factory function travels with the iterator's partition to the other server
    from flowmesh.testing.cluster import cluster_dict

    cluster = tf.train.ClusterSpec(cluster_dict({"worker": 2}))
    servers = [tf.train.Server(cluster, job_name="worker", task_index=i) for i in range(2)]
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            dataset = tf.data.Dataset.range(10).map(lambda x: x * 2).shuffle(3, seed=1).batch(4)
            element = dataset.make_one_shot_iterator().get_next()
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(element)
        with tf.Session(servers[0].target) as sess:
            sums = drain(tf, sess, total)
    assert len(sums) == 3 and sum(sums) == 90
