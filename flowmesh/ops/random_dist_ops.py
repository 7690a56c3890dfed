"""Gamma and Poisson sampling (``RandomGamma``, ``RandomPoissonV2``) and the stateless random
ops (``StatelessRandom*``, ``StatelessRandomUniformFullInt``, ``StatelessRandomBinomial``,
``StatelessParameterizedTruncatedNormal``: the same ``seed`` pair always gives the same
values), with the seed helpers ``fold_in`` / ``split`` TensorFlow builds from full-range
integers.

``random_gamma`` is differentiable with respect to ``alpha`` (and ``beta``) by implicit
reparameterization, as in TensorFlow (``RandomGammaGrad``: d sample / d alpha from the
gamma CDF). Deliberate difference: the stateless ops are deterministic functions of their
seed, but not TensorFlow's Philox streams, so their values differ from TensorFlow's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, range_ops, reduction_ops
from flowmesh.ops._builders import constant_value, make_tensor, shape_from_tensor
from flowmesh.ops.random_ops import _seed_attrs, _shape_tensor


def _sample_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    sample = shape_from_tensor(inputs[0])
    param = inputs[1].shape
    dims = None if sample.rank is None or param.rank is None else sample.as_list() + param.as_list()
    return [(attrs.get("dtype", inputs[1].dtype), TensorShape(dims))]


def _gamma_grad(op: Any, grad: Tensor) -> list:
    shape, alpha = op.inputs
    sample = op.outputs[0]
    n = array_ops.shape(shape)[0]
    alpha_b = array_ops.reshape(alpha, array_ops.concat([array_ops.fill(array_ops.expand_dims(n, 0), 1),
                                                        array_ops.shape(alpha)], 0))
    partial = make_tensor("RandomGammaGrad", [alpha_b + array_ops.zeros_like(sample), sample])
    return [None, reduction_ops.reduce_sum(grad * partial, axis=range_ops.range(n))]


register_op("RandomGamma", _sample_shape, grad=_gamma_grad, stateful=True)
register_op("RandomGammaGrad", lambda inputs, attrs: [(inputs[1].dtype, inputs[1].shape)], not_differentiable=True)
register_op("RandomPoissonV2", _sample_shape, not_differentiable=True, stateful=True)


def random_gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32, seed: Any = None,
                 name: str | None = None) -> Tensor:
    """Samples ``shape + alpha.shape`` from Gamma(``alpha``, rate ``beta``)."""
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        a = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        sample = make_tensor("RandomGamma", [_shape_tensor(shape), a], _seed_attrs(seed))
        if beta is None:
            return sample
        return sample / convert_to_tensor(beta, dtype=dtype, name="beta")


def random_poisson(lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: Any = None,
                   name: str | None = None) -> Tensor:
    """Samples ``shape + lam.shape`` from Poisson(``lam``) as ``dtype``."""
    with name_scope(name, "random_poisson", [lam, shape]):
        rate = convert_to_tensor(lam, name="lam")
        attrs = {"dtype": dtypes.as_dtype(dtype), **_seed_attrs(seed)}
        return make_tensor("RandomPoissonV2", [_shape_tensor(shape), rate], attrs)


def gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32, seed: Any = None,
          name: str | None = None) -> Tensor:
    """``tf.random.gamma``."""
    return random_gamma(shape, alpha, beta, dtype, seed, name)


def poisson(lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: Any = None, name: str | None = None) -> Tensor:
    """``tf.random.poisson``."""
    return random_poisson(lam, shape, dtype, seed, name)


# --- stateless ---------------------------------------------------------------------------------
def _stateless_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["dtype"], shape_from_tensor(inputs[0]))]


for _op in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"):
    register_op(_op, _stateless_shape, not_differentiable=True)
register_op("StatelessRandomUniformInt", _stateless_shape, not_differentiable=True)
def _multinomial_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    logits, num = inputs[0], constant_value(inputs[1])
    batch = logits.shape.as_list()[0] if logits.shape.rank == 2 else None
    return [(attrs["dtype"], TensorShape([batch, None if num is None else int(num)]))]


register_op("StatelessMultinomial", _multinomial_shape, not_differentiable=True)
register_op("StatelessRandomGammaV2", lambda inputs, attrs: [(attrs["dtype"], shape_from_tensor(inputs[0]))],
            not_differentiable=True)
register_op("StatelessRandomPoisson", lambda inputs, attrs: [(attrs["dtype"], shape_from_tensor(inputs[0]))],
            not_differentiable=True)


def _seed(seed: Any) -> Tensor:
    t = convert_to_tensor(seed)
    if t.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"stateless seed must be int32 or int64, got {t.dtype.name}")
    if t.shape.rank is not None and t.shape.as_list() not in ([2], [None]):
        raise ValueError(f"stateless seed must have shape [2], got {t.shape}")
    return cast_ops.cast(t, dtypes.int64)


def _scaled(op_type: str, shape: Any, seed: Any, dtype: Any, scale: Any, offset: Any, name: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, op_type, [shape, seed]):
        rnd = make_tensor(op_type, [_shape_tensor(shape), _seed(seed)], {"dtype": dtype})
        return rnd * convert_to_tensor(scale, dtype=dtype) + convert_to_tensor(offset, dtype=dtype)


def stateless_random_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32,
                             name: str | None = None, alg: Any = "auto_select") -> Tensor:
    """Uniform values in ``[minval, maxval)``, a deterministic function of ``seed`` (shape [2]);
    for integer dtypes with ``minval`` and ``maxval`` both None, over the dtype's whole range.
    ``alg`` is accepted for compatibility (flowmesh has one stateless generator)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer and minval is None and maxval is None:  # StatelessRandomUniformFullInt, below
        with name_scope(name, "stateless_random_uniform", [shape, seed]):
            return make_tensor("StatelessRandomUniformFullInt", [_shape_tensor(shape), _seed(seed)], {"dtype": dtype})
    if dtype.is_integer:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        with name_scope(name, "stateless_random_uniform", [shape, seed]):
            lo, hi = convert_to_tensor(minval, dtype=dtype), convert_to_tensor(maxval, dtype=dtype)
            return make_tensor("StatelessRandomUniformInt", [_shape_tensor(shape), _seed(seed), lo, hi], {"dtype": dtype})
    hi = 1.0 if maxval is None else maxval
    with name_scope(name, "stateless_random_uniform", [shape, seed]):
        lo_t = convert_to_tensor(minval, dtype=dtype)
        return _scaled("StatelessRandomUniform", shape, seed, dtype, convert_to_tensor(hi, dtype=dtype) - lo_t, lo_t,
                       "uniform")


