"""``Operation``: a node of the graph (op type, inputs, attributes, outputs, device)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from flowmesh.core import dtypes as _dtypes
from flowmesh.core import registry
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.shapes import TensorShape, format_dims
from flowmesh.core.tensor import Tensor

if TYPE_CHECKING:
    from flowmesh.core.graph import Graph


class Operation:
    """A node in the graph: an op type, inputs, attributes and outputs."""

    __slots__ = (
        "_graph", "_name", "_type", "_inputs", "_outputs", "_control_inputs", "_attrs",
        "_device", "_id", "_colocation", "_traceback", "_control_outputs", "__weakref__",
    )

    def __init__(
        self,
        graph: Graph,
        name: str,
        op_type: str,
        inputs: Sequence[Tensor],
        output_specs: Sequence[tuple[_dtypes.DType, TensorShape]],
        attrs: dict[str, Any],
        control_inputs: Sequence[Operation],
        op_id: int,
    ):
        self._graph = graph
        self._name = name
        self._type = op_type
        self._inputs = tuple(inputs)
        self._attrs = attrs
        self._control_inputs = list(control_inputs)
        self._device = ""
        self._id = op_id
        self._colocation: tuple[str, ...] = ()
        self._traceback: tuple[str, int] | None = None
        self._control_outputs: list[Operation] = []
        self._outputs = tuple(
            Tensor(self, i, dtype, shape) for i, (dtype, shape) in enumerate(output_specs)
        )

    # --- identity ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return self._inputs

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        return self._outputs

    def values(self) -> tuple[Tensor, ...]:
        return self._outputs

    @property
    def control_inputs(self) -> list[Operation]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        """The requested device (a canonical device string, possibly partial or empty)."""
        return self._device

    @property
    def op_def(self) -> registry.OpDef:
        return registry.get_op_def(self._type)

    @property
    def node_dict(self) -> dict[str, Any]:
        """A readable description: name, op, inputs, device and attrs (Python values)."""
        return {
            "name": self._name,
            "op": self._type,
            "input": [t.name for t in self._inputs] + [f"^{c.name}" for c in self._control_inputs],
            "device": self._device,
            "attr": dict(self._attrs),
        }

    @property
    def traceback(self) -> tuple[str, int] | None:
        """(file, line) of the user code that created this op."""
        return self._traceback

    def get_attr(self, name: str) -> Any:
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self._name}' ({self._type}) has no attr named '{name}'") from None

    @property
    def attrs(self) -> dict[str, Any]:
        """All attributes (read-only view by convention)."""
        return self._attrs

    @property
    def node_def(self) -> Any:
        """The op as TensorFlow's ``NodeDef`` protobuf (``node_def.op`` is TensorFlow's type)."""
        from flowmesh.core.graph_def import op_to_node_def

        return op_to_node_def(self)

    def colocation_groups(self) -> list[bytes]:
        groups = self._colocation or (self._name,)
        return [f"loc:@{g}".encode() for g in groups]

    def run(self, feed_dict: dict | None = None, session: Any = None) -> None:
        """Runs this operation in ``session`` (default: the default session)."""
        from flowmesh.core.default_session import get_default_session_or_raise

        (session or get_default_session_or_raise()).run(self, feed_dict=feed_dict)

    # --- mutation used by graph builders (not user API) --------------------------------
    def _set_device(self, device: str | DeviceSpec | None) -> None:
        if device is None:
            self._device = ""
        elif isinstance(device, DeviceSpec):
            self._device = device.to_string()
        else:
            self._device = DeviceSpec.from_string(device).to_string()

    def _add_control_input(self, op: Operation) -> None:
        if op._graph is not self._graph:
            raise ValueError(f"Control input {op.name} is from a different graph than {self._name}")
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._version += 1

    def _add_control_inputs(self, ops: Sequence[Operation]) -> None:
        for op in ops:
            self._add_control_input(op)

    def describe_inputs(self) -> str:
        """``[2,3] float32, [?,3] float32`` for error messages."""
        return ", ".join(f"{format_dims(t._shape_as_list())} {t.dtype.name}" for t in self._inputs)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other
