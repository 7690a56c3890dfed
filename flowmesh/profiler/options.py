"""Profiling options: TensorFlow's option dicts (``ProfileOptionBuilder``), validated into
:class:`Options` (tfprof's ``OptionsProto``; ``core/profiler/g3doc/options.md``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

ORDER_BY = ("name", "bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros",
            "accelerator_micros", "cpu_micros", "params", "float_ops", "occurrence")
"""What ``order_by`` may name (``name`` ascending, the others largest first)."""
SELECTABLE = ("bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros", "accelerator_micros",
              "cpu_micros", "params", "float_ops", "occurrence", "tensor_value", "device", "op_types",
              "input_shapes")
"""The attributes ``select`` may show."""
OUTPUTS = ("stdout", "none", "file", "timeline", "pprof")


@dataclass(frozen=True)
class Options:
    """One profiling request (see ``ProfileOptionBuilder`` for each field's meaning)."""

    max_depth: int = 10
    min_bytes: int = 0
    min_peak_bytes: int = 0
    min_residual_bytes: int = 0
    min_output_bytes: int = 0
    min_micros: int = 0
    min_accelerator_micros: int = 0
    min_cpu_micros: int = 0
    min_params: int = 0
    min_float_ops: int = 0
    min_occurrence: int = 0
    step: int = -1
    order_by: str = "name"
    account_type_regexes: tuple[str, ...] = ()
    start_name_regexes: tuple[str, ...] = ()
    trim_name_regexes: tuple[str, ...] = ()
    show_name_regexes: tuple[str, ...] = ()
    hide_name_regexes: tuple[str, ...] = ()
    account_displayed_op_only: bool = False
    select: tuple[str, ...] = ()
    output_type: str = "stdout"
    output_file: str = ""
    regexes: dict[str, list[re.Pattern]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.order_by not in ORDER_BY:
            raise ValueError(f"order_by={self.order_by!r}: must be one of {', '.join(ORDER_BY)}")
        unknown = [s for s in self.select if s not in SELECTABLE]
        if unknown:
            raise ValueError(f"select={list(self.select)}: {unknown} unknown; choose from {', '.join(SELECTABLE)}")
        for name in ("account_type_regexes", "start_name_regexes", "trim_name_regexes", "show_name_regexes",
                     "hide_name_regexes"):
            try:
                self.regexes[name] = [re.compile(p) for p in getattr(self, name)]
            except re.error as error:
                raise ValueError(f"{name}={list(getattr(self, name))}: {error}") from None

    def matches(self, option: str, text: str) -> bool:
        """Whether one of the option's regexes matches all of ``text``."""
        return any(p.fullmatch(text) for p in self.regexes[option])

    def matches_all(self, option: str) -> bool:
        """Whether the option is the match-everything ``['.*']``."""
        return list(getattr(self, option)) == [".*"]


def _output(text: str) -> tuple[str, str]:
    kind, _, rest = text.partition(":")
    if kind not in OUTPUTS:
        raise ValueError(f"output={text!r}: must be stdout, none, file:outfile=PATH, timeline:outfile=PATH "
                         "or pprof:outfile=PATH")
    if kind in ("stdout", "none"):
        return kind, ""
    key, _, path = rest.partition("=")
    if key != "outfile" or not path:
        raise ValueError(f"output={text!r}: {kind} output needs a file: '{kind}:outfile=PATH'")
    return kind, path


def build_options(options: dict[str, Any] | None) -> Options:
    """:class:`Options` from a TensorFlow option dict (missing keys: tfprof's defaults).

    Raises:
        TypeError: ``options`` is not a dict.
        ValueError: an ``order_by``, ``select``, ``output`` or regex that tfprof rejects.
    """
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise TypeError(f"profiler options must be a dict (from ProfileOptionBuilder(...).build()), "
                        f"got {type(options).__name__}")
    output_type, output_file = _output(options.get("output", "stdout"))
    ints = {k: int(options.get(k, 0)) for k in (
        "min_bytes", "min_peak_bytes", "min_residual_bytes", "min_output_bytes", "min_micros",
        "min_accelerator_micros", "min_cpu_micros", "min_params", "min_float_ops", "min_occurrence")}
    lists = {k: tuple(options.get(k, ())) for k in (
        "account_type_regexes", "start_name_regexes", "trim_name_regexes", "show_name_regexes",
        "hide_name_regexes", "select")}
    return Options(max_depth=int(options.get("max_depth", 10)), step=int(options.get("step", -1)),
                   order_by=options.get("order_by", "name"),
                   account_displayed_op_only=bool(options.get("account_displayed_op_only", False)),
                   output_type=output_type, output_file=output_file, **ints, **lists)