def stateless_random_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                            name: str | None = None, alg: Any = "auto_select") -> Tensor:
    """Normal values, a deterministic function of ``seed``."""
    return _scaled("StatelessRandomNormal", shape, seed, dtype, stddev, mean, name or "stateless_random_normal")


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = dtypes.float32, name: str | None = None,
                               alg: Any = "auto_select") -> Tensor:
    """Normal values truncated at two standard deviations, a deterministic function of ``seed``."""
    return _scaled("StatelessTruncatedNormal", shape, seed, dtype, stddev, mean, name or "stateless_truncated_normal")


def stateless_categorical(logits: Any, num_samples: Any, seed: Any, dtype: Any = dtypes.int64,
                          name: str | None = None) -> Tensor:
    """``[batch, num_samples]`` class draws from ``logits``, a deterministic function of ``seed``."""
    with name_scope(name, "stateless_categorical", [logits, seed]):
        lg = convert_to_tensor(logits)
        n = convert_to_tensor(num_samples, dtype=dtypes.int32)
        return make_tensor("StatelessMultinomial", [lg, n, _seed(seed)], {"dtype": dtypes.as_dtype(dtype)})


def stateless_multinomial(logits: Any, num_samples: Any, seed: Any, output_dtype: Any = dtypes.int64,
                          name: str | None = None) -> Tensor:
    """``stateless_categorical`` under its TensorFlow 1.x name."""
    return stateless_categorical(logits, num_samples, seed, output_dtype, name)


def stateless_random_gamma(shape: Any, seed: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32,
                           name: str | None = None) -> Tensor:
    """Gamma(``alpha``, rate ``beta``) samples of ``shape`` (which ends with alpha's shape)."""
    with name_scope(name, "stateless_random_gamma", [shape, seed, alpha]):
        a = convert_to_tensor(alpha, dtype=dtype)
        out = make_tensor("StatelessRandomGammaV2", [_shape_tensor(shape), _seed(seed), a],
                          {"dtype": dtypes.as_dtype(dtype)})
        return out if beta is None else out / convert_to_tensor(beta, dtype=dtype)


def stateless_random_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = dtypes.int32,
                             name: str | None = None) -> Tensor:
    """Poisson(``lam``) samples of ``shape`` (which ends with lam's shape) as ``dtype``."""
    with name_scope(name, "stateless_random_poisson", [shape, seed, lam]):
        rate = convert_to_tensor(lam)
        return make_tensor("StatelessRandomPoisson", [_shape_tensor(shape), _seed(seed), rate],
                           {"dtype": dtypes.as_dtype(dtype)})


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
