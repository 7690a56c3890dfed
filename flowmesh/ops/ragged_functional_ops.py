"""``tf.ragged.map_flat_values``: apply an op to the flat values of ragged arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Tensor, control_dependencies
from flowmesh.ops import array_ops, check_ops
from flowmesh.ops.ragged_tensor import RaggedTensor


def map_flat_values(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``op`` applied to the ``flat_values`` of every ``RaggedTensor`` in ``args``/``kwargs``
    (also inside lists, tuples and dicts), wrapped in their shared row partitions.

    Args:
        op: the operation; its result must have ``flat_values``' outer dimension.
        *args, **kwargs: the arguments of ``op``.

    Returns:
        A ``RaggedTensor`` with the ragged inputs' partitions, or ``op``'s result when no
        argument is ragged.

    Raises:
        ValueError: ragged inputs of different ragged ranks, or an output whose outer
            dimension differs from the flat values'.
        InvalidArgumentError: (at run time) ragged inputs with different row splits.
    """
    found: list[RaggedTensor] = []
    inner_args = _replace_ragged(args, found)
    inner_kwargs = _replace_ragged(kwargs, found)
    if not found:
        return op(*args, **kwargs)
    first = found[0]
    checks = []
    for other in found[1:]:
        if other.ragged_rank != first.ragged_rank:
            raise ValueError("All ragged inputs must have the same ragged_rank.")
        for a, b in zip(first.nested_row_splits, other.nested_row_splits):
            if a is not b:
                if a.dtype != b.dtype:
                    raise ValueError(f"ragged inputs have row_splits of different dtypes ({a.dtype.name}, "
                                     f"{b.dtype.name}); use with_row_splits_dtype")
                checks.append(check_ops.assert_equal(a, b, message="Inputs must have identical ragged splits"))
    output = op(*inner_args, **inner_kwargs)
    nrows = first.flat_values.shape[:1]
    if isinstance(output, Tensor) and output.shape.rank is not None and nrows.rank is not None \
            and not output.shape[:1].is_compatible_with(nrows):
        raise ValueError("tf.ragged.map_flat_values requires that the output of `op` have the same "
                         f"outer-dimension size as flat_values of any ragged inputs. (output shape: "
                         f"{output.shape}; expected outer dimension size: {nrows[0]})")
    if checks:
        with control_dependencies(checks):
            output = array_ops.identity(output)
    return first.with_flat_values(output)


def _replace_ragged(value: Any, found: list[RaggedTensor]) -> Any:
    if isinstance(value, RaggedTensor):
        found.append(value)
        return value.flat_values
    if isinstance(value, list):
        return [_replace_ragged(v, found) for v in value]
    if isinstance(value, tuple):
        return tuple(_replace_ragged(v, found) for v in value)
    if isinstance(value, dict):
        return {k: _replace_ragged(v, found) for k, v in value.items()}
    return value
