"""``tf.profiler.profile``, ``tf.profiler.advise`` and ``tf.profiler.Profiler`` (TensorFlow
1.x's tfprof), computed by flowmesh from the graph, the op log and traced steps::

    params = tf.profiler.profile(graph, options=tf.profiler.ProfileOptionBuilder
                                 .trainable_variables_parameter())
    print(params.total_parameters)

Four views: ``scope`` and ``graph`` return a ``GraphNodeProto`` tree, ``op`` and ``code`` a
``MultiGraphNodeProto``. Parameters are counted from variable shapes, float operations from
the ops' static shapes with TensorFlow's formulas, times from the ``RunMetadata`` of steps
run with ``RunOptions(trace_level=FULL_TRACE)``. flowmesh's traces hold no allocator data,
so the byte counts stay 0.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Graph, get_default_graph
from flowmesh.errors import InvalidArgumentError
from flowmesh.gfile import GFile
from flowmesh.profiler.advisor import ALL_ADVICE, advise_model
from flowmesh.profiler.group_views import group_view
from flowmesh.profiler.model import ProfileModel
from flowmesh.profiler.op_log import merge_default_with_oplog
from flowmesh.profiler.option_builder import ProfileOptionBuilder
from flowmesh.profiler.options import Options, build_options
from flowmesh.profiler.report import emit, group_report, tree_report
from flowmesh.profiler.tree_views import tree_view
from flowmesh.runtime.timeline import Timeline

_DEFAULT_PROFILE_OPTIONS = 0
_DEFAULT_ADVISE_OPTIONS = 0
_CMDS = ("scope", "graph", "op", "code")


def _check_cmd(cmd: str) -> None:
    if cmd not in _CMDS:
        raise InvalidArgumentError(None, None, f"unknown cmd: {cmd!r}; choose from {', '.join(_CMDS)}")


def _write_timeline(options: Options, run_metas: list[Any], graph: Graph) -> None:
    if not run_metas:
        raise ValueError("timeline output needs a traced step: pass run_meta (from Session.run with "
                         "RunOptions(trace_level=RunOptions.FULL_TRACE)) or add_step first")
    trace = Timeline(run_metas[-1].step_stats, graph).generate_chrome_trace_format()
    with GFile(options.output_file, "w") as f:
        f.write(trace)


def run_view(model: ProfileModel, cmd: str, options: Options, run_metas: list[Any]) -> Any:
    """Builds view ``cmd`` of ``model``, sends its report where ``options`` says, returns
    its proto.

    Raises:
        ValueError: ``pprof`` output (flowmesh writes text, file and timeline output only),
            or timeline output without a traced step.
    """
    if options.output_type == "pprof":
        raise ValueError("flowmesh's profiler does not write pprof output; use with_file_output(...) "
                         "or with_timeline_output(...)")
    if cmd in ("scope", "graph"):
        root = tree_view(model, cmd).show(options)
        text, proto = tree_report(root, options), root.proto
    else:
        proto, groups = group_view(model, cmd, options)
        text = group_report(proto, groups, options)
    if options.output_type == "timeline":
        _write_timeline(options, run_metas, model.graph)
    else:
        emit(text, options)
    return proto


def profile(graph: Graph | None = None, run_meta: Any = None, op_log: Any = None, cmd: str = "scope",
            options: dict[str, Any] | int = _DEFAULT_PROFILE_OPTIONS) -> Any:
    """Profiles ``graph`` (default: the default graph) in view ``cmd``.

    Args:
        graph: the graph to profile.
        run_meta: the ``RunMetadata`` of a traced step, for times.
        op_log: an ``OpLogProto`` giving nodes extra types (for ``account_type_regexes``).
        cmd: ``scope``, ``graph``, ``op`` or ``code``.
        options: an option dict (``ProfileOptionBuilder``); default:
            ``trainable_variables_parameter()``.

    Returns:
        a ``GraphNodeProto`` for ``scope``/``graph``, a ``MultiGraphNodeProto`` for ``op``/``code``.

    Raises:
        InvalidArgumentError: an unknown ``cmd``.
        ValueError / TypeError: options tfprof rejects.
    """
    _check_cmd(cmd)
    graph = graph or get_default_graph()
    if isinstance(options, int) and options == _DEFAULT_PROFILE_OPTIONS:
        options = ProfileOptionBuilder.trainable_variables_parameter()
    parsed = build_options(options)
    merged = merge_default_with_oplog(graph, op_log, run_meta, add_trace=cmd == "code")
    model = ProfileModel(graph, merged)
    if run_meta is not None:
        model.add_step(0, run_meta)
    return run_view(model, cmd, parsed, [run_meta] if run_meta is not None else [])


def advise(graph: Graph | None = None, run_meta: Any = None,
           options: dict[str, Any] | int = _DEFAULT_ADVISE_OPTIONS) -> Any:
    """Runs the advisor's checkers (default: all, ``ALL_ADVICE``) over ``graph`` and an
    optional traced step; returns an ``AdviceProto`` with each checker's reports."""
    graph = graph or get_default_graph()
    if isinstance(options, int) and options == _DEFAULT_ADVISE_OPTIONS:
        options = dict(ALL_ADVICE)
    model = ProfileModel(graph, merge_default_with_oplog(graph, None, run_meta, add_trace=True))
    if run_meta is not None:
        model.add_step(0, run_meta)
    return advise_model(model, options)


class Profiler:
    """A profile over several traced steps of one graph::

        profiler = tf.profiler.Profiler(sess.graph)
        run_meta = tf.RunMetadata()
        sess.run(train_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=run_meta)
        profiler.add_step(step, run_meta)
        profiler.profile_operations(options=tf.profiler.ProfileOptionBuilder.time_and_memory())

    Options with ``step=-1`` average the added steps; ``with_step(n)`` picks one.
    """

    def __init__(self, graph: Graph | None = None, op_log: Any = None) -> None:
        self._graph = graph or get_default_graph()
        self._model = ProfileModel(self._graph, merge_default_with_oplog(self._graph, op_log=op_log))
        self._run_metas: list[Any] = []

    def add_step(self, step: int, run_meta: Any) -> None:
        """Adds the statistics of one traced step under the id ``step``."""
        self._model.add_step(step, run_meta)
        self._run_metas.append(run_meta)

    def _profile(self, cmd: str, options: dict[str, Any]) -> Any:
        return run_view(self._model, cmd, build_options(options), self._run_metas)

    def profile_python(self, options: dict[str, Any]) -> Any:
        """The code view (nodes grouped by the program line creating them): a ``MultiGraphNodeProto``."""
        return self._profile("code", options)

    def profile_operations(self, options: dict[str, Any]) -> Any:
        """The op view (nodes grouped by op type): a ``MultiGraphNodeProto``."""
        return self._profile("op", options)

    def profile_name_scope(self, options: dict[str, Any]) -> Any:
        """The scope view: a ``GraphNodeProto`` tree."""
        return self._profile("scope", options)

    def profile_graph(self, options: dict[str, Any]) -> Any:
        """The graph view (children are inputs): a ``GraphNodeProto`` tree."""
        return self._profile("graph", options)

    def advise(self, options: dict[str, Any] | None = None) -> Any:
        """The advisor's reports (``options``: checker -> options; default all): an ``AdviceProto``."""
        return advise_model(self._model, ALL_ADVICE if options is None else options)
