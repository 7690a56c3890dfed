"""``tf.data.experimental`` sources whose elements the pipeline makes: ``from_list``,
``RandomDataset`` and ``SqlDataset`` (stages in ``kernels/pipeline/generated_sources.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.data.sources import make_dataset
from flowmesh.ops._builders import make_tensor


def from_list(elements: Sequence[Any], name: str | None = None) -> Dataset:
    """A dataset of ``elements`` (each a nested structure of tensors; the same structure and
    dtypes, shapes may differ: the element spec is their most specific common one).

    Raises:
        ValueError: ``elements`` is empty.
        TypeError: elements of different structures or dtypes.
    """
    if not elements:
        raise ValueError("Invalid `elements`. `elements` should not be empty.")
    values = [st.map_structure(convert_to_tensor, e) for e in elements]
    spec = st.map_structure(lambda t: TensorSpec(t.shape, t.dtype), values[0])
    for i, value in enumerate(values[1:], 1):
        other = st.map_structure(lambda t: TensorSpec(t.shape, t.dtype), value)
        if not st.same_structure(spec, other) or st.flat_types(spec) != st.flat_types(other):
            raise TypeError(f"Invalid `elements`. Element {i} {other!r} does not have the structure and dtypes of "
                            f"element 0 {spec!r}.")
        spec = st.most_specific_compatible(spec, other)
    components = [t for v in values for t in st.flatten(v)]
    return make_dataset("ListDataset", components, spec)


class RandomDataset(Dataset):
    """An endless dataset of uniform random int64 scalars in ``[0, 2**32)``, deterministic
    given ``seed`` (with the graph-level seed, TensorFlow's seed rules).

    Args:
        seed: the op-level seed (``None``: the graph seed, or a random one).
        rerandomize_each_iteration: a new stream on each pass (``repeat``) instead of the
            same one.
    """

    def __init__(self, seed: int | None = None, rerandomize_each_iteration: bool | None = None):
        from flowmesh.ops.random_ops import get_seed

        seed1, seed2 = get_seed(seed)
        inputs = [convert_to_tensor(s or 0, dtype=dtypes.int64) for s in (seed1, seed2)]
        spec = TensorSpec([], dtypes.int64)
        variant = make_tensor("RandomDataset", inputs, {
            "output_types": [dtypes.int64], "output_shapes": [spec.shape],
            "rerandomize_each_iteration": bool(rerandomize_each_iteration)}, name="RandomDataset")
        super().__init__(variant, spec)


class SqlDataset(Dataset):
    """The rows of an SQL query, one component per column.

    Args:
        driver_name: ``"sqlite"`` (the only driver, as in TensorFlow).
        data_source_name: the database file.
        query: an SQL ``SELECT``.
        output_types: one dtype per column (a tuple); values are converted to them.

    Raises:
        ValueError: another driver.
    """

    def __init__(self, driver_name: Any, data_source_name: Any, query: Any, output_types: Any):
        if isinstance(driver_name, str) and driver_name != "sqlite":
            raise ValueError(f"SqlDataset: driver_name {driver_name!r} is not supported; use 'sqlite'")
        types = st.map_structure(dtypes.as_dtype, output_types)
        spec = st.map_structure(lambda t: TensorSpec([], t), types)
        inputs = [convert_to_tensor(v, dtype=dtypes.string) for v in (driver_name, data_source_name, query)]
        variant = make_tensor("SqlDataset", inputs, {"output_types": st.flat_types(spec),
                                                     "output_shapes": st.flat_shapes(spec)}, name="SqlDataset")
        super().__init__(variant, spec)
