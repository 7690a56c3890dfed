"""Input pipeline throughput: TFRecord -> parse -> map -> shuffle -> batch -> prefetch.

    python -m benchmarks.input_pipeline [--repeats 5] [--steps 40] [--peers tensorflow,raw_read]

Part 1 (examples/s, one batch of 128 per step): the same TF1 program in flowmesh and in
TensorFlow's ``tf.data`` reads one TFRecord file of Examples (784 float32 + an int64
label), ``map(parse_single_example)``, ``map(image * 2 - 1)``, ``shuffle(1000)``,
``repeat``, ``batch(128)``, ``prefetch(2)``, fetching one batch per ``Session.run``. The
practical limit is another contender: reading the same records with their CRC checks in a
Python loop (``tf_record_iterator``, 128 records per step); ``flowmesh_unvectorized`` runs
flowmesh with its map vectorization off (one parse per record, as TensorFlow does).

Part 2 (steps/s): an MLP 64-256-256-10 on the digits, batch 128, SGD, trained in flowmesh
from a TFRecord pipeline (parse + shuffle + batch + prefetch) and, as the peer, from the
same data in memory fed with ``feed_dict``: the ratio says how much of the input work the
prefetch hides behind the training step. ``from_queues`` trains the same model from the
TF1 queue pipeline (``string_input_producer`` -> ``TFRecordReader.read_up_to`` ->
``parse_example`` -> ``shuffle_batch(enqueue_many=True)``, a queue-runner thread) against
an in-memory peer, in rounds of their own. By default the TFRecord pipeline runs on threads;
the ``tfrecord_worker`` peer trains from the same pipeline with its stages below the
outermost ``prefetch`` in a worker process (``options.experimental_worker_process = True``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.harness import (
    Contender,
    Result,
    Settings,
    StepFn,
    import_tensorflow,
    measure,
    parse_settings,
    report,
    tf_config_proto,
)

PEERS = ("tensorflow", "flowmesh_unvectorized", "raw_read", "tfrecord_worker")
BATCH = 128


def write_records(path: str, count: int, width: int, seed: int = 0) -> None:
    """``count`` Examples with a ``width``-float image and a label, in one TFRecord file."""
    import flowmesh as fm

    rng = np.random.default_rng(seed)
    train = fm.train
    with fm.io.TFRecordWriter(path) as writer:
        for i in range(count):
            example = train.Example(features=train.Features(feature={
                "image": train.Feature(float_list=train.FloatList(
                    value=rng.random(width, dtype=np.float32))),
                "label": train.Feature(int64_list=train.Int64List(value=[i % 10]))}))
            writer.write(example.SerializeToString())


def build_pipeline(tf: Any, path: str, width: int, buffer: int = 1000,
                   vectorize: bool = True) -> Any:
    """The benchmark's pipeline with ``tf`` (flowmesh or tensorflow.compat.v1);
    ``vectorize=False`` turns flowmesh's map vectorization off."""
    spec = {"image": tf.FixedLenFeature([width], tf.float32),
            "label": tf.FixedLenFeature([], tf.int64)}
    dataset = tf.data.TFRecordDataset(path) \
        .map(lambda s: tf.parse_single_example(s, spec)) \
        .map(lambda d: (d["image"] * 2.0 - 1.0, d["label"])) \
        .shuffle(buffer, seed=1).repeat()
    if not vectorize:
        options = tf.data.Options()
        options.experimental_optimization.map_vectorization = False
        dataset = dataset.with_options(options)
    dataset = dataset.batch(BATCH).prefetch(2)
    return tf.data.make_one_shot_iterator(dataset).get_next()


def _pipeline_contender(name: str, tf: Any, path: str, config: Any = None,
                        vectorize: bool = True) -> Contender:
    state: dict[str, Any] = {}

    def setup(settings: Settings) -> StepFn:
        graph = tf.Graph()
        with graph.as_default():
            element = build_pipeline(tf, path, 784, vectorize=vectorize)
        sess = state["sess"] = tf.Session(graph=graph, config=config(settings) if config else None)
        return lambda: sess.run(element)

    return Contender(name, setup, lambda: state["sess"].close())


