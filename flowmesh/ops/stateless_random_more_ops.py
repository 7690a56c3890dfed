"""More stateless random ops: ``StatelessRandomUniformFullInt``, ``StatelessRandomBinomial``,
``StatelessParameterizedTruncatedNormal`` (TensorFlow's op types) and the seed helpers
``fold_in`` / ``split`` TensorFlow builds from full-range integers.

As for flowmesh's other stateless ops (``random_dist_ops``), the values are a deterministic
function of the ``[2]`` seed, drawn from the right distribution, but not TensorFlow's Philox
streams: equal seeds give equal values within flowmesh, not equal to TensorFlow's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.ops import array_ops
from flowmesh.ops._builders import make_tensor, shape_from_tensor
from flowmesh.ops.random_dist_ops import _seed
from flowmesh.ops.random_ops import _shape_tensor


def _sampled_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["dtype"], shape_from_tensor(inputs[0]))]


for _op in ("StatelessRandomUniformFullInt", "StatelessRandomBinomial", "StatelessParameterizedTruncatedNormal"):
    register_op(_op, _sampled_shape, not_differentiable=True)


def stateless_random_uniform_full_int(shape: Any, seed: Any, dtype: Any = dtypes.int64,
                                      name: str | None = None) -> Tensor:
    """Integers spread over the whole range of ``dtype`` (int32, int64, uint32, uint64)."""
    out = dtypes.as_dtype(dtype)
    if out not in (dtypes.int32, dtypes.int64, dtypes.uint32, dtypes.uint64):
        raise TypeError(f"stateless_random_uniform_full_int: dtype must be int32, int64, uint32 or uint64, "
                        f"got {out.name}")
    with name_scope(name, "stateless_random_uniform_full_int", [shape, seed]):
        return make_tensor("StatelessRandomUniformFullInt", [_shape_tensor(shape), _seed(seed)], {"dtype": out})


def split(seed: Any, num: int = 2, alg: Any = "auto_select") -> Tensor:
    """``num`` new seeds ``[num, 2]`` derived from ``seed`` (``alg`` accepted for compatibility)."""
    with name_scope(None, "split", [seed]):
        s = convert_to_tensor(seed, name="seed")
        out = stateless_random_uniform_full_int([num, 2], s, dtype=s.dtype if s.dtype in (
            dtypes.int32, dtypes.int64) else dtypes.int64)
        return out


def fold_in(seed: Any, data: Any, alg: Any = "auto_select") -> Tensor:
    """A new seed ``[2]`` from ``seed`` and an integer ``data`` (e.g. a step or replica id):
    ``[random int from seed, data]``, as TensorFlow composes it."""
    with name_scope(None, "fold_in", [seed, data]):
        d = convert_to_tensor(data, name="data")
        if d.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"fold_in: data must be int32 or int64, got {d.dtype.name}")
        first = stateless_random_uniform_full_int([], seed, dtype=d.dtype)
        return array_ops.stack([first, d])


def stateless_random_binomial(shape: Any, seed: Any, counts: Any, probs: Any, output_dtype: Any = dtypes.int32,
                              name: str | None = None) -> Tensor:
    """Binomial(``counts``, ``probs``) samples of ``shape`` (``counts``/``probs`` broadcast to it)."""
    with name_scope(name, "stateless_random_binomial", [shape, seed, counts, probs]):
        p = convert_to_tensor(probs, name="probs")
        n = convert_to_tensor(counts, dtype=p.dtype, name="counts")
        return make_tensor("StatelessRandomBinomial", [_shape_tensor(shape), _seed(seed), n, p],
                           {"dtype": dtypes.as_dtype(output_dtype)})


def stateless_parameterized_truncated_normal(shape: Any, seed: Any, means: Any = 0.0, stddevs: Any = 1.0,
                                             minvals: Any = -2.0, maxvals: Any = 2.0,
                                             name: str | None = None) -> Tensor:
    """Normal(``means``, ``stddevs``) samples truncated to ``[minvals, maxvals]`` (all four
    broadcast to ``shape``), by inverting the normal CDF."""
    with name_scope(name, "stateless_parameterized_truncated_normal", [shape, seed]):
        m = convert_to_tensor(means, name="means")
        args = [m] + [convert_to_tensor(v, dtype=m.dtype, name=n)
                      for v, n in ((stddevs, "stddevs"), (minvals, "minvals"), (maxvals, "maxvals"))]
        return make_tensor("StatelessParameterizedTruncatedNormal", [_shape_tensor(shape), _seed(seed), *args],
                           {"dtype": m.dtype})
