"""Helpers shared by ``static_rnn`` and ``dynamic_rnn``: batch size, initial state,
``sequence_length`` checks and the copy-through of finished sequences."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, math_ops, select_ops
from flowmesh.ops.cast_ops import cast


def batch_size_of(flat: list[Tensor], batch_axis: int) -> Any:
    """The static batch size of the inputs (an int), else a scalar int32 tensor."""
    for tensor in flat:
        dims = tensor.shape.as_list() if tensor.shape.rank is not None else []
        if len(dims) > batch_axis and dims[batch_axis] is not None:
            return int(dims[batch_axis])
    return array_ops.shape(flat[0], out_type=dtypes.int32)[batch_axis]


def first_state(cell: Any, initial_state: Any, batch_size: Any, dtype: Any, who: str) -> Any:
    """``initial_state`` (converted) or the cell's zero state; ``dtype`` is required then."""
    if initial_state is not None:
        return nest.map_structure(convert_to_tensor, initial_state)
    if not dtype:
        raise ValueError(f"{who}: if there is no initial_state, you must give a dtype "
                         "(e.g. dtype=tf.float32).")
    return cell.zero_state(batch_size, dtype)


def sequence_lengths(sequence_length: Any, batch_size: Any, who: str) -> Tensor | None:
    """``sequence_length`` as an int32 vector named ``sequence_length`` (or None)."""
    if sequence_length is None:
        return None
    lengths = convert_to_tensor(sequence_length)
    if not lengths.dtype.is_integer:
        raise TypeError(f"{who}: sequence_length must be an integer vector, got "
                        f"{lengths.dtype.name}")
    lengths = cast(lengths, dtypes.int32)
    if lengths.shape.rank not in (None, 1):
        raise ValueError(f"{who}: sequence_length must be a vector of length batch_size, but "
                         f"saw shape: {lengths.shape}")
    n = lengths.shape.as_list()[0] if lengths.shape.rank == 1 else None
    if isinstance(batch_size, int) and n is not None and n != batch_size:
        raise ValueError(f"{who}: sequence_length has {n} entries but the batch size is "
                         f"{batch_size}")
    return array_ops.identity(lengths, name="sequence_length")


def copy_through(time: Any, lengths: Tensor, old_state: Any, output: Any,
                 new_state: Any) -> tuple[Any, Any]:
    """Past a sequence's end its output is zero and its state the last valid one."""
    done = math_ops.greater_equal(time, lengths)

    def out(new: Tensor) -> Tensor:
        return select_ops.where(done, array_ops.zeros_like(new), new)

    def state(old: Tensor, new: Tensor) -> Tensor:
        result = select_ops.where(done, old, new)
        result.set_shape(new.shape)
        return result

    nest.assert_same_structure(old_state, new_state, check_types=False)
    return nest.map_structure(out, output), nest.map_structure(state, old_state, new_state)


def check_cell(cell: Any, name: str = "cell") -> None:
    from flowmesh.rnn.cell_base import assert_like_rnncell

    assert_like_rnncell(name, cell)
