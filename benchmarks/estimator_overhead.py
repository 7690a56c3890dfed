"""The Estimator's overhead: a premade DNNClassifier against the same model trained by a
hand-written ``MonitoredTrainingSession`` loop.

    python -m benchmarks.estimator_overhead [--repeats 5] [--steps 200] [--threads 1]

Both sides train hidden layers 128-128 on the 64-pixel digits, batch 128, Adagrad 0.05,
from the same ``tf.data`` pipeline (``from_tensor_slices().repeat().batch()``), with the
same checkpoint and summary settings (a checkpoint at the start and the end, summaries
every 100 steps), fetching ``[train_op, loss]`` every step. The hand loop builds the model
with ``tf.feature_column.input_layer`` + ``tf.layers.dense`` + summed sparse softmax cross
entropy. Each round times, in a fresh model_dir, one full ``train(steps=N)`` (graph
building, session start, checkpoints: what a user waits for) and, inside it, the steady
state from step 20 to N (a hook's timestamps), also per CPU second of the process (which
a loaded machine inflates less than wall time); rounds alternate the order of the sides.
``ratio`` < 1 means the Estimator is slower; overhead = 1 - ratio.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

from benchmarks.harness import Result, Settings, parse_settings, report

HIDDEN = [128, 128]
BATCH = 128
SKIP = 20


def _data(tf: Any) -> tuple[Any, Any]:
    from flowmesh.datasets import load_digits

    (x, y), _ = load_digits()

    def input_fn() -> Any:
        return tf.data.Dataset.from_tensor_slices(({"pixels": x}, y)).repeat().batch(BATCH)

    return input_fn, [tf.feature_column.numeric_column("pixels", shape=(64,))]


class _Clock:
    """A hook recording the wall time after each step from ``SKIP`` on."""

    def __init__(self, tf: Any):
        base = tf.train.SessionRunHook

        class Hook(base):
            def __init__(self) -> None:
                self.times: list[float] = []
                self.cpu: list[float] = []

            def after_run(self, run_context: Any, run_values: Any) -> None:
                self.times.append(time.perf_counter())
                self.cpu.append(time.process_time())

        self.hook = Hook()

    def steady_rate(self) -> float:
        times = self.hook.times[SKIP:]
        return (len(times) - 1) / (times[-1] - times[0])

    def cpu_rate(self) -> float:
        """Steps per CPU second of this process (all threads): what a loaded machine's
        waiting for a core does not inflate."""
        cpu = self.hook.cpu[SKIP:]
        return (len(cpu) - 1) / (cpu[-1] - cpu[0])


def _run_estimator(tf: Any, steps: int, config: Any) -> tuple[float, float, float]:
    input_fn, columns = _data(tf)
    clock = _Clock(tf)
    est = tf.estimator.DNNClassifier(HIDDEN, columns, n_classes=10, config=tf.estimator.RunConfig(
        model_dir=tempfile.mkdtemp(prefix="bench_est_"), session_config=config))
    start = time.perf_counter()
    est.train(input_fn, steps=steps, hooks=[clock.hook])
    return steps / (time.perf_counter() - start), clock.steady_rate(), clock.cpu_rate()


def _run_loop(tf: Any, steps: int, config: Any) -> tuple[float, float, float]:
    input_fn, columns = _data(tf)
    clock = _Clock(tf)
    start = time.perf_counter()
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        features, labels = input_fn().make_one_shot_iterator().get_next()
        net = tf.feature_column.input_layer(features, columns)
        for width in HIDDEN:
            net = tf.layers.dense(net, width, activation=tf.nn.relu)
        logits = tf.layers.dense(net, 10)
        loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        tf.summary.scalar("loss", loss)
        train_op = tf.train.AdagradOptimizer(0.05).minimize(loss, global_step=step)
        hooks = [tf.train.StopAtStepHook(num_steps=steps), clock.hook]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=tempfile.mkdtemp(prefix="bench_mts_"),
                                               hooks=hooks, config=config) as sess:
            while not sess.should_stop():
                sess.run([train_op, loss])
    return steps / (time.perf_counter() - start), clock.steady_rate(), clock.cpu_rate()


def main(argv: list[str] | None = None) -> list[dict]:
    settings: Settings = parse_settings(__doc__.splitlines()[0], (), argv, steps=200, repeats=5, warmup=0)
    import logging

    import flowmesh as tf

    logging.getLogger("flowmesh").setLevel(logging.WARNING)
    config = tf.ConfigProto(intra_op_parallelism_threads=settings.threads,
                            inter_op_parallelism_threads=settings.threads)
    sides = [("estimator", _run_estimator), ("mts_loop", _run_loop)]
    total = [Result(name) for name, _ in sides]
    steady = [Result(name) for name, _ in sides]
    cpu = [Result(name) for name, _ in sides]
    for round_index in range(settings.repeats):
        order = range(len(sides)) if round_index % 2 == 0 else reversed(range(len(sides)))
        for i in order:
            whole, inner, per_cpu = sides[i][1](tf, settings.steps, config)
            total[i].rates.append(whole)
            steady[i].rates.append(inner)
            cpu[i].rates.append(per_cpu)
    config_text = f"DNNClassifier {HIDDEN} digits batch {BATCH} Adagrad, {settings.steps} steps"
    records = report("estimator_overhead", config_text + " (whole train call)", total, settings)
    records += report("estimator_overhead", config_text + f" (steady state from step {SKIP})", steady, settings)
    records += report("estimator_overhead", config_text + f" (steady state, per CPU second from step {SKIP})",
                      cpu, settings, unit="steps/cpu-s")
    for r in records:
        print(f"overhead: {1 - r['ratio_paired']:.1%} ({r['config']}; paired median of "
              f"{settings.repeats} rounds, shared machine)")
    return records


if __name__ == "__main__":
    main()
