"""The ``checkpoint`` state file and checkpoint bookkeeping (``tf.train.latest_checkpoint`` ...).

The state file is TensorFlow's text-format ``CheckpointState``::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"
    all_model_checkpoint_timestamps: 1700000000.5
    all_model_checkpoint_timestamps: 1700000600.25
    last_preserved_timestamp: 1699999000.0

Relative paths are relative to the directory holding the file. It is replaced atomically
and only after the checkpoint it names is complete, so it never points at a partial save.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from flowmesh.checkpoint.index import index_path
from flowmesh.errors import NotFoundError, OpError
from flowmesh.formats import filesystem as fs

logger = logging.getLogger("flowmesh.checkpoint")

V1 = 1
V2 = 2


@dataclass
class CheckpointState:
    """TensorFlow's ``CheckpointState`` message."""

    model_checkpoint_path: str = ""
    all_model_checkpoint_paths: list[str] = field(default_factory=list)
    all_model_checkpoint_timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float = 0.0

    def to_text(self) -> str:
        """The text format TensorFlow writes (``text_format.MessageToString``)."""
        lines = [f"model_checkpoint_path: {_quote(self.model_checkpoint_path)}"]
        lines += [f"all_model_checkpoint_paths: {_quote(p)}" for p in self.all_model_checkpoint_paths]
        lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "\n".join(lines) + "\n"

    @staticmethod
    def from_text(text: str) -> CheckpointState:
        """Parses the text format. Raises ValueError on malformed input."""
        state = CheckpointState()
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition(":")
            if not sep:
                raise ValueError(f"line {number}: expected 'field: value', got {line!r}")
            key, value = key.strip(), value.strip()
            if key == "model_checkpoint_path":
                state.model_checkpoint_path = _unquote(value)
            elif key == "all_model_checkpoint_paths":
                state.all_model_checkpoint_paths.append(_unquote(value))
            elif key == "all_model_checkpoint_timestamps":
                state.all_model_checkpoint_timestamps.append(float(value))
            elif key == "last_preserved_timestamp":
                state.last_preserved_timestamp = float(value)
            else:
                raise ValueError(f"line {number}: unknown field {key!r}")
        return state


def _quote(text: str) -> str:
    out = []
    for ch in text.encode():
        c = chr(ch)
        if c in "\"\\":
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif 32 <= ch < 127:
            out.append(c)
        else:
            out.append(f"\\{ch:03o}")
    return '"' + "".join(out) + '"'


def _unquote(value: str) -> str:
    if len(value) < 2 or value[0] not in "\"'" or value[-1] != value[0]:
        raise ValueError(f"expected a quoted string, got {value!r}")
    body = value[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt.isdigit():
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            out += {"n": b"\n", "t": b"\t", "r": b"\r"}.get(nxt, nxt.encode())
            i += 2
    return out.decode()


def state_file(checkpoint_dir: str, latest_filename: str | None = None) -> str:
    return fs.join(checkpoint_dir, latest_filename or "checkpoint")


def generate_checkpoint_state_proto(save_dir: str, model_checkpoint_path: str,
                                    all_model_checkpoint_paths: Sequence[str] | None = None,
                                    all_model_checkpoint_timestamps: Sequence[float] | None = None,
                                    last_preserved_timestamp: float | None = None) -> CheckpointState:
    """Builds a :class:`CheckpointState` (``tf.train.generate_checkpoint_state_proto``).

    The latest path is appended to ``all_model_checkpoint_paths`` when missing. When
    ``save_dir`` is relative, relative paths are rewritten relative to it.

    Raises:
        ValueError: timestamps given but not one per path.
    """
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    stamps = list(all_model_checkpoint_timestamps or [])
    if stamps and len(stamps) != len(paths):
        raise ValueError(
            f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths {paths} "
            f"and timestamps {stamps})")
    if not fs.is_absolute(save_dir):
        if not fs.is_absolute(model_checkpoint_path):
            model_checkpoint_path = fs.relpath(model_checkpoint_path, save_dir)
        paths = [p if fs.is_absolute(p) else fs.relpath(p, save_dir) for p in paths]
    return CheckpointState(model_checkpoint_path, paths, stamps, float(last_preserved_timestamp or 0.0))


def update_checkpoint_state(save_dir: str, model_checkpoint_path: str,
                            all_model_checkpoint_paths: Sequence[str] | None = None,
                            latest_filename: str | None = None,
                            all_model_checkpoint_timestamps: Sequence[float] | None = None,
                            last_preserved_timestamp: float | None = None,
                            save_relative_paths: bool = False) -> None:
    """Atomically writes the ``checkpoint`` state file in ``save_dir``.

    Args:
        save_dir: the directory of the state file.
        model_checkpoint_path: the latest checkpoint prefix.
        all_model_checkpoint_paths: every checkpoint still kept, oldest first.
        latest_filename: the state file's name (default ``checkpoint``).
        all_model_checkpoint_timestamps: one creation time per kept checkpoint.
        last_preserved_timestamp: time of the last checkpoint kept by
            ``keep_checkpoint_every_n_hours``.
        save_relative_paths: store paths relative to ``save_dir``.

    Raises:
        RuntimeError: the checkpoint prefix equals the state file's path.
    """
    paths = list(all_model_checkpoint_paths or [])
    if save_relative_paths:
        model_checkpoint_path = _relative(model_checkpoint_path, save_dir)
        paths = [_relative(p, save_dir) for p in paths]
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, paths,
                                            all_model_checkpoint_timestamps, last_preserved_timestamp)
    target = state_file(save_dir, latest_filename)
    if target == state.model_checkpoint_path:
        raise RuntimeError(
            f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint state. "
            "Please use a different save path.")
    fs.makedirs(save_dir)
    fs.write_bytes_atomic(target, state.to_text().encode())


