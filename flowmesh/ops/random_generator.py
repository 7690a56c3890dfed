"""``tf.random.Generator``: a random number generator whose state lives in a variable, so
each run of one of its sampling ops draws new numbers and the stream is reproducible from
its seed; plus ``Algorithm``, ``create_rng_state`` and the per-graph global generator.

The state is TensorFlow's layout (``[counter, counter_hi, key]`` for Philox, ``[counter,
key]`` for ThreeFry; :func:`create_rng_state` is TensorFlow's exactly). Each sampling op
advances the counter by one and samples with the stateless ops, seeded by ``(key,
counter)``: deterministic given the seed, the right distributions, but not TensorFlow's
Philox numbers (as for every flowmesh stateless op).
"""

from __future__ import annotations

import enum
import secrets
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph, name_scope
from flowmesh.ops import array_ops, cast_ops, manip_ops
from flowmesh.ops.random_dist_ops import (
    stateless_random_binomial,
    stateless_random_normal,
    stateless_random_uniform,
    stateless_random_uniform_full_int,
    stateless_truncated_normal,
)
from flowmesh.ops.variables import Variable

_SEED_MASK = (1 << 64) - 1


class Algorithm(enum.Enum):
    """The counter-based RNG algorithms (TensorFlow's numbering)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


_STATE_SIZE = {Algorithm.PHILOX: 3, Algorithm.THREEFRY: 2, Algorithm.AUTO_SELECT: 3}


def _algorithm(alg: Any) -> Algorithm:
    if alg is None:
        return Algorithm.AUTO_SELECT
    if isinstance(alg, Algorithm):
        return alg
    if isinstance(alg, str):
        try:
            return Algorithm[alg.upper()]
        except KeyError:
            raise ValueError(f"Unsupported RNG algorithm {alg!r}; use 'philox', 'threefry' or 'auto_select'") from None
    try:
        return Algorithm(int(alg))
    except ValueError:
        raise ValueError(f"Unsupported RNG algorithm {alg!r}; use 1 (Philox), 2 (ThreeFry) or 3 (auto)") from None


def create_rng_state(seed: Any, alg: Any) -> np.ndarray:
    """The initial state for ``alg`` from an integer (split into 64-bit words, least
    significant first) or a 1-D array (left-padded with zeros), as int64."""
    size = _STATE_SIZE[_algorithm(alg)]
    if isinstance(seed, (int, np.integer)):
        seed, words = int(seed), []
        for _ in range(size):
            words.append(seed & _SEED_MASK)
            seed >>= 64
        values = words
    else:
        values = [int(v) & _SEED_MASK for v in np.asarray(seed).reshape(-1)][:size]
        values = [0] * (size - len(values)) + values
    return np.array([v - (1 << 64) if v >= 1 << 63 else v for v in values], dtype=np.int64)


class Generator:
    """A stateful RNG (create it with :meth:`from_seed`, :meth:`from_non_deterministic_state`
    or :meth:`from_key_counter`; initialize its ``state`` variable like any other)."""

    def __init__(self, copy_from: Generator | None = None, state: Any = None, alg: Any = None):
        if copy_from is not None:
            self._alg = copy_from._alg
            initial: Any = copy_from.state.read_value()
        else:
            if state is None:
                raise ValueError("Generator: pass copy_from or state (or use Generator.from_seed)")
            self._alg = _algorithm(alg)
            if self._alg is Algorithm.AUTO_SELECT:  # resolved to Philox, as TensorFlow does on CPU
                self._alg = Algorithm.PHILOX
            initial = np.asarray(state, dtype=np.int64) if not hasattr(state, "dtype") or isinstance(
                state, np.ndarray) else state
        self._state = Variable(initial, trainable=False, name="StateVar", dtype=dtypes.int64)

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> Generator:
        return cls(state=create_rng_state(seed, _algorithm(alg)), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        return cls.from_seed(secrets.randbits(64 * _STATE_SIZE[_algorithm(alg)]), alg)

    @classmethod
    def from_key_counter(cls, key: Any, counter: Any, alg: Any) -> Generator:
        state = np.concatenate([np.asarray(counter, np.int64).reshape(-1), np.asarray([key], np.int64).reshape(-1)])
        return cls(state=state, alg=alg)

    state = property(lambda self: self._state)
    algorithm = property(lambda self: self._alg.value)

    @property
    def key(self) -> Tensor:
        return self._state.read_value()[-1]

    def reset(self, state: Any) -> Any:
        return self._state.assign(convert_to_tensor(state, dtype=dtypes.int64))

    def reset_from_seed(self, seed: Any) -> Any:
        return self.reset(create_rng_state(seed, self._alg))

    def reset_from_key_counter(self, key: Any, counter: Any) -> Any:
        counter_t = array_ops.reshape(convert_to_tensor(counter, dtype=dtypes.int64), [-1])
        return self.reset(array_ops.concat([counter_t, array_ops.reshape(
            convert_to_tensor(key, dtype=dtypes.int64), [1])], 0))

    def skip(self, delta: Any) -> Any:
        """Advances the counter by ``delta``."""
        step = manip_ops.one_hot(0, _STATE_SIZE[self._alg], dtype=dtypes.int64) * cast_ops.cast(delta, dtypes.int64)
        return self._state.assign_add(step)

    def _next_seed(self) -> Tensor:
        """A fresh ``[2]`` seed ``(key, counter)``; running it advances the counter."""
        state = self.skip(1)
        if hasattr(state, "read_value"):
            state = state.read_value()
        return array_ops.stack([state[-1], state[0]])

    def normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
               name: str | None = None) -> Tensor:
        with name_scope(name, "stateful_normal"):
            return stateless_random_normal(shape, self._next_seed(), mean, stddev, dtype)

    def truncated_normal(self, shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                         name: str | None = None) -> Tensor:
        with name_scope(name, "truncated_normal"):
            return stateless_truncated_normal(shape, self._next_seed(), mean, stddev, dtype)

    def uniform(self, shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32,
                name: str | None = None) -> Tensor:
        with name_scope(name, "stateful_uniform"):
            if dtypes.as_dtype(dtype).is_integer and maxval is None:
                if minval not in (0, None):
                    raise ValueError("Generator.uniform: an integer dtype needs maxval when minval is given")
                return stateless_random_uniform_full_int(shape, self._next_seed(), dtype)
            return stateless_random_uniform(shape, self._next_seed(), minval, maxval, dtype)

    def uniform_full_int(self, shape: Any, dtype: Any = dtypes.uint64, name: str | None = None) -> Tensor:
        with name_scope(name, "stateful_uniform_full_int"):
            return stateless_random_uniform_full_int(shape, self._next_seed(), dtype)

    def binomial(self, shape: Any, counts: Any, probs: Any, dtype: Any = dtypes.int32,
                 name: str | None = None) -> Tensor:
        with name_scope(name, "binomial"):
            return stateless_random_binomial(shape, self._next_seed(), counts, probs, dtype)

    def make_seeds(self, count: int = 1) -> Tensor:
        """``[2, count]`` seeds for stateless ops."""
        return stateless_random_uniform_full_int([2, count], self._next_seed(), dtypes.int64)

    def split(self, count: int = 1) -> list[Generator]:
        """``count`` new generators seeded from this one's stream."""
        seeds = self.make_seeds(count)
        return [Generator(state=array_ops.concat([array_ops.zeros([_STATE_SIZE[self._alg] - 2], dtypes.int64),
                                                  seeds[:, i]], 0), alg=self._alg) for i in range(count)]


_GLOBAL: dict[int, Generator] = {}


def get_global_generator() -> Generator:
    """The default graph's global generator (created on first use, non-deterministically
    seeded, as TensorFlow's)."""
    graph = get_default_graph()
    if id(graph) not in _GLOBAL or _GLOBAL[id(graph)].state.graph is not graph:
        _GLOBAL[id(graph)] = Generator.from_non_deterministic_state()
    return _GLOBAL[id(graph)]


def set_global_generator(generator: Generator) -> None:
    """Replaces the default graph's global generator."""
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator needs a tf.random.Generator, got {type(generator).__name__}")
    _GLOBAL[id(get_default_graph())] = generator
