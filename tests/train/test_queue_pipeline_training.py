"""The classic TF1 input pipeline end to end on real TFRecord files:
string_input_producer(num_epochs) -> TFRecordReader -> parse_single_example ->
shuffle_batch -> training, under start_queue_runners + Coordinator and under
MonitoredTrainingSession; it ends with OutOfRangeError after exactly num_epochs. Also:
stopping the coordinator never hangs a blocked enqueue or dequeue."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import flowmesh as tf

N_FILES, PER_FILE, DIM, EPOCHS, BATCH = 3, 40, 6, 2, 16


@pytest.fixture(scope="module")
def record_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("queue_pipeline")
    rng = np.random.RandomState(0)
    w = rng.randn(DIM).astype(np.float32)
    paths = []
    for f in range(N_FILES):
        path = str(root / f"train-{f}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(PER_FILE):
                x = rng.randn(DIM).astype(np.float32)
                feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
                           "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(x @ w > 0)]))}
                writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
        paths.append(path)
    return paths


def _model(files, allow_smaller):
    tf.set_random_seed(5)
    filename_queue = tf.train.string_input_producer(files, num_epochs=EPOCHS, seed=1)
    key, serialized = tf.TFRecordReader().read(filename_queue)
    parsed = tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([DIM], tf.float32),
                                                  "y": tf.FixedLenFeature([], tf.int64)})
    x, y, keys = tf.train.shuffle_batch([parsed["x"], parsed["y"], key], BATCH, capacity=60,
                                        min_after_dequeue=20, num_threads=2, seed=3,
                                        allow_smaller_final_batch=allow_smaller)
    logits = tf.layers.dense(x, 2, name="linear")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
    return train_op, loss, keys


def test_train_with_queue_runners_and_coordinator(record_files):
    with tf.Graph().as_default():
        train_op, loss, keys = _model(record_files, allow_smaller=True)
        seen, losses = [], []
        config = tf.ConfigProto(operation_timeout_in_ms=30000)
        with tf.Session(config=config) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            try:
                while not coord.should_stop():
                    _, value, batch_keys = sess.run([train_op, loss, keys])
                    losses.append(value)
                    seen.extend(batch_keys.tolist())
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
            assert not any(t.is_alive() for t in threads)
    total = N_FILES * PER_FILE * EPOCHS
    assert len(seen) == total  # every record exactly num_epochs times, nothing more
    assert all(seen.count(k) == EPOCHS for k in set(seen)) and len(set(seen)) == N_FILES * PER_FILE
    assert {k.rsplit(b":", 1)[0].decode() for k in seen} == set(record_files)
    assert np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3])  # it learns (about 0.28 vs 1.0 here)


def test_monitored_training_session_starts_runners_and_stops_at_the_end(record_files):
    with tf.Graph().as_default():
        train_op, loss, _ = _model(record_files, allow_smaller=False)
        steps = 0
        with tf.train.MonitoredTrainingSession(config=tf.ConfigProto(operation_timeout_in_ms=30000)) as sess:
            while not sess.should_stop():
                sess.run(train_op)
                steps += 1
        # Full batches only: the last partial batch is dropped, then OutOfRange ends the loop.
        assert steps == (N_FILES * PER_FILE * EPOCHS) // BATCH


def test_request_stop_cancels_a_blocked_enqueue_and_dequeue():
    with tf.Graph().as_default():
        full = tf.train.batch([tf.constant(1.0)], 1, capacity=2)  # its runner blocks on a full queue
        starved = tf.FIFOQueue(2, tf.float32, shapes=[[]])
        tf.train.add_queue_runner(tf.train.QueueRunner(starved, [starved.enqueue_many([[]])]))
        pop = starved.dequeue()
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert sess.run(full).tolist() == [1.0]
            box = {}

            def consume():
                try:
                    sess.run(pop)
                except tf.errors.OpError as exc:
                    box["error"] = exc

            consumer = threading.Thread(target=consume, daemon=True)
            consumer.start()
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)  # raises if a thread is stuck
            consumer.join(10)
            assert not consumer.is_alive()
            assert isinstance(box["error"], (tf.errors.OutOfRangeError, tf.errors.CancelledError))


def test_a_failing_reader_stops_the_coordinator_with_its_error(tmp_path):
    with tf.Graph().as_default():
        queue = tf.train.string_input_producer([str(tmp_path / "missing.tfrecord")])
        _, value = tf.TFRecordReader().read(queue)
        batch = tf.train.batch([value], 2)
        with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=30000)) as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            with pytest.raises((tf.errors.CancelledError, tf.errors.OutOfRangeError)):
                sess.run(batch)  # the batch queue is closed when the runner fails
            with pytest.raises(tf.errors.NotFoundError, match="missing.tfrecord"):
                coord.join(threads, stop_grace_period_secs=10)
