"""tfprof's advisor: checkers that read a profile and report what may be slow.

* ``ExpensiveOperationChecker``: the op types, top-level scopes and code lines taking the
  most time (needs a traced step);
* ``AcceleratorUtilizationChecker``: accelerators busy less than 80 % of the traced steps;
* ``OperationChecker``: batch norm that is not fused, NHWC convolutions on an accelerator;
* ``JobChecker``: no entry (TensorFlow's is internal to Google).

The report texts follow TensorFlow's checkers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from flowmesh.profiler.group_views import group_view
from flowmesh.profiler.model import ProfileModel, is_accelerator
from flowmesh.profiler.options import build_options
from flowmesh.profiler.report import format_time
from flowmesh.profiler.tree_views import ScopeView
from flowmesh.protos.tfprof import AdviceProto

ALL_ADVICE: dict[str, dict[str, Any]] = {"ExpensiveOperationChecker": {}, "AcceleratorUtilizationChecker": {},
                                         "JobChecker": {}, "OperationChecker": {}}
"""Every checker, with no options (what ``tf.profiler.advise`` runs by default)."""


_EVERYTHING = {"account_type_regexes": [".*"], "start_name_regexes": [".*"], "show_name_regexes": [".*"],
               "output": "none"}


def _percent(part: int, whole: int) -> float:
    return 100.0 * part / (whole + 1e-10)


def _times(proto: Any, prefix: str = "") -> str:
    return (f"cpu: {format_time(getattr(proto, prefix + 'cpu_exec_micros'))}, "
            f"accelerator: {format_time(getattr(proto, prefix + 'accelerator_exec_micros'))}, "
            f"total: {format_time(getattr(proto, prefix + 'exec_micros'))}")


def expensive_operations(model: ProfileModel) -> list[str]:
    """The 3 op types, top-level scopes (>= 100 us) and code lines (>= 1 ms) taking the most time."""
    if not model.steps:
        return []
    reports = []
    options = build_options({**_EVERYTHING, "max_depth": 3, "min_micros": 1, "order_by": "micros",
                             "select": ["micros", "occurrence"]})
    root, groups = group_view(model, "op", options)
    if groups:
        reports.append("\n".join(
            f"top {i} operation type: {g.name}, {_times(g.proto)} "
            f"({_percent(g.proto.exec_micros, root.total_exec_micros):.2f}%)" for i, g in enumerate(groups, start=1)))
    scope_options = build_options({**_EVERYTHING, "max_depth": 100, "min_micros": 100, "order_by": "micros",
                                   "select": ["micros"]})
    scope_root = ScopeView(model).show(scope_options)
    if scope_root.show_children:
        reports.append("\n".join(f"top {i} graph node: {c.name}, {_times(c.proto)}"
                                  for i, c in enumerate(scope_root.show_children[:3], start=1)))
    code_options = build_options({**_EVERYTHING, "max_depth": 100, "min_micros": 1000, "order_by": "micros",
                                  "select": ["micros"]})
    _, lines = group_view(model, "code", code_options)
    if lines:
        reports.append("\n".join(f"{g.name}, {_times(g.proto)}" for g in lines[:3]))
    return reports


def accelerator_utilization(model: ProfileModel) -> list[str]:
    """Accelerators busy for less than 80 % of the traced steps' span."""
    busy: dict[str, int] = defaultdict(int)
    for node in model.nodes.values():
        if is_accelerator(node.device):
            busy[node.device] += sum(t.accelerator_micros for t in node.steps.values())
    reports = []
    for device, micros in sorted(busy.items()):
        span = max(1, model.step_span_micros(device))
        utilization = micros / span
        if utilization < 0.5:
            reports.append(f"{device} low utilization: {utilization:.2f}")
        elif utilization < 0.8:
            reports.append(f"{device} medium utilization: {utilization:.2f}")
    return reports


def operations(model: ProfileModel) -> list[str]:
    """Batch norm that is not fused; NHWC convolutions placed on an accelerator."""
    use_batch_norm = any("BatchNorm" in n.name for n in model.nodes.values())
    fused = any(t.startswith("FusedBatchNorm") for n in model.nodes.values() for t in n.types)
    nhwc_on_accelerator = any(n.data_format == "NHWC" and is_accelerator(n.device) for n in model.nodes.values())
    reports = []
    if use_batch_norm and not fused:
        reports.append("Maybe use faster FusedBatchNorm instead of BatchNorm")
    if nhwc_on_accelerator:
        reports.append("Found operation using NHWC data_format on GPU. Maybe NCHW is faster.")
    return reports


CHECKERS: dict[str, Callable[[ProfileModel], list[str]]] = {
    "ExpensiveOperationChecker": expensive_operations,
    "AcceleratorUtilizationChecker": accelerator_utilization,
    "OperationChecker": operations,
}
_INTERNAL_CHECKERS = ("JobChecker",)  # TensorFlow's is Google-internal: it reports nothing, even no entry


def advise_model(model: ProfileModel, options: dict[str, Any] | None) -> Any:
    """The ``AdviceProto`` of the checkers named in ``options`` (a dict checker -> options).

    Raises:
        ValueError: a checker name tfprof does not have.
    """
    advice = AdviceProto()
    for name in options or {}:
        checker = CHECKERS.get(name)
        if name in _INTERNAL_CHECKERS:
            continue
        if checker is None:
            raise ValueError(f"Unknown profiler checker {name!r}; choose from {', '.join(CHECKERS)}")
        advice.checkers[name].reports.extend(checker(model))
    return advice