def _raw_read_contender(path: str) -> Contender:
    from flowmesh.data.tfrecord import tf_record_iterator

    def setup(settings: Settings) -> StepFn:
        records = iter(())

        def step() -> None:
            nonlocal records
            for _ in range(BATCH):
                if next(records, None) is None:
                    records = tf_record_iterator(path)
                    next(records)

        return step

    return Contender("raw_read", setup)


def _as_examples(results: Sequence[Result]) -> list[Result]:
    return [Result(r.name, [rate * BATCH for rate in r.rates]) for r in results]


def run_pipeline(settings: Settings, path: str) -> list[dict[str, Any]]:
    """Part 1: examples/s of the pipeline in flowmesh, tf.data and the raw reader."""
    import flowmesh as fm

    contenders = [_pipeline_contender("flowmesh", fm, path)]
    tf1 = import_tensorflow() if "tensorflow" in settings.peers else None
    if tf1 is not None:
        contenders.append(_pipeline_contender("tensorflow", tf1, path,
                                              lambda s: tf_config_proto(tf1, s.threads)))
    if "flowmesh_unvectorized" in settings.peers:
        contenders.append(_pipeline_contender("fm_unvectorized", fm, path, vectorize=False))
    if "raw_read" in settings.peers:
        contenders.append(_raw_read_contender(path))
    results = _as_examples(measure(contenders, settings))
    config = "TFRecord -> parse_single_example(784 f32 + label) -> map -> shuffle(1000) -> " \
             "batch(128) -> prefetch(2)"
    return report("input_pipeline", config, results, settings, unit="examples/s")


def _mlp(tf: Any, x: Any, y: Any) -> Any:
    rng = np.random.RandomState(0)
    h = x
    for i, (n_in, n_out) in enumerate(((64, 256), (256, 256), (256, 10))):
        w = tf.Variable(rng.uniform(-0.1, 0.1, (n_in, n_out)).astype(np.float32), name=f"w{i}")
        b = tf.Variable(np.zeros(n_out, np.float32), name=f"b{i}")
        h = tf.matmul(h, w) + b
        h = tf.nn.relu(h) if i < 2 else h
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss)


def _digits_records(path: str) -> tuple[np.ndarray, np.ndarray]:
    import flowmesh as fm
    from flowmesh.datasets import load_digits

    (x, y), _ = load_digits()
    train = fm.train
    with fm.io.TFRecordWriter(path) as writer:
        for image, label in zip(x, y):
            writer.write(train.Example(features=train.Features(feature={
                "image": train.Feature(float_list=train.FloatList(value=image)),
                "label": train.Feature(int64_list=train.Int64List(value=[label]))}))
                .SerializeToString())
    return x, y


