"""``tf.GradientTape`` in graph mode: gradients through the ops recorded by the tape.

TensorFlow's tape records the operations run while it is active; in graph mode (inside a
``tf.function``, or TF1 code with eager execution disabled) those are the ops *created*
while it is active. flowmesh keeps the ranges of op ids created inside the ``with`` block
(outside ``stop_recording``) and computes ``gradient`` with the symbolic ``tf.gradients``
restricted to those ops: every op that was not recorded is a stop point, except the
producers of *watched* tensors (``tape.watch(x)``, and the trainable variables read while
recording when ``watch_accessed_variables=True``). A source that is not watched, or a
target not computed on the tape, gets ``None`` (or zeros with ``UnconnectedGradients.ZERO``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Graph, Operation, Tensor, get_default_graph
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.custom_gradient import variable_reads
from flowmesh.ops.gradients_impl import gradients
from flowmesh.ops.variables import global_variables, local_variables


def _handle_or_tensor(x: Any) -> Tensor:
    handle = getattr(x, "handle", None)
    if isinstance(handle, Tensor) and handle.dtype == dtypes.resource:
        return handle
    return convert_to_tensor(x)


def _one_hot(i: int, n: int, shape: list[int], dtype: Any) -> Tensor:
    """A constant of ``shape`` with a one at flat position ``i`` (selects one target entry)."""

    value = np.zeros(n, dtype.as_numpy_dtype)
    value[i] = 1
    return constant(value.reshape(shape))


def _one_hot_columns(j: int, batch: int, n: int, target: Tensor) -> Tensor:
    """Ones at inner position ``j`` of every example (selects one target entry per example)."""

    value = np.zeros((batch, n), target.dtype.as_numpy_dtype)
    value[:, j] = 1
    return constant(value.reshape(target.shape.as_list()))


class GradientTape:
    """Records the ops created inside ``with tf.GradientTape() as tape:`` for ``gradient``,
    ``jacobian`` and ``batch_jacobian`` (``tf.GradientTape``).

    Args:
        persistent: allow several ``gradient``/``jacobian`` calls (else only one).
        watch_accessed_variables: watch every trainable variable read while recording.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._graph: Graph | None = None
        self._ranges: list[list[int]] = []
        self._watched: list[Any] = []
        self._used = False

    # --- recording ------------------------------------------------------------------------
    def _next_id(self) -> int:
        return self._graph._last_id + 1  # type: ignore[union-attr]

    def __enter__(self) -> GradientTape:
        if self._graph is None:
            self._graph = get_default_graph()
        self._ranges.append([self._next_id(), -1])
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ranges[-1][1] = self._next_id()

    @contextlib.contextmanager
    def stop_recording(self) -> Iterator[None]:
        """Ops created inside are not recorded."""
        self.__exit__()
        try:
            yield
        finally:
            self.__enter__()

    def reset(self) -> None:
        """Forgets everything recorded and watched so far (keeps recording if active)."""
        active = self._ranges and self._ranges[-1][1] == -1
        self._ranges, self._watched = ([[self._next_id(), -1]] if active else []), []

    def watch(self, tensor: Any) -> None:
        """Records the gradient of tensors (or variables) in ``tensor`` (a nested structure)."""
        for t in nest.flatten(tensor):
            self._watched.append(t)

    def _recorded(self, op: Operation) -> bool:
        if op.graph is not self._graph:
            return True  # ops of function graphs (cond/while bodies) belong to their op
        return any(start <= op._id and (end == -1 or op._id < end) for start, end in self._ranges)

    def watched_variables(self) -> tuple[Any, ...]:
        """The variables watched explicitly or read while recording, in watch/creation order."""

        found = [v for v in self._watched if hasattr(v, "handle")]
        if self._watch_accessed and self._graph is not None:
            with self._graph.as_default():
                candidates = global_variables() + local_variables()
            for v in candidates:
                if v.trainable and v not in found and any(
                        self._recorded(c) for t in variable_reads(v) for c in t._consumers):
                    found.append(v)
        return tuple(found)

    # --- gradients ------------------------------------------------------------------------
    def _stop_tensors(self, watched: set[Tensor], variables: Sequence[Any]) -> list[Tensor]:
        producers = {t.op for t in watched} | {t.op for v in variables for t in variable_reads(v)}
        return [op.outputs[0] for op in self._graph.get_operations()  # type: ignore[union-attr]
                if op.outputs and not self._recorded(op) and op not in producers]

    def _check_use(self) -> None:
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of "
                               "gradients (or jacobians); create it with persistent=True for more.")
        self._used = True

    def _grads(self, targets: list[Tensor], sources: list[Tensor], output_gradients: Any,
               unconnected: str) -> list[Any]:
        variables = self.watched_variables()
        watched = {_handle_or_tensor(w) for w in self._watched} | {v.handle for v in variables}
        grads = gradients(targets, list(sources), grad_ys=output_gradients,
                          stop_gradients=self._stop_tensors(watched, variables) or None)
        out = []
        for s, g in zip(sources, grads):
            if s not in watched:
                g = None
            if g is None and unconnected == "zero":
                g = array_ops.zeros_like(s) if s.dtype != dtypes.resource else None
            out.append(g)
        return out

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Any = "none") -> Any:
        """Gradients of ``target`` (a tensor or structure, summed) with respect to
        ``sources``, in the structure of ``sources``.

        Raises:
            RuntimeError: a second call on a non-persistent tape.
        """
        self._check_use()
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        targets = [convert_to_tensor(t) for t in nest.flatten(target)]
        flat_sources = [_handle_or_tensor(s) for s in nest.flatten(sources)]
        if output_gradients is not None:
            output_gradients = nest.flatten(output_gradients)
        grads = self._grads(targets, flat_sources, output_gradients, unconnected)
        return nest.pack_sequence_as(sources, grads)

    def jacobian(self, target: Any, sources: Any, unconnected_gradients: Any = "none",
                 parallel_iterations: int | None = None, experimental_use_pfor: bool = True) -> Any:
        """``d target[i...] / d source[j...]`` of shape ``target.shape + source.shape`` for
        each source (``target`` must have a fully known shape).

        Raises:
            ValueError: ``target`` of partly unknown shape.
        """
        self._check_use()
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        target = convert_to_tensor(target)
        if not target.shape.is_fully_defined():
            raise ValueError(f"GradientTape.jacobian needs a target of known shape, got {target.shape}")
        flat_sources = [_handle_or_tensor(s) for s in nest.flatten(sources)]
        n, shape = target.shape.num_elements(), target.shape.as_list()
        per_row = [self._grads([target], flat_sources, [_one_hot(i, n, shape, target.dtype)], unconnected)
                   for i in range(n)]
        out = []
        for k, s in enumerate(flat_sources):
            shape = self._source_shape(s)
            if any(row[k] is None for row in per_row) or not per_row:
                out.append(None if unconnected != "zero" else array_ops.zeros(target.shape.as_list() + shape))
                continue
            stacked = array_ops.stack([convert_to_tensor(row[k]) for row in per_row])
            out.append(array_ops.reshape(stacked, target.shape.as_list() + shape))
        return nest.pack_sequence_as(sources, out)

    def _source_shape(self, s: Tensor) -> list[int]:
        if s.dtype == dtypes.resource:
            return [int(d) for d in s.op.attrs["shape"].as_list()]
        return s.shape.as_list()

    def batch_jacobian(self, target: Any, source: Any, unconnected_gradients: Any = "none",
                       parallel_iterations: int | None = None, experimental_use_pfor: bool = True) -> Any:
        """``d target[b, i...] / d source[b, j...]`` of shape ``[b] + target.shape[1:] +
        source.shape[1:]``: the per-example Jacobians, when ``target[b]`` depends only on
        ``source[b]`` (``target`` must have a fully known shape)."""
        self._check_use()
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        target = convert_to_tensor(target)
        if not target.shape.is_fully_defined() or target.shape.rank < 1:
            raise ValueError(f"GradientTape.batch_jacobian needs a target of known shape with a batch "
                             f"dimension, got {target.shape}")
        src = _handle_or_tensor(source)
        batch, inner = target.shape.as_list()[0], target.shape.as_list()[1:]
        n = int(np.prod(inner)) if inner else 1
        grads = [self._grads([target], [src], [_one_hot_columns(j, batch, n, target)], unconnected)[0]
                 for j in range(n)]
        src_inner = self._source_shape(src)[1:]
        if any(g is None for g in grads) or not grads:
            return None if unconnected != "zero" else array_ops.zeros([batch] + inner + src_inner)
        stacked = array_ops.stack([convert_to_tensor(g) for g in grads], axis=1)
        return array_ops.reshape(stacked, [batch] + inner + src_inner)
