"""Function graphs: the branches of ``If`` and the condition and body of ``While``.

Control flow in flowmesh is *functional* (like TensorFlow 2's ``If``/``While`` ops, not
TensorFlow 1's Switch/Merge frames): each branch or loop body is a :class:`FuncGraph`,
a :class:`~flowmesh.core.graph.Graph` with

* ``inputs``: placeholders for its arguments (loop variables), then one placeholder per
  *captured* outer tensor;
* ``outputs``: the tensors it returns (``None`` marks a dummy output, see below);
* ``outer_graph``: the graph it was built in (so ``graph_of`` resolves a mix of inner and
  outer tensors to the innermost graph, and ``get_default_graph()`` returns the function
  graph while the user's function runs).

**Capture.** When an op created inside a function graph uses a tensor of an outer graph,
:meth:`FuncGraph.capture` (the hook ``Graph.create_op`` calls) creates an internal
placeholder and records the outer tensor; the ``If``/``While`` op later receives it as an
extra input. A tensor of a graph further out is first captured by the enclosing function
graph (so nested ops get it as an input too). A *variable read* (``ReadVariableOp``, e.g.
``w/read``) is captured through the variable's resource handle and read again inside the
function: assignments made inside a branch only happen when the branch runs, and a read
inside a loop body sees the assignments of earlier iterations. Because the control-flow
op then consumes a resource handle, the placer colocates it with that variable: every op
of the function runs on the variable's device (a function that reads variables on two
different devices needs ``allow_soft_placement=True``).

**Control dependencies** inside a function on outer ops become control inputs of the
control-flow op (``control_captures``).

**Gradient graphs** (built by the If/While gradient functions) have the *forward* function
graph as ``outer_graph``. The forward graph is sealed (its op already exists), so a
gradient graph never captures through it: a forward tensor is mapped by
:meth:`FuncGraph._capture_forward` (an extra output of the forward op, see
:func:`add_op_outputs`), and a tensor from further out is captured directly.

**Dummy outputs.** ``If`` gains extra outputs when its gradient is built (the forward
intermediates the gradient needs). The branch that does not compute such a value lists
``None`` at that position; its kernel returns an empty placeholder value there, which the
gradient branch for that side never reads.

Serialization: a FuncGraph attr is encoded by ``flowmesh.core.serialize`` as a nested
graph plus :meth:`FuncGraph._serialize_extra`, and decoded through the decoder this module
registers with ``serialize.register_graph_attr_decoder`` for ``FuncGraph`` and every
subclass passed to :func:`register_function_graph_class` (gradient functions decode as
plain FuncGraphs). A decoded function learns its outer tensors from the op using it
(:meth:`FuncGraph.bind`), so gradients can be built on a decoded graph.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Graph, Operation, Tensor
from flowmesh.core.graph_scopes import ControlDependencyScope
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape


class FuncGraph(Graph):
    """A graph holding the body of a function (a branch, a loop condition or body).

    Args:
        name: a readable name (``"cond/then"``), used in error messages.
        outer_graph: the graph the function is built in (``None`` only while decoding).
    """

    def __init__(self, name: str, outer_graph: Graph | None = None):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor | None] = []
        self.num_args = 0
        self.control_captures: list[Operation] = []
        self._captures: dict[Tensor, Tensor] = {}
        self._external: dict[Tensor, Tensor] = {}
        self._sealed = False
        self.forward: FuncGraph | None = None  # set on gradient graphs only
        if outer_graph is not None:
            self.seed = outer_graph.seed
            self._gradient_override_map = dict(outer_graph._gradient_override_map)
            self._collections = {k: list(v) for k, v in outer_graph._collections.items()}
            self._last_id = outer_graph._last_id
            self._random_seed_offset = outer_graph._random_seed_offset

    # --- identity --------------------------------------------------------------------
    @property
    def building_function(self) -> bool:
        return True

    @property
    def sealed(self) -> bool:
        """True once the op using this function exists (its signature is fixed)."""
        return self._sealed

    def __repr__(self) -> str:
        return f"<flowmesh.FuncGraph '{self.name}' with {len(self._ops)} ops>"

    # --- op creation -----------------------------------------------------------------
    def create_op(self, op_type: str, inputs: Sequence[Tensor], attrs: dict[str, Any] | None = None,
                  name: str | None = None, output_specs: Any = None) -> Operation:
        """``Graph.create_op``; creating a variable inside a function is rejected.

        Raises:
            ValueError: for ``VarHandleOp`` (a variable created inside tf.cond/tf.while_loop).
        """
        if op_type == "VarHandleOp" and not self._sealed:
            var = (attrs or {}).get("shared_name") or name or "?"
            raise ValueError(
                f"Cannot create variable '{var}' inside the function '{self.name}' (a branch "
                "of tf.cond or the body of tf.while_loop): variables must outlive a single "
                "branch or iteration. Create it before the tf.cond/tf.while_loop (e.g. "
                "tf.get_variable outside, then reuse it inside)."
            )
        op = super().create_op(op_type, inputs, attrs, name, output_specs)
        # Keep op ids (and so op-level random seeds) distinct from the enclosing graphs'
        # and from the other branch's.
        outer = self.outer_graph
        while outer is not None and outer._last_id < self._last_id:
            outer._last_id = self._last_id
            outer = getattr(outer, "outer_graph", None)
        return op

    # --- arguments -------------------------------------------------------------------
    def add_input(self, dtype: Any, shape: Any = None, name: str = "arg") -> Tensor:
        """Adds an argument placeholder (before any captured input)."""
        if len(self.inputs) != self.num_args:
            raise ValueError(f"Function '{self.name}': add arguments before capturing tensors")
        placeholder = self._placeholder(dtypes.as_dtype(dtype), as_shape(shape), name)
        self.inputs.append(placeholder)
        self.num_args += 1
        return placeholder

    def _placeholder(self, dtype: dtypes.DType, shape: TensorShape, name: str) -> Tensor:
        with self.control_dependencies(None), self.colocate_with(None), self.name_scope(None):
            op = self.create_op("Placeholder", [], {"dtype": dtype, "shape": shape}, name=name)
        return op.outputs[0]

    @property
    def captured_inputs(self) -> list[Tensor]:
        """The internal placeholders of captured tensors, in input order."""
        return self.inputs[self.num_args:]

    @property
    def external_captures(self) -> list[Tensor]:
        """The outer tensors the op using this function must pass, in input order."""
        return [self._external[p] for p in self.captured_inputs]

    def external_of(self, placeholder: Tensor) -> Tensor | None:
        """The outer tensor behind a captured placeholder (``None`` for arguments)."""
        return self._external.get(placeholder)

    # --- capture ---------------------------------------------------------------------
    def capture(self, tensor: Tensor) -> Tensor:
        """Maps a tensor of an outer graph to a placeholder of this function.

        Raises:
            ValueError: ``tensor`` belongs to a graph that does not enclose this one.
            RuntimeError: the function is sealed (its op has been built already).
        """
        found = self._captures.get(tensor)
        if found is not None:
            return found
        if not _encloses(tensor.graph, self):
            raise ValueError(
                f"Tensor {tensor.name} must be from the same graph as the op that uses it, or "
                f"from a graph enclosing the function '{self.name}' (tf.cond/tf.while_loop)."
            )
        if self._sealed:
            raise RuntimeError(
                f"Function '{self.name}' is already used by an op; it cannot capture "
                f"{tensor.name} any more."
            )
        if self.forward is not None and tensor.graph is self.forward:
            return self._capture_forward(tensor)
        if _is_variable_read(tensor):
            return self._capture_variable_read(tensor)
        source = tensor
        outer = self.outer_graph
        if tensor.graph is not outer and isinstance(outer, FuncGraph) and not outer.sealed:
            source = outer.capture(tensor)
        placeholder = self._captures.get(source)
        if placeholder is None:
            placeholder = self._add_capture(source)
        self._captures[tensor] = placeholder
        return placeholder

    def _add_capture(self, source: Tensor) -> Tensor:
        placeholder = self._placeholder(source.dtype, source.shape, "capture")
        self.inputs.append(placeholder)
        self._external[placeholder] = source
        self._captures[source] = placeholder
        return placeholder

    def _capture_forward(self, tensor: Tensor) -> Tensor:
        """Captures a tensor of the (sealed) forward graph; gradient graphs override this."""
        raise RuntimeError(
            f"Function '{self.name}' cannot capture {tensor.name} from the sealed function "
            f"'{getattr(tensor.graph, 'name', '?')}'."
        )

    def _capture_variable_read(self, tensor: Tensor) -> Tensor:
        """Captures ``w/read`` as the handle ``w`` plus a fresh read inside the function."""
        read_op = tensor.op
        handle = self.capture(read_op.inputs[0])
        for control in read_op.control_inputs:
            self._add_control_capture(control)
        with self.control_dependencies(None), self.colocate_with(None), self.name_scope(None):
            op = self.create_op("ReadVariableOp", [handle], {"dtype": read_op.attrs["dtype"]},
                                name=read_op.name.rsplit("/", 1)[-1])
        value = op.outputs[0]
        value.set_shape(tensor.shape)
        self._captures[tensor] = value
        return value

    def use_captures(self, externals: Sequence[Tensor]) -> None:
        """Makes the captured inputs exactly ``externals`` (in order), adding unused
        placeholders for tensors only another function (e.g. the other branch) captured."""
        args = self.inputs[:self.num_args]
        captured = []
        for source in externals:
            placeholder = self._captures.get(source)
            if placeholder is None or self._external.get(placeholder) is not source:
                placeholder = self._placeholder(source.dtype, source.shape, "capture")
                self._external[placeholder] = source
                self._captures.setdefault(source, placeholder)
            captured.append(placeholder)
        self.inputs = args + captured

    # --- control dependencies ----------------------------------------------------------
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> ControlDependencyScope:
        """Like ``Graph.control_dependencies``; outer ops become control captures."""
        if control_inputs is None:
            return super().control_dependencies(None)
        inner = []
        for c in control_inputs:
            op = _as_operation(c)
            if op.graph is self:
                inner.append(op)
            else:
                self._add_control_capture(op)
        return super().control_dependencies(inner)

    def _add_control_capture(self, op: Operation) -> None:
        if not _encloses(op.graph, self):
            raise ValueError(f"Control input {op.name} is not an element of this graph.")
        if self.forward is not None and op.graph is self.forward:
            return  # a gradient always runs after the forward op it differentiates
        if op not in self.control_captures:
            self.control_captures.append(op)

    # --- lifecycle -------------------------------------------------------------------
    def seal(self) -> None:
        """Fixes the signature once the op using this function exists."""
        self._sealed = True
        outer = self.outer_graph
        if outer is not None:
            outer._last_id = max(outer._last_id, self._last_id)

    def bind(self, op: Operation, first_input: int) -> None:
        """Attaches a decoded function to the op using it (restores outer tensors)."""
        if self.outer_graph is None:
            self.outer_graph = op.graph
        for j, placeholder in enumerate(self.captured_inputs):
            source = op.inputs[first_input + self.num_args + j]
            self._external.setdefault(placeholder, source)
            self._captures.setdefault(source, placeholder)

    # --- serialization ---------------------------------------------------------------
    def _serialize_extra(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "num_args": self.num_args,
            "inputs": [t.name for t in self.inputs],
            "outputs": [None if t is None else t.name for t in self.outputs],
        }

    def restore(self, extra: Any) -> None:
        """Restores inputs/outputs from :meth:`_serialize_extra` after decoding.

        Raises:
            ValueError: ``extra`` is malformed or names tensors not in the graph.
        """
        if not isinstance(extra, dict):
            raise ValueError("function graph metadata must be a map")
        names_in, names_out = extra.get("inputs"), extra.get("outputs")
        num_args = extra.get("num_args")
        if not isinstance(names_in, list) or not isinstance(names_out, list) or \
                not isinstance(num_args, int) or not 0 <= num_args <= len(names_in):
            raise ValueError("function graph metadata needs inputs, outputs and num_args")
        try:
            self.inputs = [self.get_tensor_by_name(n) for n in names_in]
            self.outputs = [None if n is None else self.get_tensor_by_name(n) for n in names_out]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"function graph metadata names a missing tensor: {exc}") from None
        self.num_args = num_args
        self.name = str(extra.get("name", self.name))
        self._sealed = True


def _decode_func_graph(build: Any, extra: Any) -> FuncGraph:
    from flowmesh.errors import InvalidArgumentError

    name = extra.get("name", "function") if isinstance(extra, dict) else "function"
    graph = FuncGraph(str(name))
    build(graph)
    try:
        graph.restore(extra)
    except ValueError as exc:
        raise InvalidArgumentError(None, None, f"Bad serialized function graph: {exc}") from None
    return graph


def register_function_graph_class(cls: type) -> type:
    """Lets ``core/serialize.py`` decode graphs of class ``cls`` (a FuncGraph subclass,
    e.g. a gradient function) as plain :class:`FuncGraph` objects. Usable as a decorator."""
    try:
        from flowmesh.core import serialize
    except ImportError:  # pragma: no cover - serialize.py ships with flowmesh
        return cls
    serialize.register_graph_attr_decoder(cls.__name__, _decode_func_graph)
    return cls


register_function_graph_class(FuncGraph)


# --- helpers used by the control-flow ops ------------------------------------------------
def _encloses(outer: Graph, inner: Graph) -> bool:
    g: Any = inner
    while g is not None:
        if g is outer:
            return True
        g = getattr(g, "outer_graph", None)
    return False


def _is_variable_read(tensor: Tensor) -> bool:
    op = tensor.op
    return op.type == "ReadVariableOp" and op.inputs[0].dtype == dtypes.resource


def _as_operation(value: Any) -> Operation:
    if hasattr(value, "_as_graph_element") and not isinstance(value, (Tensor, Operation)):
        value = value._as_graph_element()
    if isinstance(value, Tensor):
        return value.op
    if not isinstance(value, Operation):
        raise TypeError(f"Control input must be an Operation or Tensor, got {value!r}")
    return value


def resolve_captured(tensor: Tensor) -> Tensor:
    """Follows captured placeholders outwards to the tensor that feeds them.

    Used by shape rules that look at a producer through function boundaries, e.g. the
    ``VarHandleOp`` behind a resource handle captured by a ``tf.cond`` branch.
    """
    seen = 0
    while seen < 64:
        graph = tensor.graph
        if not isinstance(graph, FuncGraph) or tensor.op.type != "Placeholder":
            return tensor
        source = graph.external_of(tensor)
        if source is None:
            return tensor
        tensor = source
        seen += 1
    return tensor


def variable_spec(handle: Tensor) -> tuple[dtypes.DType, TensorShape] | None:
    """The (dtype, shape) of the variable behind a resource handle, if known statically."""
    op = resolve_captured(handle).op
    if op.type != "VarHandleOp":
        return None
    return op.attrs["dtype"], as_shape(op.attrs.get("shape"))


def is_differentiable(tensor: Tensor) -> bool:
    """Whether gradients flow into ``tensor``: floating/complex tensors, and handles of
    floating variables (other resources, e.g. iterators or tables, have no gradient)."""
    if tensor.dtype == dtypes.resource:
        spec = variable_spec(tensor)
        return spec is not None and (spec[0].is_floating or spec[0].is_complex)
    return tensor.dtype.is_floating or tensor.dtype.is_complex


def value_spec(tensor: Tensor) -> tuple[dtypes.DType, TensorShape]:
    """(dtype, shape) of the value a gradient w.r.t. ``tensor`` has (resources: the
    variable's value)."""
    if tensor.dtype == dtypes.resource:
        spec = variable_spec(tensor)
        if spec is None:
            raise ValueError(
                f"Cannot tell the dtype of the variable behind resource {tensor.name}; "
                "create variables with tf.Variable or tf.get_variable."
            )
        return spec
    return tensor.dtype, tensor.shape


def add_op_outputs(op: Operation, specs: Sequence[tuple[dtypes.DType, TensorShape]]) -> list[Tensor]:
    """Appends outputs to an existing control-flow op (used when its gradient is built).

    Plans built before keep working: a kernel instance is specific to the op's number of
    outputs (see ``kernels.contract.kernel_cache.KernelCache``).
    """
    with op.graph._lock:
        start = len(op._outputs)
        new = [Tensor(op, start + i, dtype, shape) for i, (dtype, shape) in enumerate(specs)]
        op._outputs = op._outputs + tuple(new)
        op._attrs["Tout"] = list(op._attrs.get("Tout", [])) + [d for d, _ in specs]
        op._attrs["output_shapes"] = list(op._attrs.get("output_shapes", [])) + [s for _, s in specs]
        op._graph._version += 1
    return new


def merge_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape compatible with both (unknown dims where they differ)."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return unknown_shape()
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def shape_is_at_least_as_specific(shape: TensorShape, invariant: TensorShape) -> bool:
    """TensorFlow's ``_ShapeLessThanOrEqual``: every dim the invariant fixes matches."""
    if invariant.rank is None:
        return True
    if shape.rank != invariant.rank:
        return False
    return all(d2 is None or d1 == d2 for d1, d2 in zip(shape.as_list(), invariant.as_list()))


@contextlib.contextmanager
def building(graph: FuncGraph) -> Iterator[FuncGraph]:
    """Makes ``graph`` the default graph while the user's function runs."""
    with graph.as_default():
        yield graph
