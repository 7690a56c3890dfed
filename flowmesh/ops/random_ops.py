"""Random ops with TensorFlow's graph-level / op-level seed rules.

``tf.set_random_seed(s)`` sets the graph seed. An op's ``(seed, seed2)`` pair is:

=================  ==================  ==========================================
graph seed         op seed             result
=================  ==================  ==========================================
None               None                nondeterministic
None               given               (DEFAULT_GRAPH_SEED, op seed)
given              None                (graph seed, a per-op counter)
given              given               (graph seed, op seed)
=================  ==================  ==========================================

Each random op keeps its generator for the life of its session, so successive runs give
new numbers and the sequence is reproducible. (The numbers differ from TensorFlow's
Philox streams; the distributions and seeding rules are the same.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph, name_scope
from flowmesh.core.registry import register_op
from flowmesh.ops._builders import FLOATS, check_dtype, constant_value, make_tensor, shape_from_tensor
from flowmesh.ops.math_ops import add

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def set_random_seed(seed: int | None) -> None:
    """Sets the graph-level random seed of the default graph."""
    get_default_graph().seed = seed


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The ``(seed, seed2)`` pair for a new random op (see the module table)."""
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = graph._last_id
        seeds: tuple[int | None, int | None] = (global_seed, op_seed)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, op_seed)
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        seeds = (0, _MAXINT32)
    return seeds


def _random_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(attrs["dtype"], shape_from_tensor(inputs[0]))]


for _op in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal"):
    register_op(_op, _random_shape, not_differentiable=True, stateful=True)
register_op("RandomUniformInt", lambda inputs, attrs: [(inputs[1].dtype, shape_from_tensor(inputs[0]))],
            not_differentiable=True, stateful=True)
register_op("RandomShuffle", lambda inputs, attrs: [(inputs[0].dtype, inputs[0].shape)],
            not_differentiable=True, stateful=True)


def _seed_attrs(seed: int | None) -> dict[str, int]:
    s1, s2 = get_seed(seed)
    return {"seed": s1 or 0, "seed2": s2 or 0}


def _shape_tensor(shape: Any) -> Tensor:
    """A shape argument as a tensor: a tensor, ints, or ints and scalar tensors mixed
    (``(tf.shape(x)[0], 2)``, packed as TensorFlow packs such lists)."""
    if isinstance(shape, Tensor):
        return shape
    dims = list(shape)
    if any(isinstance(d, Tensor) for d in dims):
        from flowmesh.ops.array_ops import stack
        from flowmesh.ops.cast_ops import cast

        return stack([cast(d, dtypes.int32) if isinstance(d, Tensor) else
                      convert_to_tensor(int(d), dtype=dtypes.int32) for d in dims], name="shape")
    return convert_to_tensor([int(d) for d in dims], dtype=dtypes.int32, name="shape")


def _scaled(op_type: str, shape: Any, a: Any, b: Any, dtype: Any, seed: Any, name: str,
            combine: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, op_type) as scope:
        shape_t = _shape_tensor(shape)
        a_t = convert_to_tensor(a, dtype=dtype, name="a")
        b_t = convert_to_tensor(b, dtype=dtype, name="b")
        rnd = make_tensor(op_type, [shape_t], {"dtype": dtype, **_seed_attrs(seed)})
        if combine == "normal":
            return _add(rnd * b_t, a_t, scope)
        return _add(rnd * (b_t - a_t), a_t, scope)


def _add(x: Tensor, y: Tensor, name: str) -> Tensor:
    return add(x, y, name=name)


def random_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                  seed: int | None = None, name: str | None = None) -> Tensor:
    """Samples from a normal distribution."""
    check_dtype("RandomStandardNormal", convert_to_tensor(0.0, dtype=dtype), FLOATS, "dtype")
    return _scaled("RandomStandardNormal", shape, mean, stddev, dtype, seed, name or "random_normal", "normal")


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                     seed: int | None = None, name: str | None = None) -> Tensor:
    """Samples from a normal distribution truncated at two standard deviations."""
    return _scaled("TruncatedNormal", shape, mean, stddev, dtype, seed, name or "truncated_normal", "normal")


def random_uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32,
                   seed: int | None = None, name: str | None = None) -> Tensor:
    """Samples uniformly from ``[minval, maxval)`` (``maxval`` required for integer dtypes)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        with name_scope(name, "random_uniform") as scope:
            shape_t = _shape_tensor(shape)
            lo = convert_to_tensor(minval, dtype=dtype, name="min")
            hi = convert_to_tensor(maxval, dtype=dtype, name="max")
            return make_tensor("RandomUniformInt", [shape_t, lo, hi], _seed_attrs(seed), name=scope)
    return _scaled("RandomUniform", shape, minval, 1.0 if maxval is None else maxval, dtype, seed,
                   name or "random_uniform", "uniform")


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """Shuffles ``value`` along its first dimension."""
    x = convert_to_tensor(value)
    return make_tensor("RandomShuffle", [x], _seed_attrs(seed), name=name or "RandomShuffle")


def _multinomial_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    from flowmesh.core.shapes import TensorShape

    logits, num = inputs
    n = constant_value(num)
    batch = logits.shape.as_list()[0] if logits.shape.rank == 2 else None
    return [(attrs["output_dtype"], TensorShape([batch, None if n is None else int(n)]))]


register_op("Multinomial", _multinomial_shape, not_differentiable=True, stateful=True)


def multinomial(logits: Any, num_samples: Any, seed: int | None = None, name: str | None = None,
                output_dtype: Any = dtypes.int64) -> Tensor:
    """Draws ``num_samples`` class indices per row of unnormalized log-probabilities."""
    lg = convert_to_tensor(logits)
    num = convert_to_tensor(num_samples, dtype=dtypes.int32)
    return make_tensor("Multinomial", [lg, num],
                       {"output_dtype": dtypes.as_dtype(output_dtype), **_seed_attrs(seed)},
                       name=name or "Multinomial")


categorical = multinomial
