"""``tf.xla.experimental``: ``jit_scope`` marks ops for XLA and ``compile`` builds a
computation as one cluster, with TensorFlow's graph-level results.

flowmesh has no XLA compiler: its kernels are torch's and run as they are. What TensorFlow
writes into the graph is written here too, so a graph exported from flowmesh carries the
same clustering requests to TensorFlow:

* ``jit_scope`` gives each op created inside the attributes ``_XlaCompile``,
  ``_XlaSeparateCompiledGradients`` and, for the outermost scope, ``_XlaScope``
  (``b"jit_scope_0"``, ``b"jit_scope_1"`` ...); gradients of such ops get them too
  (:func:`xla_gradient_scope`), in a separate ``_XlaScope`` when asked;
* ``compile(computation, inputs)`` builds ``computation`` once, every op tagged with
  ``_xla_compile_id`` (the cluster's name), and returns its outputs as TensorFlow's
  ``xla.compile`` does (a list of tensors; one value becomes a one-element list; a
  computation with no tensor outputs returns an op). Running them computes the result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, control_dependencies, get_default_graph
from flowmesh.ops import _structure
from flowmesh.ops.array_ops import identity
from flowmesh.ops.control_flow_ops import group, no_op

_XLA_SCOPE_COLLECTION = "__xla_scope"


class _XlaScopeCounter:
    """Per graph: how many outermost jit scopes were opened, and how deep the current one is."""

    def __init__(self) -> None:
        self.count = 0
        self.depth = 0


@contextlib.contextmanager
def jit_scope(compile_ops: bool | Callable[[Any], bool] = True,
              separate_compiled_gradients: bool = False) -> Iterator[None]:
    """Marks the ops created inside for XLA compilation (``_XlaCompile``), as TensorFlow.

    Args:
        compile_ops: whether to mark the ops, or a callable taking an op's ``NodeDef`` and
            returning that choice per op.
        separate_compiled_gradients: give the gradients of these ops their own ``_XlaScope``
            per gradient name scope instead of the forward computation's.

    Raises:
        TypeError: ``compile_ops`` is neither a bool nor a callable.
    """
    if callable(compile_ops):
        decide = compile_ops

        def xla_compile(node_def: Any) -> bool:
            return bool(decide(node_def))

        marker: Any = xla_compile
    elif isinstance(compile_ops, bool):
        marker = compile_ops
    else:
        raise TypeError(f"jit_scope(compile_ops=...) takes a bool or a callable of the op's NodeDef, "
                        f"got {type(compile_ops).__name__}")
    attrs: dict[str, Any] = {"_XlaCompile": marker,
                             "_XlaSeparateCompiledGradients": bool(separate_compiled_gradients)}
    graph = get_default_graph()
    collection = graph.get_collection_ref(_XLA_SCOPE_COLLECTION)
    if not collection:
        collection.append(_XlaScopeCounter())
    counter = collection[0]
    if counter.depth == 0:  # each outermost scope gets a name of its own
        attrs["_XlaScope"] = f"jit_scope_{counter.count}".encode()
        counter.count += 1
    counter.depth += 1
    try:
        with graph._attr_scope(attrs):
            yield
    finally:
        counter.depth -= 1


def xla_gradient_scope(op: Operation, gradient_scope: str) -> contextlib.AbstractContextManager:
    """The attribute scope for the gradient ops of ``op`` (TensorFlow's ``_MaybeCompile``):
    nothing unless ``op`` was created in a compiling ``jit_scope``; then ``_XlaCompile`` and
    its ``_XlaScope``, or ``<scope>_grad_<gradient name scope>`` with separate gradients."""
    attrs = op.attrs
    if not attrs.get("_XlaCompile") or "_XlaScope" not in attrs:
        return contextlib.nullcontext()
    scope = attrs["_XlaScope"]
    scope = scope.decode() if isinstance(scope, bytes) else str(scope)
    if attrs.get("_XlaSeparateCompiledGradients"):
        scope = f"{scope}_grad_{gradient_scope.rstrip('/').replace('/', '_')}"
    return op.graph._attr_scope({"_XlaCompile": True, "_XlaScope": scope.encode()})


def _is_flat(outputs: Any) -> bool:
    if isinstance(outputs, Mapping):
        return False
    if isinstance(outputs, Sequence) and not isinstance(outputs, (str, bytes)):
        return not any(isinstance(o, (Sequence, Mapping)) and not isinstance(o, (str, bytes))
                       for o in outputs)
    return True


def _flat_outputs(outputs: Any) -> tuple[list[Any], list[Operation]]:
    if outputs is None:
        outputs = ()
    if not isinstance(outputs, Sequence) or isinstance(outputs, (str, bytes)):
        outputs = (outputs,)
    values = [o if isinstance(o, Operation) else _to_tensor(o) for o in [*outputs, no_op()]]
    operations = [o for o in values if isinstance(o, Operation)]
    tensors = [o for o in values if not isinstance(o, Operation)]
    if any(a is not b for a, b in zip(values, tensors + operations)):
        raise ValueError("XLA computation function must return zero or more Tensor values followed by "
                         "zero or more Operations.")
    return [identity(t) for t in tensors], operations


def _to_tensor(value: Any) -> Any:
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError) as error:
        raise ValueError("XLA computation function return values must all either be Operations or "
                         f'convertible to Tensors. Got error: "{error}"') from None


def _nested_outputs(outputs: Any) -> list[Any]:
    tensors = []
    for value in _structure.flatten(outputs):
        if isinstance(value, Operation):
            raise ValueError("xla.compile does not support Operation as return value in non-flat output "
                             "structure. You can set returned Operations as control dependencies of "
                             f'returned Tensors so Operations are triggered when Tensors are evaluated. '
                             f'Operation found: "{value.name}"')
        tensors.append(identity(_to_tensor(value)))
    return tensors


def compile(computation: Callable[..., Any], inputs: Sequence[Any] | None = None) -> Any:  # noqa: A001
    """Builds ``computation(*inputs)`` as one cluster and returns its outputs, as TensorFlow's
    ``tf.xla.experimental.compile`` (see the module docstring for how flowmesh runs it).

    Returns:
        a list of tensors for a flat result (one tensor per returned value; returned ops run
        first), the result's structure for a nested one, or an op when the computation
        returns no tensors.

    Raises:
        TypeError: ``inputs`` is not a list or tuple.
        ValueError: a returned value is neither an op nor convertible to a tensor, ops come
            before tensors, or a nested result holds an op.
    """
    if inputs is None:
        inputs = []
    if not isinstance(inputs, Sequence) or isinstance(inputs, (str, bytes)):
        raise TypeError(f"xla.compile(computation, inputs): inputs must be a list, got {type(inputs).__name__}")
    graph = get_default_graph()
    flat_inputs = [convert_to_tensor(x) for x in _structure.flatten(list(inputs))]
    cluster = graph.unique_name("cluster")
    with graph._attr_scope({"_xla_compile_id": cluster.encode()}):
        flat_inputs = [identity(x, name=f"input_{i}") for i, x in enumerate(flat_inputs)]
        outputs = computation(*_structure.pack_sequence_as(list(inputs), flat_inputs))
        flat = _is_flat(outputs)
        tensors, operations = _flat_outputs(outputs) if flat else (_nested_outputs(outputs), [])
    if not tensors:
        return group(operations, name="output_0")
    with control_dependencies(operations):
        tensors = [identity(t, name=f"output_{i}") for i, t in enumerate(tensors)]
    return tensors if flat else _structure.pack_sequence_as(outputs, tensors)
