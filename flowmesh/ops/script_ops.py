"""``tf.py_func`` / ``tf.numpy_function``: call Python on NumPy arrays inside the graph.

The function runs in the process that executes the op, on NumPy copies of the inputs;
its results are converted to the declared ``Tout`` dtypes (a mismatching NumPy dtype is
an error, as in TensorFlow: return ``x.astype(np.float32)``). Output shapes are unknown
until run time; use ``set_shape`` to declare them.

``PyFunc`` ops hold a Python callable, so they are registered ``serializable=False``:
a graph containing one cannot be shipped to a server (serialization raises an error
naming the node). They are not differentiable unless a gradient is registered and
selected with ``Graph.gradient_override_map({"PyFunc": "MyGrad"})`` (either around the
``py_func`` call, as in TensorFlow, or around ``tf.gradients``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes, registry
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import unknown_shape
from flowmesh.ops._builders import make_op

_tokens = itertools.count()


def _py_func_shape(inputs: Sequence[Tensor], attrs: dict[str, Any]) -> list:
    return [(dtype, unknown_shape()) for dtype in attrs["Tout"]]


def _py_func_grad(op: Operation, *grads: Any) -> list[Any]:
    """Dispatches to a gradient chosen by ``gradient_override_map`` at creation time;
    without one a py_func is not differentiable (``None`` for every input)."""
    override = op.attrs.get("_gradient_op_type")
    if override:
        grad_fn = registry.gradient_decision(override)
        if grad_fn is None:
            raise LookupError(
                f"gradient_override_map maps PyFunc '{op.name}' to '{override}', but no "
                f"gradient is registered under that name (use @tf.RegisterGradient('{override}'))."
            )
        if grad_fn is not registry.NOT_DIFFERENTIABLE:
            return list(grad_fn(op, *grads))
    return [None] * len(op.inputs)


register_op("PyFunc", _py_func_shape, grad=_py_func_grad, stateful=True, serializable=False)
register_op("PyFuncStateless", _py_func_shape, grad=_py_func_grad, serializable=False)


def py_func(func: Callable[..., Any], inp: Sequence[Any], Tout: Any, stateful: bool = True,
            name: str | None = None) -> Any:
    """Wraps a Python function operating on NumPy arrays as a graph op (``tf.py_func``).

    Args:
        func: called as ``func(*arrays)``; returns one array (or a list/tuple of them,
            one per ``Tout``), or ``None`` when ``Tout`` is ``[]``.
        inp: input tensors (or values convertible to tensors).
        Tout: one dtype (the result is a Tensor) or a list of dtypes (a list of Tensors;
            an empty list gives the Operation).
        stateful: ``False`` lets the op be treated as a pure function.
        name: the op name.

    Returns:
        A Tensor, a list of Tensors, or the Operation when ``Tout == []``.

    Raises:
        TypeError: ``func`` is not callable or ``Tout`` is not a dtype / list of dtypes.
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {func!r}")
    as_list = isinstance(Tout, (list, tuple))
    out_types = [dtypes.as_dtype(t) for t in (Tout if as_list else [Tout])]
    inputs = [convert_to_tensor(x) for x in (inp if isinstance(inp, (list, tuple)) else [inp])]
    token = f"pyfunc_{next(_tokens)}"
    attrs: dict[str, Any] = {
        "func": func, "token": token, "Tin": [t.dtype for t in inputs], "Tout": out_types,
    }
    override = get_default_graph()._gradient_override_map.get("PyFunc")
    if override:
        attrs["_gradient_op_type"] = override
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    op = make_op(op_type, inputs, attrs, name=name or "PyFunc")
    if not as_list:
        return op.outputs[0]
    return list(op.outputs) if op.outputs else op


def numpy_function(func: Callable[..., Any], inp: Sequence[Any], Tout: Any, stateful: bool = True,
                   name: str | None = None) -> Any:
    """``tf.numpy_function``: the same as :func:`py_func`."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


class EagerValue(np.ndarray):
    """What ``tf.py_function``'s ``func`` receives: a NumPy array that also answers
    ``.numpy()`` as TensorFlow's eager tensors do."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self)


def _as_eager(value: Any) -> Any:
    array = np.asarray(value)
    return array.view(EagerValue)


def py_function(func: Callable[..., Any] | None = None, inp: Sequence[Any] | None = None, Tout: Any = None,
                name: str | None = None) -> Any:
    """Wraps a Python function as a graph op (``tf.py_function``).

    ``func`` receives each input as an array with a ``.numpy()`` method (TensorFlow passes
    eager tensors; flowmesh has no eager mode, so ops of ``tf`` cannot be called on them)
    and returns values convertible to ``Tout``. Not differentiable: TensorFlow
    differentiates the eager ops ``func`` runs, which flowmesh does not record.

    Raises:
        TypeError: ``func`` is not callable.
    """
    if func is None:
        return lambda f: py_function(f, inp, Tout, name)
    if not callable(func):
        raise TypeError(f"func must be callable, got {func!r}")

    def call(*arrays: Any) -> Any:
        result = func(*[_as_eager(a) for a in arrays])
        if isinstance(result, (list, tuple)):
            return [np.asarray(r) if isinstance(r, EagerValue) else r for r in result]
        return np.asarray(result) if isinstance(result, EagerValue) else result

    return py_func(call, list(inp or []), Tout if Tout is not None else [], name=name or "EagerPyFunc")
