"""A train_and_evaluate job for tests/estimator/test_train_and_evaluate.py (run by every task
of `flowmesh launch`). With --kill_chief_at N the chief SIGKILLs itself, on its first run,
once the global step reaches N (after a checkpoint), so the launcher restarts it; the
workers then sleep 0.1 s per step so that N comes before max_steps."""

import argparse
import json
import logging
import os
import signal
import time

import numpy as np

import flowmesh as tf


class KillChief(tf.train.SessionRunHook):
    def __init__(self, at_step):
        self._at = at_step

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(tf.train.get_global_step())

    def after_run(self, run_context, run_values):
        if run_values.results >= self._at:
            print(f"KILLING chief at step {run_values.results}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)


class SlowWorker(tf.train.SessionRunHook):
    """Keeps the workers slow so the chief reaches --kill_chief_at mid-training."""

    def after_run(self, run_context, run_values):
        time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--max_steps", type=int, default=60)
    parser.add_argument("--kill_chief_at", type=int, default=0)
    parser.add_argument("--eval_model_dir", default=None,
                        help="the evaluator's own model_dir (no shared file system with the chief)")
    parser.add_argument("--export", action="store_true",
                        help="run a LatestExporter, a BestExporter and a FinalExporter")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -1.0, 2.0, 0.5], np.float32) > 0).astype(np.int64)

    def input_fn():
        return {"x": tf.constant(x)}, tf.constant(y)

    config = tf.estimator.RunConfig(model_dir=args.model_dir, save_checkpoints_steps=10,
                                    log_step_count_steps=0, save_summary_steps=0)
    if args.eval_model_dir and config.task_type == "evaluator":
        config = config.replace(model_dir=args.eval_model_dir)
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column("x", shape=(4,))],
                                        optimizer="Adam", config=config)
    hooks = []
    restarted = int(os.environ.get("FLOWMESH_RESTART_COUNT", "0"))
    if args.kill_chief_at and config.task_type == "chief" and restarted == 0:
        hooks.append(KillChief(args.kill_chief_at))
    if args.kill_chief_at and config.task_type == "worker":
        hooks.append(SlowWorker())
    exporters = []
    if args.export:
        receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
            {"x": tf.placeholder(tf.float32, [None, 4], name="x")})
        exporters = [tf.estimator.LatestExporter("latest", receiver, exports_to_keep=2),
                     tf.estimator.BestExporter("best", receiver, exports_to_keep=1),
                     tf.estimator.FinalExporter("final", receiver)]
    result, _ = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(input_fn, max_steps=args.max_steps, hooks=hooks),
        tf.estimator.EvalSpec(input_fn, steps=None, throttle_secs=0, exporters=exporters))
    if result is not None:
        print("EVAL " + json.dumps({k: float(np.asarray(v)) for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()
