"""``tf.profiler.ProfileOptionBuilder``: builds the option dicts ``tf.profiler.profile`` takes,
with TensorFlow's three presets::

    opts = tf.profiler.ProfileOptionBuilder.trainable_variables_parameter()
    opts = (tf.profiler.ProfileOptionBuilder(tf.profiler.ProfileOptionBuilder.time_and_memory())
            .with_max_depth(4).with_empty_output().build())
"""

from __future__ import annotations

import copy
from typing import Any

from flowmesh.profiler.op_log import TRAINABLE_VARIABLES


def _preset(**changes: Any) -> dict[str, Any]:
    options = {"max_depth": 10000, "min_bytes": 0, "min_micros": 0, "min_params": 0, "min_float_ops": 0,
               "min_occurrence": 0, "order_by": "name", "account_type_regexes": [".*"],
               "start_name_regexes": [".*"], "trim_name_regexes": [], "show_name_regexes": [".*"],
               "hide_name_regexes": [], "account_displayed_op_only": True, "select": ["micros"],
               "step": -1, "output": "stdout"}
    options.update(changes)
    return options


class ProfileOptionBuilder:
    """Builds a profiling option dict step by step; each ``with_*`` returns the builder.

    Args:
        options: a dict to start from (copied); default: tfprof's defaults.
    """

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"ProfileOptionBuilder(options) takes an option dict, got {type(options).__name__}")
        self._options = copy.deepcopy(options) if options is not None else _preset(
            max_depth=100, account_displayed_op_only=False)

    @staticmethod
    def trainable_variables_parameter() -> dict[str, Any]:
        """Options counting the parameters of trainable variables (use with the scope view)."""
        return _preset(account_type_regexes=[TRAINABLE_VARIABLES], select=["params"])

    @staticmethod
    def float_operation() -> dict[str, Any]:
        """Options counting float operations (of ops whose shapes are fully known)."""
        return _preset(min_float_ops=1, order_by="float_ops", select=["float_ops"])

    @staticmethod
    def time_and_memory(min_micros: int = 1, min_bytes: int = 1, min_accelerator_micros: int = 0,
                        min_cpu_micros: int = 0, min_peak_bytes: int = 0, min_residual_bytes: int = 0,
                        min_output_bytes: int = 0) -> dict[str, Any]:
        """Options showing execution time and memory of nodes above the given minimums."""
        options = _preset(min_bytes=min_bytes, min_micros=min_micros, order_by="micros",
                          select=["micros", "bytes"])
        options.update(min_peak_bytes=min_peak_bytes, min_residual_bytes=min_residual_bytes,
                       min_output_bytes=min_output_bytes, min_accelerator_micros=min_accelerator_micros,
                       min_cpu_micros=min_cpu_micros)
        return options

    def build(self) -> dict[str, Any]:
        """A copy of the options built so far."""
        return copy.deepcopy(self._options)

    def with_max_depth(self, max_depth: int) -> ProfileOptionBuilder:
        """Shows nodes down to this depth (scope nesting, graph distance, ...)."""
        self._options["max_depth"] = max_depth
        return self

    def with_min_memory(self, min_bytes: int = 0, min_peak_bytes: int = 0, min_residual_bytes: int = 0,
                        min_output_bytes: int = 0) -> ProfileOptionBuilder:
        """Shows only nodes using at least this much memory."""
        self._options.update(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                             min_residual_bytes=min_residual_bytes, min_output_bytes=min_output_bytes)
        return self

    def with_min_execution_time(self, min_micros: int = 0, min_accelerator_micros: int = 0,
                                min_cpu_micros: int = 0) -> ProfileOptionBuilder:
        """Shows only nodes running at least this long (microseconds)."""
        self._options.update(min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                             min_cpu_micros=min_cpu_micros)
        return self

    def with_min_parameters(self, min_params: int) -> ProfileOptionBuilder:
        """Shows only nodes holding at least this many parameters."""
        self._options["min_params"] = min_params
        return self

    def with_min_occurrence(self, min_occurrence: int) -> ProfileOptionBuilder:
        """Shows only nodes that ran at least this many times."""
        self._options["min_occurrence"] = min_occurrence
        return self

    def with_min_float_operations(self, min_float_ops: int) -> ProfileOptionBuilder:
        """Shows only nodes doing at least this many float operations."""
        self._options["min_float_ops"] = min_float_ops
        return self

    def with_accounted_types(self, account_type_regexes: list[str]) -> ProfileOptionBuilder:
        """Accounts only nodes with a type (op type or op-log type) matching a regex."""
        self._options["account_type_regexes"] = copy.copy(account_type_regexes)
        return self

    def with_node_names(self, start_name_regexes: list[str] | None = None,
                        show_name_regexes: list[str] | None = None,
                        hide_name_regexes: list[str] | None = None,
                        trim_name_regexes: list[str] | None = None) -> ProfileOptionBuilder:
        """Filters the displayed nodes by name (each ``None`` keeps the current setting)."""
        for key, value in (("start_name_regexes", start_name_regexes), ("show_name_regexes", show_name_regexes),
                           ("hide_name_regexes", hide_name_regexes), ("trim_name_regexes", trim_name_regexes)):
            if value is not None:
                self._options[key] = copy.copy(value)
        return self

    def account_displayed_op_only(self, is_true: bool) -> ProfileOptionBuilder:
        """Whether totals count only the nodes displayed."""
        self._options["account_displayed_op_only"] = is_true
        return self

    def with_empty_output(self) -> ProfileOptionBuilder:
        """Prints nothing (the returned proto holds the result)."""
        self._options["output"] = "none"
        return self

    def with_stdout_output(self) -> ProfileOptionBuilder:
        """Prints the text report to stdout (the default)."""
        self._options["output"] = "stdout"
        return self

    def with_file_output(self, outfile: str) -> ProfileOptionBuilder:
        """Writes the text report to ``outfile``."""
        self._options["output"] = f"file:outfile={outfile}"
        return self

    def with_timeline_output(self, timeline_file: str) -> ProfileOptionBuilder:
        """Writes the traced step as a Chrome trace (``chrome://tracing``) to ``timeline_file``."""
        self._options["output"] = f"timeline:outfile={timeline_file}"
        return self

    def with_pprof_output(self, pprof_file: str) -> ProfileOptionBuilder:
        """Writes a pprof profile of the code view to ``pprof_file``."""
        self._options["output"] = f"pprof:outfile={pprof_file}"
        return self

    def order_by(self, attribute: str) -> ProfileOptionBuilder:
        """Orders sibling nodes by ``name`` or, largest first, ``micros``, ``bytes``, ``params``..."""
        self._options["order_by"] = attribute
        return self

    def select(self, attributes: list[str]) -> ProfileOptionBuilder:
        """The attributes shown per node (``params``, ``float_ops``, ``micros``, ``device``...)."""
        self._options["select"] = copy.copy(attributes)
        return self

    def with_step(self, step: int) -> ProfileOptionBuilder:
        """Profiles this added step (default -1: the average over the steps)."""
        self._options["step"] = step
        return self
