"""``tf.custom_gradient``, ``tf.recompute_grad`` and ``tf.grad_pass_through`` in graph mode.

As TensorFlow's graph-mode decorator does, ``custom_gradient(f)`` runs ``f`` on the
arguments, then routes its results through one ``IdentityN`` op whose inputs are
``results + args + variables`` and whose gradient is ``f``'s ``grad_fn``, registered under
a unique name and attached with ``_gradient_op_type``. Backpropagation therefore reaches
the arguments (and the variables ``f`` read) only through ``grad_fn``, never through the
ops inside ``f``. ``grad_fn`` must accept ``variables=`` when ``f`` reads variables and
then returns ``(input_grads, variable_grads)``.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, get_default_graph, graph_of
from flowmesh.core.registry import RegisterGradient, register_op
from flowmesh.ops import _structure as nest
from flowmesh.ops._builders import make_op
from flowmesh.ops.array_ops import identity
from flowmesh.ops.gradients_impl import gradients
from flowmesh.ops.variable_scope import get_variable_scope, variable_scope
from flowmesh.ops.variables import global_variables, local_variables

_uid = itertools.count()


def _identity_n_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(t.dtype, t.shape) for t in inputs]


register_op("IdentityN", _identity_n_shape, grad=lambda op, *grads: list(grads))


def identity_n_op(tensors: Sequence[Tensor], name: str = "IdentityN") -> list[Tensor]:
    """One ``IdentityN`` op forwarding ``tensors`` (TensorFlow's op of that name)."""
    return list(make_op("IdentityN", list(tensors), {"T": [t.dtype for t in tensors]}, name=name).outputs)


def variable_reads(variable: Any) -> set[Tensor]:
    """The tensors through which ops use ``variable``: its handle and its cached read."""
    reads = {variable.handle}
    snapshot = getattr(variable, "_snapshot", None)
    if isinstance(snapshot, Tensor):
        reads.add(snapshot)
    return reads


def _variables_read(ops: Sequence[Operation]) -> list[Any]:
    """The variables the ops in ``ops`` use, sorted by name (TensorFlow's order)."""

    used = {t for op in ops for t in op.inputs}
    graph = get_default_graph()
    candidates = global_variables() + local_variables() + list(graph.get_collection("trainable_variables"))
    found = {id(v): v for v in candidates if hasattr(v, "handle") and variable_reads(v) & used}
    return sorted(found.values(), key=lambda v: v.name)


def _accepts_variables(fn: Callable[..., Any]) -> bool:
    spec = inspect.getfullargspec(fn)
    return "variables" in spec.args or "variables" in spec.kwonlyargs or spec.varkw is not None


def _make_grad(grad_fn: Callable[..., Any], n_results: int, n_args: int, variables: list[Any]):
    def grad(op: Operation, *out_grads: Any) -> list[Any]:
        result_grads = list(out_grads[:n_results])
        if variables:
            input_grads, variable_grads = grad_fn(*result_grads, variables=variables)
            variable_grads = list(variable_grads)
            if len(variable_grads) != len(variables):
                raise ValueError(f"@tf.custom_gradient: grad_fn returned {len(variable_grads)} variable "
                                 f"gradients for {len(variables)} variables ({[v.name for v in variables]})")
        else:
            input_grads, variable_grads = grad_fn(*result_grads), []
        input_grads = nest.flatten(input_grads)
        if len(input_grads) != n_args:
            raise ValueError(f"@tf.custom_gradient: grad_fn returned {len(input_grads)} gradients for "
                             f"{n_args} arguments of the decorated function")
        return [None] * n_results + input_grads + variable_grads

    return grad


def _graph_mode_call(f: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    args = [convert_to_tensor(a) for a in args]
    graph = graph_of(args) if args else get_default_graph()
    first = len(graph.get_operations())
    result, grad_fn = f(*args, **kwargs)
    created = graph.get_operations()[first:]
    variables = _variables_read(created)
    if variables and not _accepts_variables(grad_fn):
        raise TypeError("@tf.custom_gradient grad_fn must accept keyword argument 'variables', since "
                        f"the function uses variables: {[v.name for v in variables]}")
    flat = [convert_to_tensor(r) for r in nest.flatten(result)]
    name = f"CustomGradient-{next(_uid)}"
    RegisterGradient(name)(_make_grad(grad_fn, len(flat), len(args), variables))
    with graph.gradient_override_map({"IdentityN": name}):
        outputs = identity_n_op(flat + args + [v.handle for v in variables])
    return nest.pack_sequence_as(result, outputs[:len(flat)])


def custom_gradient(f: Callable[..., Any] | None = None) -> Any:
    """Decorates ``f(*x) -> (y, grad_fn)`` so that ``tf.gradients`` of ``y`` uses
    ``grad_fn(*dy) -> dx`` (``grad_fn(*dy, variables=vs) -> (dx, dvs)`` when ``f`` reads
    variables) instead of differentiating ``f``'s ops (``tf.custom_gradient``).

    Raises:
        TypeError: ``f`` reads variables and ``grad_fn`` has no ``variables`` argument.
        ValueError: ``grad_fn`` returns the wrong number of gradients (when differentiated).
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        return _graph_mode_call(f, args, kwargs)

    return decorated


def recompute_grad(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` whose intermediate values are not kept for backpropagation: its gradient runs
    ``f`` again on the same inputs once the output gradients exist, trading compute for
    memory (``tf.recompute_grad``). Variables ``f`` creates are reused by the recomputation."""

    @custom_gradient
    def inner(*args: Any, **kwargs: Any) -> Any:
        scope = get_variable_scope()
        result = f(*args, **kwargs)

        def grad(*dresult: Any, variables: Sequence[Any] = ()) -> Any:
            graph = get_default_graph()
            with graph.control_dependencies([d for d in dresult if isinstance(d, Tensor)]):
                inputs = [identity(a) for a in args]
            with variable_scope(scope, reuse=True):
                again = f(*inputs, **kwargs)
            grads = gradients(nest.flatten(again), list(inputs) + list(variables), grad_ys=list(dresult))
            return (grads[:len(inputs)], grads[len(inputs):]) if variables else grads[:len(inputs)]

        return result, grad

    return functools.wraps(f)(inner)


def grad_pass_through(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` in the forward pass and the identity in the backward pass: the output gradient
    is passed unchanged to the input (``tf.grad_pass_through``; e.g. around an assignment
    or a quantization). Variables ``f`` reads get no gradient."""

    @custom_gradient
    def inner(*args: Any, **kwargs: Any) -> Any:
        def grad(*dresult: Any, variables: Sequence[Any] | None = None) -> Any:
            if variables:
                return list(dresult), [None] * len(variables)
            return list(dresult)

        return f(*args, **kwargs), grad

    return functools.wraps(f)(inner)
