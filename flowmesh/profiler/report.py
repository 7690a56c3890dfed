"""The profiler's text report (tfprof's format: a legend, then one line per shown node with
the selected attributes, ``own/total`` where a node has both) and where it goes: stdout,
nowhere, a file, or, for ``timeline``, a Chrome trace of the profiled step."""

from __future__ import annotations

import sys
from typing import Any

from flowmesh.gfile import GFile
from flowmesh.profiler.options import Options
from flowmesh.profiler.show_node import ShowNode

_LEGENDS = (("params", "# parameters"), ("float_ops", "# float_ops"), ("bytes", "requested bytes"),
            ("peak_bytes", "peak bytes"), ("residual_bytes", "residual bytes"), ("output_bytes", "output bytes"),
            ("micros", "total execution time | accelerator execution time | cpu execution time"),
            ("accelerator_micros", "accelerator execution time"), ("cpu_micros", "cpu execution time"),
            ("occurrence", "occurrence"), ("device", "assigned devices"), ("op_types", "op types"),
            ("input_shapes", "input shapes"))


def format_number(n: int) -> str:
    """``n`` as tfprof prints counts: ``999``, ``1.50k``, ``2.00m``, ``3.00b``."""
    if n < 1000:
        return f"{n}"
    if n < 1000000:
        return f"{n / 1000:.2f}k"
    if n < 1000000000:
        return f"{n / 1000000:.2f}m"
    return f"{n / 1000000000:.2f}b"


def format_time(micros: int) -> str:
    """Microseconds as tfprof prints them: ``12us``, ``1.50ms``, ``2.00sec``."""
    if micros < 1000:
        return f"{micros}us"
    if micros < 1000000:
        return f"{micros / 1000:.2f}ms"
    return f"{micros / 1000000:.2f}sec"


def format_memory(size: int) -> str:
    """Bytes as tfprof prints them: ``12B``, ``1.50KB``, ``2.00MB``, ``3.00GB``."""
    if size < 1000:
        return f"{size}B"
    if size < 1000000:
        return f"{size / 1000:.2f}KB"
    if size < 1000000000:
        return f"{size / 1000000:.2f}MB"
    return f"{size / 1000000000:.2f}GB"


def legend(options: Options) -> str:
    """The report's header line naming the selected columns."""
    names = [text for key, text in _LEGENDS if key in options.select]
    return f"node name | {' | '.join(names)}\n"


def _pair(own: str, total: str, accounted: bool) -> str:
    return f"{own if accounted else '--'}/{total}"


def _node_line(show: ShowNode, options: Options) -> str:
    p, accounted, select = show.proto, show.account, options.select
    info: list[str] = []
    if "params" in select:
        shape = show.node.shape if show.node is not None else None
        if shape:
            info.append("x".join(str(d) for d in shape))
        info.append(_pair(format_number(p.parameters), f"{format_number(p.total_parameters)} params", accounted))
    if "float_ops" in select:
        info.append(_pair(format_number(p.float_ops), f"{format_number(p.total_float_ops)} flops", accounted))
    for key, own, total in (("bytes", "requested_bytes", "total_requested_bytes"),
                            ("peak_bytes", "peak_bytes", "total_peak_bytes"),
                            ("residual_bytes", "residual_bytes", "total_residual_bytes"),
                            ("output_bytes", "output_bytes", "total_output_bytes")):
        if key in select:
            info.append(_pair(format_memory(getattr(p, own)), format_memory(getattr(p, total)), accounted))
    times = (("micros", "exec_micros"), ("micros", "accelerator_exec_micros"), ("micros", "cpu_exec_micros"),
             ("accelerator_micros", "accelerator_exec_micros"), ("cpu_micros", "cpu_exec_micros"))
    for key, field in times:
        if key in select:
            info.append(_pair(format_time(getattr(p, field)), format_time(getattr(p, f"total_{field}")), accounted))
    if "occurrence" in select:
        info.append(f"{p.run_count}")
    if "device" in select:
        info.append("|".join(p.devices))
    if "op_types" in select:
        info.append("|".join(show.types))
    if "input_shapes" in select:
        info.append("|".join(f"{i}:{'x'.join(str(d.size) for d in s.dim)}"
                             for i, s in sorted(p.input_shapes.items())))
    return f"{show.name} ({', '.join(info)})"


def tree_report(root: ShowNode, options: Options) -> str:
    """The report of a ``scope``/``graph`` view, indented two spaces per level."""
    lines = [legend(options)]
    stack = [(root, 0)]
    while stack:
        show, indent = stack.pop()
        lines.append(" " * indent + _node_line(show, options) + "\n")
        stack.extend((child, indent + 2) for child in reversed(show.show_children))
    return "".join(lines)


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole else "0.00%"


_GROUP_STATS = (("params", "parameters", lambda v: f"{format_number(v)} params"),
                ("float_ops", "float_ops", lambda v: f"{format_number(v)} float_ops"),
                ("bytes", "requested_bytes", format_memory), ("micros", "exec_micros", format_time),
                ("micros", "accelerator_exec_micros", format_time), ("micros", "cpu_exec_micros", format_time),
                ("accelerator_micros", "accelerator_exec_micros", format_time),
                ("cpu_micros", "cpu_exec_micros", format_time))


def group_report(root: Any, groups: list[Any], options: Options) -> str:
    """The report of an ``op``/``code`` view: one line per shown group with each selected
    value and, as tfprof writes them, its share of the total from this group on and alone."""
    lines = [legend(options)]
    fields = {field for _, field, _ in _GROUP_STATS}
    remaining = {field: sum(getattr(g.proto, field) for g in groups) for field in fields}
    for group in groups:
        info = []
        for key, field, fmt in _GROUP_STATS:
            if key in options.select:
                whole, own = getattr(root, f"total_{field}"), getattr(group.proto, field)
                info.append(f"{fmt(own)} ({_percent(remaining[field], whole)}, {_percent(own, whole)})")
        if "occurrence" in options.select:
            info.append(f"{len(group.accounted)}")
        for field in fields:
            remaining[field] -= getattr(group.proto, field)
        lines.append(f"{group.name:<25}{', '.join(info)}\n")
    return "".join(lines)


def emit(text: str, options: Options) -> None:
    """Sends the report where ``options.output_type`` says (``timeline`` and ``pprof`` are
    written by the caller, which has the trace)."""
    report = ("\n==================Model Analysis Report======================\n" + text
              + "\n======================End of Report==========================\n")
    if options.output_type == "stdout":
        sys.stdout.write(report)
        sys.stdout.flush()
    elif options.output_type == "file":
        with GFile(options.output_file, "w") as f:
            f.write(report)
