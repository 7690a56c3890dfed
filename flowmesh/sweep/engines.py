"""Where trials run: ``local`` processes (streaming reports, early stopping), or whole
trials as Spark tasks or Ray tasks (their reports arrive when they end, so early stopping
does not apply there). Each engine starts a trial and puts its ``("exit", i, Outcome)``
on the sweep's event queue."""

from __future__ import annotations

import queue
import threading
from typing import Any

from flowmesh import config
from flowmesh.sweep.trial import LocalTrial, Outcome, run_command

ENGINES = ("local", "spark", "ray")


class RemoteTrial:
    """A trial submitted to Spark or Ray; ``stop`` cancels it."""

    def __init__(self, index: int, submit: Any, cancel: Any, events: queue.Queue):
        self.index, self.stopped = index, False
        self._cancel = cancel

        def wait() -> None:
            try:
                outcome = submit()
            except Exception as error:  # noqa: BLE001 - a failed trial, not a failed sweep
                outcome = Outcome(1, [], 0.0, f"{type(error).__name__}: {error}"[-2000:])
            events.put(("exit", index, outcome))

        threading.Thread(target=wait, daemon=True, name=f"sweep-remote-{index}").start()

    def stop(self, grace_s: float = 5.0) -> None:
        self.stopped = True
        self._cancel()


class Engine:
    """Starts trials; one instance per sweep."""

    def __init__(self, name: str, parallel: int):
        if name not in ENGINES:
            raise ValueError(f"--engine {name!r}: one of {ENGINES}")
        self.name, self.parallel = name, parallel
        self.streams_reports = name == "local"
        self._sc: Any = None
        if name == "spark":
            from pyspark.sql import SparkSession

            config.PYSPARK_PYTHON.set_default(_python())
            self._sc = (SparkSession.builder.master(f"local[{parallel}]").appName("flowmesh-sweep")
                        .config("spark.driver.host", "127.0.0.1")
                        .config("spark.driver.bindAddress", "127.0.0.1")
                        .config("spark.ui.enabled", "false")
                        .config("spark.ui.showConsoleProgress", "false").getOrCreate()).sparkContext
            self._sc.setLogLevel("ERROR")
        elif name == "ray":
            import ray

            if not ray.is_initialized():
                ray.init(num_cpus=parallel, include_dashboard=False, log_to_driver=False)

    def start(self, index: int, cmd: list[str], env: dict[str, str], metric: str,
              events: queue.Queue, log_path: str) -> Any:
        if self.name == "local":
            return LocalTrial(index, cmd, env, metric, events, log_path)
        if self.name == "spark":
            return self._spark_trial(index, cmd, env, metric, events)
        return self._ray_trial(index, cmd, env, metric, events)

    def close(self) -> None:
        if self._sc is not None:
            self._sc.stop()

    def _spark_trial(self, index: int, cmd: list[str], env: dict[str, str], metric: str,
                     events: queue.Queue) -> RemoteTrial:
        sc, group = self._sc, f"flowmesh-sweep-{index}"

        def submit() -> Outcome:
            sc.setJobGroup(group, f"sweep trial {index}", interruptOnCancel=True)
            return sc.parallelize([0], 1).map(lambda _: run_command(cmd, env, metric)).collect()[0]

        return RemoteTrial(index, submit, lambda: sc.cancelJobGroup(group), events)

    def _ray_trial(self, index: int, cmd: list[str], env: dict[str, str], metric: str,
                   events: queue.Queue) -> RemoteTrial:
        import ray

        ref = ray.remote(num_cpus=1)(run_command).remote(cmd, env, metric)
        return RemoteTrial(index, lambda: ray.get(ref), lambda: ray.cancel(ref, force=True), events)


def _python() -> str:
    import sys

    return sys.executable
