"""Compiles one partition's nodes into straight-line Python code and runs it.

A partition is a topologically ordered list of :class:`ExecNode`. Instead of walking the
graph every step, :class:`Program` generates one Python function per partition::

    def run(step, feeds):
        v0, = feeds
        v1 = k0()
        v2 = k1(v1, v0)
        del v1
        return [v2]

so a step costs one Python call per op and nothing else. Values no later node needs are
released as soon as possible. When a kernel fails, the generated code's line number
identifies the node, and the frame's locals give the actual input values, so the error
names the op, its node and every input's shape and dtype.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flowmesh import config as _config
from flowmesh.errors import (
    CancelledError,
    InternalError,
    InvalidArgumentError,
    OpError,
)
from flowmesh.runtime.forwarding import forward_buffers
from flowmesh.runtime.fusion import fuse_updates
from flowmesh.runtime.lanes import batch_lanes
from flowmesh.runtime.memoize import memoize_shape_nodes

_program_ids = itertools.count()


@dataclass
class ExecNode:
    """One call in a partition program.

    Attributes:
        name: node name (for errors and traces).
        op_type: op type (for errors and traces).
        fn: the kernel function.
        inputs: value keys read, in argument order.
        outputs: value keys produced (0, 1 or several).
        needs_step: pass the StepContext as first argument.
        op: the graph Operation, when there is one.
    """

    name: str
    op_type: str
    fn: Callable[..., Any]
    inputs: list[Hashable]
    outputs: list[Hashable]
    needs_step: bool = False
    op: Any = None
    describe: Callable[[], str] | None = field(default=None, repr=False)


class Program:
    """A compiled partition: ``program(step, feeds) -> list of fetched values``."""

    def __init__(self, nodes: Sequence[ExecNode], feed_keys: Sequence[Hashable],
                 fetch_keys: Sequence[Hashable], name: str = "partition"):
        self.feed_keys = list(feed_keys)
        self.fetch_keys = list(fetch_keys)
        nodes, stable = memoize_shape_nodes(fuse_updates(batch_lanes(nodes, self.fetch_keys)))
        self.nodes = forward_buffers(nodes, self.feed_keys, self.fetch_keys, stable)
        self.name = name
        self._id = next(_program_ids)
        self._local_names: dict[Hashable, str] = {}
        self._run = self._compile(traced=False)
        self._run_traced: Callable[..., Any] | None = None

    # --- code generation -----------------------------------------------------------------
    def _compile(self, traced: bool) -> Callable[..., Any]:
        local: dict[Hashable, str] = {}

        def var(key: Hashable) -> str:
            name = local.get(key)
            if name is None:
                name = local[key] = f"v{len(local)}"
            return name

        last_use: dict[Hashable, int] = {}
        for i, node in enumerate(self.nodes):
            for key in node.inputs:
                last_use[key] = i
        fetched = set(self.fetch_keys)
        defined = set(self.feed_keys)
        lines = ["def run(step, feeds):"]
        if traced:
            lines.append("    trace = step.trace")
        if self.feed_keys:
            lines.append(f"    {', '.join(var(k) for k in self.feed_keys)}, = feeds")
        line_to_node: dict[int, int] = {}
        for i, node in enumerate(self.nodes):
            missing = [k for k in node.inputs if k not in defined]
            if missing:
                raise InternalError(
                    None, None,
                    f"Partition {self.name}: node {node.name} reads {missing[0]!r} before it is "
                    "produced (plan is not topologically sorted)",
                )
            args = ", ".join(var(k) for k in node.inputs)
            if node.needs_step:
                args = f"step, {args}" if args else "step"
            call = f"k{i}({args})"
            if len(node.outputs) == 1:
                stmt = f"{var(node.outputs[0])} = {call}"
            elif node.outputs:
                stmt = f"{', '.join(var(k) for k in node.outputs)}, = {call}"
            else:
                stmt = call
            defined.update(node.outputs)
            if traced:
                lines.append("    t0 = perf()")
            lines.append(f"    {stmt}")
            line_to_node[len(lines)] = i
            if traced:
                lines.append(f"    trace.append((P, {i}, t0, perf()))")
            dead = [
                local[k] for k in set(node.inputs)
                if last_use.get(k) == i and k not in fetched and k in local
            ]
            dead += [local[k] for k in node.outputs if k not in last_use and k not in fetched]
            if dead:
                lines.append(f"    del {', '.join(sorted(set(dead)))}")
        for key in self.fetch_keys:
            if key not in defined:
                raise InternalError(None, None, f"Partition {self.name} never produces {key!r}")
        lines.append(f"    return [{', '.join(var(k) for k in self.fetch_keys)}]")
        source = "\n".join(lines)
        if _config.debug_level() >= 2:
            _config.debug(2, f"program {self.name}:\n{source}")
        filename = f"<flowmesh-program-{self._id}{'-traced' if traced else ''}>"
        namespace: dict[str, Any] = {f"k{i}": node.fn for i, node in enumerate(self.nodes)}
        namespace["perf"] = time.perf_counter
        namespace["P"] = self
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - generated above
        self._local_names = local
        self._filenames = getattr(self, "_filenames", {})
        self._filenames[filename] = line_to_node
        return namespace["run"]

    # --- execution -----------------------------------------------------------------------
    def __call__(self, step: Any, feeds: Sequence[Any]) -> list[Any]:
        run = self._run
        if step.trace is not None:
            if self._run_traced is None:
                self._run_traced = self._compile(traced=True)
            run = self._run_traced
        try:
            return run(step, feeds)
        except BaseException as exc:  # noqa: BLE001 - re-raised with node context
            raise self._node_error(exc) from exc

    def _node_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            return exc
        failing = self._failing_node(exc)
        if failing is None:
            return exc
        index, frame_locals = failing
        node = self.nodes[index]
        if isinstance(exc, OpError) and exc.node_def is not None:
            return exc  # raised by a nested program; already names its node
        inputs = self._describe_inputs(node, frame_locals)
        where = f"{node.op_type} node '{node.name}'"
        if isinstance(exc, CancelledError):
            return type(exc)(node.name, node.op, f"{exc.message}\n\t [[{where}]]")
        if isinstance(exc, OpError):
            message = f"{exc.message}\n\t [[{where}{_defined_at(node)}]]"
            return type(exc)(node.name, node.op, message)
        if isinstance(exc, (RuntimeError, ValueError, IndexError, TypeError, ZeroDivisionError)):
            message = (
                f"{where} failed: {_first_line(exc)}\n\tinputs: {inputs}\n\t [[{where}"
                f"{_defined_at(node)}]]"
            )
            return InvalidArgumentError(node.name, node.op, message)
        return InternalError(
            node.name, node.op,
            f"{where} raised {type(exc).__name__}: {exc} (inputs: {inputs}). This is a bug "
            "in flowmesh's kernel; please report it.",
        )

    def _failing_node(self, exc: BaseException) -> tuple[int, dict[str, Any]] | None:
        tb = exc.__traceback__
        while tb is not None:
            lines = self._filenames.get(tb.tb_frame.f_code.co_filename)
            if lines is not None and tb.tb_lineno in lines:
                return lines[tb.tb_lineno], dict(tb.tb_frame.f_locals)
            tb = tb.tb_next
        return None

    def _describe_inputs(self, node: ExecNode, frame_locals: dict[str, Any]) -> str:
        parts = [
            describe_value(frame_locals.get(self._local_names.get(key, ""), None))
            for key in node.inputs
        ]
        return ", ".join(parts) if parts else "(none)"


def describe_value(value: Any) -> str:
    """``float32[2,3]``-style description of a runtime value (tensors and string arrays);
    other values (resource handles, tuples) are described by their type."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if not isinstance(shape, (tuple, list)) and type(shape).__name__ != "Size":
        return type(value).__name__
    dtype_name = str(dtype).replace("torch.", "")
    if dtype_name == "object":
        dtype_name = "string"
    return f"{dtype_name}[{','.join(str(d) for d in shape)}]"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _defined_at(node: ExecNode) -> str:
    tb = getattr(node.op, "traceback", None) if node.op is not None else None
    return f", defined at {tb[0]}:{tb[1]}" if tb else ""