def _relative(path: str, save_dir: str) -> str:
    return fs.relpath(path, save_dir) if fs.is_absolute(path) else path


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> CheckpointState | None:
    """The state file of ``checkpoint_dir`` with paths made absolute, or None.

    Returns None (and logs a warning) when the file is missing or unreadable, as
    TensorFlow does.

    Raises:
        ValueError: the file exists but names no checkpoint.
    """
    path = state_file(checkpoint_dir, latest_filename)
    try:
        if not fs.exists(path):
            return None
        state = CheckpointState.from_text(fs.read_bytes(path).decode("utf-8", "replace"))
    except (OpError, ValueError) as exc:
        logger.warning("%s: %s; checkpoint state ignored", path, exc)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not fs.is_absolute(state.model_checkpoint_path):
        state.model_checkpoint_path = fs.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [
        p if fs.is_absolute(p) else fs.join(checkpoint_dir, p) for p in state.all_model_checkpoint_paths
    ]
    return state


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """True when a complete checkpoint is at ``checkpoint_prefix`` (its index exists)."""
    return fs.exists(index_path(checkpoint_prefix)) or (
        not checkpoint_prefix.endswith("/") and _v1_exists(checkpoint_prefix))


def _v1_exists(prefix: str) -> bool:
    """A V1 checkpoint is a single file named by the prefix (flowmesh never writes one)."""
    return not fs.is_url(prefix) and os.path.isfile(prefix) and not prefix.endswith(".index")


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest complete checkpoint in ``checkpoint_dir``, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not state.model_checkpoint_path:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    logger.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def get_checkpoint_mtimes(checkpoint_prefixes: Sequence[str]) -> list[float]:
    """Modification times of the checkpoints' index files (missing ones are skipped)."""
    times = []
    for prefix in checkpoint_prefixes:
        for path in (index_path(prefix), prefix):
            if fs.exists(path):
                times.append(fs.getmtime(path))
                break
    return times


def remove_checkpoint(checkpoint_prefix: str, checkpoint_format_version: int = V2,
                      meta_graph_suffix: str = "meta") -> None:
    """Deletes a checkpoint's files: the index first (so the checkpoint stops existing),
    then its data files, meta graph and any temporaries left by an interrupted save."""
    base = _glob_escape(checkpoint_prefix)
    for pattern in (f"{base}.index", f"{base}.index.tmp-*", f"{base}.data-*",
                    f"{base}.{meta_graph_suffix}", f"{base}.{meta_graph_suffix}.tmp-*"):
        for path in fs.glob(pattern):
            fs.remove(path)
    if checkpoint_format_version == V1 and _v1_exists(checkpoint_prefix):
        fs.remove(checkpoint_prefix)


def _glob_escape(path: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def wait_for_new_checkpoint(checkpoint_dir: str, last_checkpoint: str | None = None,
                            seconds_to_sleep: float = 1.0, timeout: float | None = None) -> str | None:
    """Waits until a checkpoint other than ``last_checkpoint`` appears; None on timeout."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        found = latest_checkpoint(checkpoint_dir)
        if found is not None and found != last_checkpoint:
            return found
        if deadline is not None and time.monotonic() + seconds_to_sleep > deadline:
            return None
        time.sleep(seconds_to_sleep)


def missing_checkpoint(prefix: str) -> NotFoundError:
    """The error for a prefix with no checkpoint (also a ValueError, as in TensorFlow)."""
    return CheckpointNotFoundError(
        None, None,
        f"The passed save_path is not a valid checkpoint: {prefix} (no file {index_path(prefix)}). "
        "Pass a prefix returned by Saver.save or tf.train.latest_checkpoint(dir).",
    )


class CheckpointNotFoundError(NotFoundError, ValueError):
    """No checkpoint at a prefix: a ``NotFoundError`` that is also the ``ValueError``
    TensorFlow's ``Saver.restore`` raises."""
