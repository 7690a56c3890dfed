"""``Tensor``: a symbolic handle to one output of an :class:`~flowmesh.core.operation.Operation`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from flowmesh.core import dtypes as _dtypes
from flowmesh.core.shapes import TensorShape, as_shape

if TYPE_CHECKING:
    from flowmesh.core.graph import Graph
    from flowmesh.core.operation import Operation


class Tensor:
    """A symbolic handle to one output of an :class:`Operation`.

    Tensors compare by identity (as in TensorFlow 1.x) and support Python operators
    (``+ - * / @ [] < ...``), which create ops in the tensor's graph.
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")
    __array_priority__ = 100
    # Operator overloads are installed by flowmesh.ops.operators.
    OVERLOADABLE_OPERATORS: frozenset[str] = frozenset()

    def __init__(self, op: Operation, value_index: int, dtype: _dtypes.DType, shape: TensorShape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._consumers: list[Operation] = []

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def graph(self) -> Graph:
        return self._op._graph

    @property
    def name(self) -> str:
        return f"{self._op._name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        """Refines the static shape; raises ValueError if incompatible."""
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list[Operation]:
        return list(self._consumers)

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> Any:
        """Runs this tensor in ``session`` (default: the default session)."""
        from flowmesh.core.default_session import get_default_session_or_raise

        return (session or get_default_session_or_raise()).run(self, feed_dict=feed_dict)

    def _shape_as_list(self) -> list[int | None] | None:
        return None if self._shape.rank is None else self._shape.as_list()

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self) -> str:
        return f'Tensor("{self.name}", shape={self._shape}, dtype={self._dtype.name})'

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError(
            "Using a tf.Tensor as a Python `bool` is not allowed in graph mode. Use "
            "`if t is not None:` to test for None, or tf.cond to branch on its value."
        )

    def __iter__(self) -> Iterator[Tensor]:
        rank = self._shape.rank
        if rank is None or rank == 0 or self._shape.as_list()[0] is None:
            raise TypeError(
                f"Tensor {self.name} with shape {self._shape} cannot be iterated: its first "
                "dimension must be statically known. Use tf.unstack or tf.map_fn instead."
            )
        for i in range(self._shape.as_list()[0]):
            yield self[i]

    def __len__(self) -> int:
        raise TypeError(
            f"len is not well defined for symbolic Tensors ({self.name}); use tf.shape(x)[0] "
            "or x.shape[0]."
        )

    def __reduce__(self):
        raise TypeError("Tensors cannot be pickled; serialize the Graph instead.")

    @staticmethod
    def _override_operator(name: str, fn: Callable[..., Any]) -> None:
        setattr(Tensor, name, fn)
