"""The typed option groups of ``tf.data.Options`` (``options.autotune``,
``options.experimental_distribute``...) and their enums, with TensorFlow's names, types and
defaults.

As in TensorFlow, an option reads its default until set, setting an unknown option or a
value of the wrong type raises, and merging two option sets keeps the values the later one
sets (recursively for groups). flowmesh reads ``experimental_distribute.auto_shard_policy``
(``data/sharding.py``) and ``experimental_optimization.map_vectorization`` (its own option:
``False`` turns off ``data/vectorize.py``); the other settings tune TensorFlow's runtime
(autotuning, graph rewrites, thread pools) and are kept for compatibility without effect.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, ClassVar


class AutotuneAlgorithm(enum.Enum):
    """``tf.data.experimental.AutotuneAlgorithm``: the autotuning algorithm."""

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class AutoShardPolicy(enum.IntEnum):
    """``tf.data.experimental.AutoShardPolicy``."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """``tf.data.experimental.ExternalStatePolicy``: how serialising a dataset treats
    external state (a stateful op in a function)."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


Option = tuple[Any, Callable[[], Any]]  # (type or tuple of types, default factory)


class OptionsBase:
    """A set of typed options (``_OPTIONS``: name -> (type, default factory))."""

    _OPTIONS: ClassVar[dict[str, Option]] = {}

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name: str) -> Any:
        options = type(self)._OPTIONS
        if name not in options:
            raise AttributeError(f"{type(self).__name__} has no option {name!r}; options: {sorted(options)}")
        values = object.__getattribute__(self, "_values")
        if name not in values:
            values[name] = options[name][1]()
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        options = type(self)._OPTIONS
        if name not in options:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        kind = options[name][0]
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"Property \"{name}\" must be of type {kind}, got: {value!r} "
                            f"(type: {type(value)}).")
        self._values[name] = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in type(self)._OPTIONS)

    def __hash__(self) -> int:
        return id(self)

    def merged(self, other: OptionsBase) -> OptionsBase:
        """These options overridden by those ``other`` sets (groups merge recursively)."""
        out = type(self)()
        for source in (self, other):
            for name, value in source._values.items():
                mine = out._values.get(name)
                if isinstance(value, OptionsBase) and isinstance(mine, OptionsBase):
                    value = mine.merged(value)
                elif isinstance(value, OptionsBase):
                    value = type(value)().merged(value)
                out._values[name] = value
        return out

    def __repr__(self) -> str:
        set_values = ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items()))
        return f"{type(self).__name__}({set_values})"


def _none() -> None:
    return None


class AutotuneOptions(OptionsBase):
    """``tf.data.experimental.AutotuneOptions``: ``enabled``, ``cpu_budget``,
    ``ram_budget``, ``autotune_algorithm``, ``initial_parallelism``, ``min_parallelism``."""

    _OPTIONS: ClassVar[dict[str, Option]] = {
        "enabled": (bool, _none), "cpu_budget": (int, _none), "ram_budget": (int, _none),
        "autotune_algorithm": (AutotuneAlgorithm, _none), "initial_parallelism": (int, _none),
        "min_parallelism": (int, _none)}


class DistributeOptions(OptionsBase):
    """``tf.data.experimental.DistributeOptions``: ``auto_shard_policy`` (``AUTO`` by
    default) and ``num_devices``."""

    _OPTIONS: ClassVar[dict[str, Option]] = {
        "auto_shard_policy": (AutoShardPolicy, lambda: AutoShardPolicy.AUTO), "num_devices": (int, _none)}


_GRAPH_REWRITES = ("apply_default_optimizations", "filter_fusion", "filter_parallelization", "inject_prefetch",
                   "seq_interleave_prefetch", "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion",
                   "map_parallelization", "noop_elimination", "parallel_batch", "shuffle_and_repeat_fusion",
                   "map_vectorization")


class OptimizationOptions(OptionsBase):
    """``tf.data.experimental.OptimizationOptions``: which graph rewrites TensorFlow applies
    (booleans, ``None``: its default), plus flowmesh's ``map_vectorization``."""

    _OPTIONS: ClassVar[dict[str, Option]] = {name: (bool, _none) for name in _GRAPH_REWRITES}


class ServiceOptions(OptionsBase):
    """``tf.data.experimental.ServiceOptions``: ``pinned`` (tf.data service buffers)."""

    _OPTIONS: ClassVar[dict[str, Option]] = {"pinned": (bool, _none)}


class ThreadingOptions(OptionsBase):
    """``tf.data.ThreadingOptions``: ``max_intra_op_parallelism``,
    ``private_threadpool_size``."""

    _OPTIONS: ClassVar[dict[str, Option]] = {"max_intra_op_parallelism": (int, _none),
                                             "private_threadpool_size": (int, _none)}
