"""``tf.data.Options``: settings attached to a dataset with ``with_options``.

Read by flowmesh: ``experimental_deterministic`` (``False`` lets parallel ``map`` return
elements in completion order) and ``experimental_distribute.auto_shard_policy`` (see
``data/sharding.py``) and ``experimental_worker_process`` (flowmesh's own: ``True``/``False``
runs the stages below an iterator's outermost ``prefetch`` in a forked worker process or
on threads; ``None`` follows ``FLOWMESH_DATA_WORKER_PROCESS``, off by default, see
``kernels/pipeline/worker_process.py``). The other groups are accepted for compatibility and have no effect
(their values are kept and merged).
"""

from __future__ import annotations

import enum
from typing import Any


class AutoShardPolicy(enum.IntEnum):
    """``tf.data.experimental.AutoShardPolicy``."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2


class _Group:
    """A settable group of options (``options.experimental_distribute``...)."""

    def __init__(self, **defaults: Any):
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        return values.get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[name] = value

    def merged(self, other: _Group) -> _Group:
        out = _Group(**self._values)
        for key, value in other._values.items():
            if value is not None:
                out._values[key] = value
        return out


class Options:
    """Dataset options; unset values (``None``) take the defaults."""

    def __init__(self) -> None:
        self.experimental_deterministic: bool | None = None
        self.deterministic: bool | None = None
        self.experimental_worker_process: bool | None = None
        self.experimental_distribute = _Group(auto_shard_policy=None, num_devices=None)
        self.experimental_optimization = _Group()
        self.experimental_threading = _Group(private_threadpool_size=None,
                                             max_intra_op_parallelism=None)
        self.threading = self.experimental_threading

    def determinism(self) -> bool | None:
        """The effective ``deterministic`` setting (``None``: not set)."""
        if self.deterministic is not None:
            return bool(self.deterministic)
        if self.experimental_deterministic is not None:
            return bool(self.experimental_deterministic)
        return None

    def merge(self, other: Options) -> Options:
        """These options overridden by the values ``other`` sets."""
        out = Options()
        for name in ("experimental_deterministic", "deterministic", "experimental_worker_process"):
            value = getattr(other, name)
            setattr(out, name, value if value is not None else getattr(self, name))
        for name in ("experimental_distribute", "experimental_optimization",
                     "experimental_threading"):
            setattr(out, name, getattr(self, name).merged(getattr(other, name)))
        out.threading = out.experimental_threading
        return out

    def __repr__(self) -> str:
        return f"Options(deterministic={self.determinism()})"