def run_training(settings: Settings, path: str) -> list[dict[str, Any]]:
    """Part 2: MLP steps/s from the TFRecord pipeline vs from memory (both flowmesh)."""
    import flowmesh as fm

    x_all, y_all = _digits_records(path)
    batches = [(x_all[i:i + BATCH], y_all[i:i + BATCH])
               for i in range(0, len(x_all) - BATCH + 1, BATCH)]
    sessions: list[Any] = []

    def from_pipeline(s: Settings, worker_process: bool | None = None) -> StepFn:
        graph = fm.Graph()
        with graph.as_default():
            spec = {"image": fm.FixedLenFeature([64], fm.float32),
                    "label": fm.FixedLenFeature([], fm.int64)}
            dataset = fm.data.TFRecordDataset(path) \
                .map(lambda r: fm.parse_single_example(r, spec)) \
                .map(lambda d: (d["image"], d["label"])).shuffle(1000, seed=1).repeat() \
                .batch(BATCH, drop_remainder=True).prefetch(2)
            if worker_process is not None:
                options = fm.data.Options()
                options.experimental_worker_process = worker_process
                dataset = dataset.with_options(options)
            x, y = dataset.make_one_shot_iterator().get_next()
            train_op = _mlp(fm, x, y)
            init = fm.global_variables_initializer()
        sess = fm.Session(graph=graph)
        sessions.append(sess)
        sess.run(init)
        return lambda: sess.run(train_op)

    def from_memory(s: Settings) -> StepFn:
        graph = fm.Graph()
        with graph.as_default():
            x = fm.placeholder(fm.float32, [None, 64])
            y = fm.placeholder(fm.int64, [None])
            train_op = _mlp(fm, x, y)
            init = fm.global_variables_initializer()
        sess = fm.Session(graph=graph)
        sessions.append(sess)
        sess.run(init)
        cycle = iter(())

        def step() -> None:
            nonlocal cycle
            pair = next(cycle, None)
            if pair is None:
                cycle = iter(batches)
                pair = next(cycle)
            sess.run(train_op, {x: pair[0], y: pair[1]})

        return step

    def from_queues(s: Settings) -> StepFn:
        graph = fm.Graph()
        with graph.as_default():
            x, y = _queue_pipeline(fm, path)
            train_op = _mlp(fm, x, y)
            init = [fm.global_variables_initializer(), fm.local_variables_initializer()]
        sess = fm.Session(graph=graph)
        sess.run(init)
        coord = fm.train.Coordinator()
        threads = fm.train.start_queue_runners(sess, coord)
        stops.append(lambda: (coord.request_stop(), coord.join(threads, stop_grace_period_secs=10)))
        sessions.append(sess)
        return lambda: sess.run(train_op)

    stops: list[Any] = []
    contenders = [Contender("from_tfrecord", from_pipeline), Contender("from_memory", from_memory)]
    if "tfrecord_worker" in settings.peers:
        contenders.append(Contender("tfrecord_worker",
                                    lambda s: from_pipeline(s, worker_process=True)))
    results = measure(contenders, settings)
    # rounds of their own: after each of its rounds the queue runner refills the queue in the
    # background (thousands of records), which would land in the next contender's round
    queues = measure([Contender("from_queues", from_queues),
                      Contender("from_memory", from_memory)], settings)
    for stop in stops:
        stop()
    for sess in sessions:
        sess.close()
    records = report("input_pipeline_training", "digits MLP 64-256-256-10 batch 128 SGD: TFRecord "
                     "pipeline vs feed_dict from memory (flowmesh both)", results[:2], settings)
    records += report("input_pipeline_training_queues", "digits MLP 64-256-256-10 batch 128 SGD: "
                      "TF1 queue pipeline vs feed_dict from memory (flowmesh both)", queues,
                      settings)
    if len(results) > 2:
        records += report("input_pipeline_training_worker", "digits MLP 64-256-256-10 batch 128 "
                          "SGD: TFRecord pipeline in a worker process vs feed_dict from memory",
                          [results[2], results[1]], settings)
    return records


def _queue_pipeline(fm: Any, path: str) -> tuple[Any, Any]:
    """The TF1 queue pipeline of the digits records: batches of (image, label)."""
    spec = {"image": fm.FixedLenFeature([64], fm.float32), "label": fm.FixedLenFeature([], fm.int64)}
    files = fm.train.string_input_producer([path], shuffle=False)
    _, records = fm.TFRecordReader().read_up_to(files, BATCH)
    parsed = fm.parse_example(records, spec)
    return fm.train.shuffle_batch([parsed["image"], parsed["label"]], BATCH, capacity=2000,
                                  min_after_dequeue=1000, seed=1, enqueue_many=True)


def main(argv: Sequence[str] | None = None, examples: int = 20000) -> list[dict[str, Any]]:
    """Runs both parts on ``examples`` records of 784 floats (written to a temporary file)."""
    settings = parse_settings(__doc__ or "", PEERS, argv, repeats=5, steps=40, warmup=50)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.tfrecord")
        write_records(path, examples, 784)
        records = run_pipeline(settings, path)
        records += run_training(settings, os.path.join(tmp, "digits.tfrecord"))
    return records


if __name__ == "__main__":
    main()
