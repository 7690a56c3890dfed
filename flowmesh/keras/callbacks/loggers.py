"""``CSVLogger``, ``TensorBoard`` (event files through ``tf.summary.FileWriter``),
``TerminateOnNaN`` and ``LambdaCallback``."""

from __future__ import annotations

import csv
import math
import os
from typing import Any

from flowmesh.keras.callbacks.base import Callback


class CSVLogger(Callback):
    """Appends one row per epoch (``epoch`` and every log value) to ``filename``."""

    def __init__(self, filename: str, separator: str = ",", append: bool = False):
        super().__init__()
        self.filename, self.sep, self.append = str(filename), separator, append
        self._file: Any = None
        self._writer: Any = None
        self._keys: list[str] | None = None

    def on_train_begin(self, logs: dict | None = None) -> None:
        exists = self.append and os.path.exists(self.filename) and os.path.getsize(self.filename) > 0
        self._file = open(self.filename, "a" if self.append else "w", newline="")  # noqa: SIM115
        self._keys = None
        self._header_written = exists

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = dict(logs or {})
        if self._keys is None:
            self._keys = sorted(logs)
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch"] + self._keys, delimiter=self.sep)
            if not self._header_written:
                self._writer.writeheader()
        row = {"epoch": epoch, **{k: logs.get(k, "NA") for k in self._keys}}
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class TensorBoard(Callback):
    """Writes ``epoch_<metric>`` scalars to ``log_dir/train`` and ``log_dir/validation`` (and
    the graph, with ``write_graph``), readable by TensorBoard and ``tf.train.summary_iterator``;
    ``update_freq`` = a number of batches also writes ``batch_<metric>`` every that many batches."""

    def __init__(self, log_dir: str = "logs", histogram_freq: int = 0, write_graph: bool = True,
                 write_images: bool = False, update_freq: Any = "epoch", **kwargs: Any):
        super().__init__()
        self.log_dir, self.write_graph, self.update_freq = str(log_dir), write_graph, update_freq
        self._writers: dict[str, Any] = {}
        self._step = 0

    def _writer(self, kind: str) -> Any:
        from flowmesh.summary import FileWriter

        if kind not in self._writers:
            graph = None
            if kind == "train" and self.write_graph:
                from flowmesh.keras import backend

                graph = backend.get_session().graph
            self._writers[kind] = FileWriter(os.path.join(self.log_dir, kind), graph=graph)
        return self._writers[kind]

    def _write(self, kind: str, values: dict[str, float], step: int, prefix: str) -> None:
        from flowmesh.summary import Summary

        summary = Summary()
        for key, value in values.items():
            summary.value.add(tag=f"{prefix}{key}", simple_value=float(value))
        self._writer(kind).add_summary(summary, step)

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._writer("train")

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self._step += 1
        if isinstance(self.update_freq, int) and self._step % self.update_freq == 0:
            values = {k: v for k, v in (logs or {}).items() if k not in ("batch", "size")}
            self._write("train", values, self._step, "batch_")

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        logs = logs or {}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        self._write("train", train, epoch, "epoch_")
        if val:
            self._write("validation", val, epoch, "epoch_")
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs: dict | None = None) -> None:
        for writer in self._writers.values():
            writer.close()
        self._writers = {}


class TerminateOnNaN(Callback):
    """Stops training when a batch loss is NaN or infinite."""

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        loss = (logs or {}).get("loss")
        if loss is not None and (math.isnan(loss) or math.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class LambdaCallback(Callback):
    """A callback from functions: ``on_epoch_end=lambda epoch, logs: ...`` and so on."""

    def __init__(self, on_epoch_begin: Any = None, on_epoch_end: Any = None, on_batch_begin: Any = None,
                 on_batch_end: Any = None, on_train_begin: Any = None, on_train_end: Any = None, **kwargs: Any):
        super().__init__()
        hooks = {"on_epoch_begin": on_epoch_begin, "on_epoch_end": on_epoch_end,
                 "on_train_batch_begin": on_batch_begin, "on_train_batch_end": on_batch_end,
                 "on_train_begin": on_train_begin, "on_train_end": on_train_end, **kwargs}
        for name, fn in hooks.items():
            if fn is not None:
                setattr(self, name, fn)




class BaseLogger(Callback):
    """Averages each batch metric over the epoch (weighted by batch size) into the epoch's
    logs; names in ``stateful_metrics`` keep their last value (Keras 1's logger)."""

    def __init__(self, stateful_metrics: Any = None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])

    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self.seen, self.totals = 0, {}

    def on_batch_end(self, batch: int, logs: dict | None = None) -> None:
        logs = logs or {}
        size = logs.get("size", 0)
        self.seen += size
        for key, value in logs.items():
            if key in ("batch", "size"):
                continue
            self.totals[key] = value if key in self.stateful_metrics else self.totals.get(key, 0) + value * size

    on_train_batch_end = on_batch_end

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if logs is None:
            return
        for key in self.params.get("metrics", []):
            if key in self.totals:
                logs[key] = self.totals[key] if key in self.stateful_metrics else self.totals[key] / max(self.seen, 1)


class RemoteMonitor(Callback):
    """POSTs each epoch's logs to ``root + path`` (as a JSON body with ``send_as_json``, else
    as the form field ``field``); a server that cannot be reached gives a warning."""

    def __init__(self, root: str = "http://localhost:9000", path: str = "/publish/epoch/end/", field: str = "data",
                 headers: dict | None = None, send_as_json: bool = False):
        super().__init__()
        self.root, self.path, self.field, self.headers, self.send_as_json = root, path, field, headers, send_as_json

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        import json
        import logging
        import urllib.parse
        import urllib.request

        send = {"epoch": epoch, **{k: float(v) if hasattr(v, "__float__") else v for k, v in (logs or {}).items()}}
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except OSError:
            logging.getLogger("flowmesh.keras").warning("Warning: could not reach RemoteMonitor root server at %s",
                                                        self.root)
