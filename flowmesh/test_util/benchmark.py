"""``tf.test.Benchmark``: time ops in a session and report each benchmark as TensorFlow's
``BenchmarkEntry`` (printed: name, iterations, wall time, throughput, extras)."""

from __future__ import annotations

import inspect
import math
import time
from typing import Any

from flowmesh.core.default_session import get_default_session
from flowmesh.runtime.options import ConfigProto, RunMetadata, RunOptions
from flowmesh.tf_logging import info


def benchmark_config() -> ConfigProto:
    """A ``ConfigProto`` for benchmarks (TensorFlow's turns Grappler's dependency optimizer
    off; flowmesh has no graph rewriter, so it is the default configuration)."""
    return ConfigProto()


def _median(values: list[float]) -> float:
    if not values:
        return -1.0
    s = sorted(values)
    return (s[len(s) // 2] + s[(len(s) - 1) // 2]) / 2.0


def _mean_and_stdev(values: list[float]) -> tuple[float, float]:
    if not values:
        return -1.0, -1.0
    mean = sum(values) / len(values)
    if len(values) == 1:
        return mean, -1.0
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


class Benchmark:
    """Base class of benchmarks: methods named ``benchmark*`` call :meth:`report_benchmark`
    or :meth:`run_op_benchmark`."""

    def __init__(self) -> None:
        self._session: Any = None
        self.reported: list[dict[str, Any]] = []

    def _get_name(self, overwrite_name: str | None = None) -> str:
        if overwrite_name:
            return overwrite_name
        for frame in inspect.stack():
            if frame.function.startswith("benchmark") and frame.frame.f_locals.get("self") is self:
                return f"{type(self).__name__}.{frame.function}"
        return type(self).__name__

    def report_benchmark(self, iters: int | None = None, cpu_time: float | None = None,
                         wall_time: float | None = None, throughput: float | None = None,
                         extras: dict | None = None, name: str | None = None, metrics: list | None = None) -> None:
        """Records (and prints) one benchmark entry.

        Raises:
            TypeError: ``extras`` is not a dict, or ``metrics`` not a list of dicts with
                ``name`` and ``value``.
        """
        if extras is not None and not isinstance(extras, dict):
            raise TypeError("extras must be a dict")
        if metrics is not None:
            if not isinstance(metrics, list):
                raise TypeError("metrics must be a list")
            for metric in metrics:
                if "name" not in metric or "value" not in metric:
                    raise TypeError("metric must has a 'name' and a 'value' field")
        entry = {"name": self._get_name(name), "iters": iters, "cpu_time": cpu_time, "wall_time": wall_time,
                 "throughput": throughput, "extras": dict(extras or {}), "metrics": list(metrics or [])}
        self.reported.append(entry)
        info("Benchmark [%s] iters: %d, wall_time: %g, cpu_time: %g, throughput: %g, extras: %s, metrics: %s",
             entry["name"], -1 if iters is None else iters, -1 if wall_time is None else wall_time,
             -1 if cpu_time is None else cpu_time, -1 if throughput is None else throughput,
             entry["extras"] or "None", entry["metrics"] or "None")
        fields = " ".join(f"{k}: {v}" for k, v in entry.items() if v not in (None, {}, []) and k != "name")
        print(f'entry {{ name: "{entry["name"]}" {fields} }}')

    def run_op_benchmark(self, sess: Any, op_or_tensor: Any, feed_dict: Any = None, burn_iters: int = 2,
                         min_iters: int = 10, store_trace: bool = False, store_memory_usage: bool = True,
                         name: str | None = None, extras: dict | None = None, mbs: float = 0) -> dict:
        """Runs ``op_or_tensor`` ``burn_iters`` times untimed, then ``min_iters`` times timed;
        reports the median wall time. Returns the reported values, plus ``wall_time_mean``,
        ``wall_time_stdev`` (and ``full_trace_chrome_format`` with ``store_trace``) in extras."""
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(min_iters):
            start = time.time()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.time() - start)
        extras = dict(extras or {})
        unreported: dict[str, Any] = {}
        if store_trace:
            from flowmesh.runtime.timeline import Timeline

            metadata = RunMetadata()
            sess.run(op_or_tensor, feed_dict=feed_dict, options=RunOptions(trace_level=RunOptions.FULL_TRACE),
                     run_metadata=metadata)
            unreported["full_trace_chrome_format"] = Timeline(metadata.step_stats).generate_chrome_trace_format()
        median = _median(deltas)
        values = {"iters": min_iters, "wall_time": median, "extras": extras, "name": name,
                  "throughput": mbs / median if median > 0 else 0.0}
        self.report_benchmark(**values)
        mean, stdev = _mean_and_stdev(deltas)
        unreported.update(wall_time_mean=mean, wall_time_stdev=stdev)
        values["extras"].update(unreported)
        return values

    def evaluate(self, tensors: Any) -> Any:
        """``tensors`` run in the default session (or one this benchmark keeps)."""
        sess = get_default_session()
        if sess is None:
            from flowmesh.runtime.session import Session

            if self._session is None:
                self._session = Session()
            sess = self._session
        return sess.run(tensors)
