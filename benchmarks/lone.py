"""Each contender in its own fresh process, as a user runs it: the model-scale harness.

:mod:`benchmarks.harness` builds every contender in one process. That process then holds
TensorFlow, torch and flowmesh at once, and steps of one system run right after the
other's, on the same thread pools and the same heap. A user's program runs one system
alone. Here every (round, contender) pair is a fresh ``python -m benchmarks.model_scale
--worker ...`` process that imports only its own system, builds the model, runs
``warmup`` untimed steps, times ``steps`` steps and prints one JSON line. Contenders
alternate within and between rounds (``a b``, ``b a``, ...), so drift of a shared machine
hits both alike. The parent imports neither system.

A worker's record::

    {"rate": 12.3, "cpu_ms_per_step": 150.2, "build_s": 0.41, "first_run_s": 0.95, "ops": 1234,
     "flops": 4.1e9}

``rate`` is steps per second of the timed block; ``cpu_ms_per_step`` the process's CPU time
per timed step (all its threads: on a loaded machine, with one thread, a measure of work
that contention disturbs less than the rate); ``build_s`` the seconds from the first
graph op to the finished graph; ``first_run_s`` the seconds from session creation to the
end of the first training step (initialization included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness import Result, Settings

MARK = "LONE "
StepFn = Callable[[], Any]


@dataclass
class Built:
    """What a model's ``build`` returns: the step to time and facts about the graph."""

    step: StepFn
    ops: int = 0
    flops: float = 0.0  # floating-point operations of one step, 0 where not counted
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class System:
    """A contender: how its worker imports the TF1 API and the environment it runs in."""

    name: str
    load: Callable[[], Any]
    env: dict[str, str] = field(default_factory=dict)


def load_flowmesh() -> Any:
    import flowmesh

    return flowmesh


def load_tensorflow() -> Any:
    import tensorflow.compat.v1 as tf1

    tf1.disable_eager_execution()
    tf1.logging.set_verbosity(tf1.logging.ERROR)
    return tf1


# TensorFlow 2.16+ keeps tf.compat.v1.layers in tf-keras: TF_USE_LEGACY_KERAS=1 is how a
# TF1 program with tf.layers runs on it.
SYSTEMS = {
    "flowmesh": System("flowmesh", load_flowmesh),
    "tensorflow": System("tensorflow", load_tensorflow,
                         {"TF_CPP_MIN_LOG_LEVEL": "2", "TF_USE_LEGACY_KERAS": "1"}),
    # diagnostics, not a default peer: flowmesh pinned to one intra-op thread
    "flowmesh_1t": System("flowmesh_1t", load_flowmesh, {"FLOWMESH_INTRA_OP_THREADS": "1"}),
}


def session(tf: Any, graph: Any, threads: int) -> Any:
    """A session with the system's defaults (``threads`` 0) or ``threads`` intra/inter-op."""
    if not threads:
        return tf.Session(graph=graph)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    return tf.Session(graph=graph, config=config)


def worker(build: Callable[[Any, int], Built], system: str, steps: int, warmup: int, threads: int) -> dict:
    """Runs in the worker process: loads ``system``, builds, warms up, times; prints the record."""
    tf = SYSTEMS[system].load()
    built = build(tf, threads)
    for _ in range(warmup):
        built.step()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        built.step()
    rate = steps / (time.perf_counter() - start)
    cpu_ms = (time.process_time() - cpu) / steps * 1e3
    record = {"rate": rate, "cpu_ms_per_step": cpu_ms, "ops": built.ops, "flops": built.flops, **built.extra}
    print(MARK + json.dumps(record), flush=True)
    return record


def run_worker(module: str, model: str, system: str, settings: Settings, timeout: float = 900.0) -> dict:
    """Starts one worker process and returns its record."""
    args = [sys.executable, "-m", module, "--worker", system, "--models", model,
            "--steps", str(settings.steps), "--warmup", str(settings.warmup),
            "--threads", str(settings.threads)]
    env = dict(os.environ, **SYSTEMS[system].env)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=root, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{system} worker for {model} failed (exit {done.returncode}):\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return json.loads(lines[-1][len(MARK):])


def measure_lone(module: str, model: str, systems: Sequence[str], settings: Settings,
                 value: Callable[[dict], float] = lambda r: r["rate"]) -> tuple[list[Result], list[list[dict]]]:
    """``settings.repeats`` rounds; each round runs every system once, each in a fresh
    process, in alternating order.

    Returns:
        One :class:`Result` per system (``value`` of each record, in the given order) and
        every record, per system.
    """
    results = [Result(s) for s in systems]
    records: list[list[dict]] = [[] for _ in systems]
    order = list(range(len(systems)))
    for round_index in range(settings.repeats):
        for i in order if round_index % 2 == 0 else order[::-1]:
            record = run_worker(module, model, systems[i], settings)
            records[i].append(record)
            results[i].rates.append(value(record))
    return results, records
