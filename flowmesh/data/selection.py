"""``choose_from_datasets`` and ``sample_from_datasets``: one dataset's elements taken from
several, in the order a selector dataset gives (``kernels/pipeline/selection.py``); for
sampling the selector draws from ``weights`` with ``stateless_multinomial`` seeded by a
``RandomDataset``, TensorFlow's construction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.data.sources import make_dataset


def _common_spec(datasets: Sequence[Dataset]) -> Any:
    spec = datasets[0].element_spec
    for other in datasets[1:]:
        if not st.same_structure(spec, other.element_spec) or \
                st.flat_types(spec) != st.flat_types(other.element_spec):
            raise TypeError(f"Invalid `datasets`. `datasets` must have compatible element specs.\n Dataset 0 "
                            f"element_spec={datasets[0].element_spec}.\nDataset element_spec="
                            f"{other.element_spec}")
        spec = st.most_specific_compatible(spec, other.element_spec)
    return spec


def _directed_interleave(selector: Dataset, datasets: Sequence[Dataset], stop_on_empty_dataset: bool) -> Dataset:
    spec = _common_spec(datasets)
    inputs = [selector._variant_tensor, *(d._variant_tensor for d in datasets)]
    return make_dataset("DirectedInterleaveDataset", inputs, spec,
                        {"N": len(datasets), "stop_on_empty_dataset": bool(stop_on_empty_dataset)})


def choose_from_datasets(datasets: Sequence[Dataset], choice_dataset: Dataset,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    """The next element of ``datasets[i]`` for each ``i`` of ``choice_dataset``.

    Args:
        datasets: datasets with compatible elements.
        choice_dataset: int64 scalars in ``[0, len(datasets))``.
        stop_on_empty_dataset: end when a chosen dataset is exhausted (``False``: skip it;
            the result ends when all are).

    Raises:
        ValueError: no datasets.
        TypeError: ``choice_dataset`` does not hold int64 scalars, or the datasets'
            elements are incompatible.
    """
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    spec = choice_dataset.element_spec
    if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.int64 or spec.shape.rank not in (None, 0):
        raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of type "
                        f"`tf.int64`, got {spec!r}.")
    return _directed_interleave(choice_dataset, list(datasets), stop_on_empty_dataset)


def _logits(weights: Any, count: int) -> tuple[Tensor, list[int] | None]:
    """``[1, count]`` log-weights and, for Python weights, the indices kept (weight > 0)."""
    from flowmesh.ops import array_ops, math_ops

    if weights is None:
        return convert_to_tensor([[0.0] * count]), None
    if isinstance(weights, Tensor):
        if not weights.shape.is_compatible_with([count]):
            raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible with "
                             f"`[len(datasets)]` but is {weights.shape}.")
        kept = None
    else:
        if len(weights) != count:
            raise ValueError(f"Invalid `weights`. `weights` should have the same length as `datasets` but got "
                             f"`len(weights)={len(weights)}` vs. `len(datasets)={count}`.")
        kept = [i for i, w in enumerate(weights) if w > 0]
        weights = [weights[i] for i in kept] if kept else [1.0]
    weights = convert_to_tensor(weights, name="weights")
    if weights.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"Invalid `weights`. `weights` type must be either `tf.float32` or `tf.float64` but is "
                        f"{weights.dtype}.")
    return array_ops.expand_dims(math_ops.log(weights, name="logits"), 0), kept


def sample_from_datasets(datasets: Sequence[Dataset], weights: Any = None, seed: int | None = None,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    """Elements drawn at random from ``datasets``: dataset ``i`` with probability
    ``weights[i]`` (normalised; uniform when ``None``; a dataset of weight vectors gives
    per-element weights), deterministic given ``seed``.

    Raises:
        ValueError: no datasets, or ``weights`` of the wrong length.
        TypeError: weights that are not float32/float64.
    """
    from flowmesh.data.generated_sources import RandomDataset
    from flowmesh.ops import array_ops
    from flowmesh.ops.random_dist_ops import stateless_multinomial

    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    seeds = RandomDataset(seed).batch(2)
    if isinstance(weights, Dataset):
        from flowmesh.ops import math_ops

        pairs = Dataset.zip((weights.map(lambda *p: math_ops.log(*p) if len(p) == 1 else math_ops.log(p)), seeds))
        selector = pairs.map(lambda logits, s: array_ops.squeeze(
            stateless_multinomial(array_ops.expand_dims(logits, 0), 1, s), [0, 1]))
        return _directed_interleave(selector, datasets, stop_on_empty_dataset)
    logits, kept = _logits(weights, len(datasets))
    if kept is not None:
        datasets = [datasets[i] for i in kept] if kept else [datasets[0].take(0)]
    if len(datasets) == 1:
        return datasets[0]
    selector = seeds.map(lambda s: array_ops.squeeze(stateless_multinomial(logits, 1, s), [0, 1]))
    return _directed_interleave(selector, datasets, stop_on_empty_dataset)
