"""The package's layering, as a test: imports point downward and form no circles.

The module import graph of ``flowmesh/`` is read with ``ast`` (every ``import`` and
``from ... import`` statement, at top level and inside functions alike). Two rules:

1. **Downward only**: a module may import modules of its own layer and of lower layers
   (``LAYERS``, bottom first, as in ``docs/design.md``). Imports under
   ``if TYPE_CHECKING:`` count here too: a type annotation is still a dependency.
2. **No circles across files**: no set of two or more modules imports itself around (type-
   only imports excepted), except within the groups in ``ALLOWED_CYCLES``, each justified
   in ``docs/internals.md`` ("Layers and the import-rule test"); a circle that grows past
   its group fails.

To place a new folder, add its package to ``LAYERS``; a module no entry names counts as the
``api`` layer of the public facade modules (it may import anything below the tools, and
nothing below may import it). Importing a
submodule (``flowmesh.summary.writer``) is an edge to that module only, not to its parent
package's ``__init__``.

A namespace module that calls ``fill_namespace(globals(), "<namespace>")`` imports the sources
the export table (``flowmesh/api_exports.py``) lists for that namespace: each is an edge from
the namespace module, read from the table as the import statements it replaces would be.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "flowmesh"

# Bottom first. An entry names a module or a package (its submodules included); the longest
# entry that matches a module decides its layer. "=name" names a package's __init__ alone.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # api_exports (the export table, data) and api_builder (which fills namespace modules
    # from it) import nothing above base: namespace modules of every layer use them.
    ("base", ("flowmesh.errors", "flowmesh.config", "flowmesh.execution_mode",
              "flowmesh.tf_logging", "flowmesh.flags", "flowmesh.protos", "flowmesh.unsupported",
              "flowmesh.datasets", "flowmesh.api_exports", "flowmesh.api_builder")),
    ("core", ("flowmesh.core",)),
    ("formats", ("flowmesh.formats", "flowmesh.checkpoint", "flowmesh.gfile", "flowmesh.summary")),
    ("ops", ("flowmesh.ops",)),
    ("kernels", ("flowmesh.kernels",)),
    ("runtime", ("flowmesh.runtime",)),
    ("distributed", ("flowmesh.distributed",)),
    ("train", ("flowmesh.train", "flowmesh.metrics", "=flowmesh.summary")),
    ("collective", ("flowmesh.collective",)),
    ("high", ("flowmesh.distribute", "flowmesh.data", "flowmesh.image", "flowmesh.layers", "flowmesh.keras",
              "flowmesh.rnn", "flowmesh.lookup",
              "flowmesh.estimator", "flowmesh.feature_column", "flowmesh.saved_model")),
    # the public facade (startup: what importing it does); modules no entry names land here too
    ("api", ("=flowmesh", "flowmesh.startup")),
    # what every launcher shares: roles, supervised processes, ports
    ("launch", ("flowmesh.launch",)),
    # launchers and engines run user programs, which import the whole API
    ("tools", ("flowmesh.cli", "flowmesh.testing", "flowmesh.spark", "flowmesh.ray", "flowmesh.k8s",
               "flowmesh.sweep")),
)
_DEFAULT_LAYER = 10  # "api"

# Circles that stay, each explained in docs/internals.md.
ALLOWED_CYCLES: tuple[frozenset[str], ...] = (
    # tf.compat.v1 is flowmesh's top level itself (an alias of the package).
    frozenset({"flowmesh", "flowmesh.compat"}),
    # Dataset's methods build its subclasses (ds.map -> MapDataset(Dataset)); TensorFlow
    # keeps them in one file (dataset_ops.py), flowmesh.data splits them by concept.
    frozenset(f"flowmesh.data.{name}" for name in (
        "dataset", "functions", "iterator", "sources", "structure", "transformations",
        "vectorize",
        # TensorFlow 2's Dataset methods over tf.data.experimental's functions (ds.scan ...)
        "dataset_variant", "error_dropping", "generated_sources", "grouping", "numpy_iterator",
        "resampling", "selection", "snapshot", "stateful_transforms")),
    # Keras models serialize themselves and model configs build models (get_config /
    # from_config), as in Keras itself; so do layers holding layers (wrappers, RNN(cell),
    # StackedRNNCells), whose configs carry the inner layers' configs.
    frozenset({"flowmesh.keras.engine.sequential", "flowmesh.keras.engine.training",
               "flowmesh.keras.saving.hdf5_format", "flowmesh.keras.saving.model_config",
               "flowmesh.keras.layers", "flowmesh.keras.layers.reshaping", "flowmesh.keras.layers.recurrent",
               "flowmesh.keras.layers.recurrent_stacked", "flowmesh.keras.layers.recurrent_state"}),
)


def _module_names() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, type_only: bool = False):
    """(statement, type_only) for every import statement below ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_only
        elif isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), type_only)
        else:
            yield from _imports(node, type_only)


def _targets(node: ast.AST, module: str, is_package: bool, modules: dict) -> list[str]:
    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    if isinstance(node, ast.Import):
        return [m for a in node.names if a.name.startswith("flowmesh")
                if (m := resolve(a.name))]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([base] if base else []))
    if base != "flowmesh" and not base.startswith("flowmesh."):
        return []
    found = []
    for alias in node.names:
        full = f"{base}.{alias.name}"
        target = full if full in modules else resolve(base)
        if target:
            found.append(target)
    return found


EXPORT_TABLE = PACKAGE / "api_exports.py"
_FILL_CALLS = ("fill_namespace", "_fill_namespace")


@functools.cache
def export_table() -> dict[str, tuple[tuple[str, str], ...]]:
    """``EXPORTS`` of ``flowmesh/api_exports.py``, read as a literal (no import)."""
    tree = ast.parse(EXPORT_TABLE.read_text(), str(EXPORT_TABLE))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "EXPORTS":
            return ast.literal_eval(node.value)
    raise AssertionError(f"no EXPORTS in {EXPORT_TABLE}")


def _filled_namespaces(tree: ast.AST):
    """(namespace, line) for every ``fill_namespace(globals(), "<namespace>")`` call."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _FILL_CALLS and len(node.args) == 2
                and isinstance(node.args[1], ast.Constant)):
            yield node.args[1].value, node.lineno


def _table_targets(namespace: str, modules: dict) -> list[str]:
    """The modules the export table's sources for ``namespace`` name (as ``from source import
    name`` would: the submodule ``source.name`` where there is one, else ``source``)."""
    found = []
    for source, names in export_table()[namespace]:
        if source.startswith("unsupported:"):
            found.append("flowmesh.unsupported")
            continue
        if source != "flowmesh" and not source.startswith("flowmesh."):
            continue
        for spec in names.split():
            full = f"{source}.{spec.partition('=')[2] or spec}"
            found.append(full if full in modules else source)
    return found


@functools.cache
def import_graph() -> dict[tuple[str, str], tuple[str, int, bool]]:
    """``(importer, imported) -> (file, line, type_only)`` for every flowmesh import."""
    modules = _module_names()
    edges: dict[tuple[str, str], tuple[str, int, bool]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for node, type_only in _imports(tree):
            for target in _targets(node, module, path.name == "__init__.py", modules):
                if target == module:
                    continue
                where = (str(path.relative_to(ROOT)), node.lineno, type_only)
                previous = edges.get((module, target))
                if previous is None or (previous[2] and not type_only):
                    edges[(module, target)] = where
        for namespace, line in _filled_namespaces(tree):
            for target in _table_targets(namespace, modules):
                if target != module:
                    edges.setdefault((module, target), (str(path.relative_to(ROOT)), line, False))
    return edges


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of ``module`` (unlisted modules: ``api``)."""
    best, best_len = _DEFAULT_LAYER, -1
    for index, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            if entry.startswith("="):
                matched = module == entry[1:]
                length = len(entry) + 1000  # an exact entry beats every prefix
            else:
                matched = module == entry or module.startswith(entry + ".")
                length = len(entry)
            if matched and length > best_len:
                best, best_len = index, length
    return best


def _cycles(edges) -> list[list[str]]:
    graph = defaultdict(list)
    for (src, dst), (_, _, type_only) in edges.items():
        if not type_only:
            graph[src].append(dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(root: str) -> None:  # iterative Tarjan (the graph is deep)
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def test_imports_point_downward():
    edges = import_graph()
    bad = []
    for (src, dst), (path, line, type_only) in sorted(edges.items()):
        if layer_of(src) < layer_of(dst):
            kind = " (type-only)" if type_only else ""
            bad.append(f"  {path}:{line}: {src} [{LAYERS[layer_of(src)][0]}] imports{kind} "
                       f"{dst} [{LAYERS[layer_of(dst)][0]}]")
    assert not bad, (
        "Upward imports (a lower layer importing a higher one):\n" + "\n".join(bad)
        + "\nMove the shared code down, or let the higher layer register a callable "
        "(as core/convert.py does). New folders: add them to LAYERS in " + __file__)


def test_no_import_cycles_across_files():
    edges = import_graph()
    reports = []
    for component in _cycles(edges):
        if any(set(component) <= allowed for allowed in ALLOWED_CYCLES):
            continue
        members = set(component)
        lines = [f"  {path}:{line}: {src} -> {dst}"
                 for (src, dst), (path, line, type_only) in sorted(edges.items())
                 if src in members and dst in members and not type_only]
        reports.append(f"A circle of {len(component)} modules:\n" + "\n".join(lines))
    assert not reports, "\n".join(reports) + (
        "\nBreak it by moving shared code into a module both import, or justify it in "
        "docs/internals.md and add it to ALLOWED_CYCLES in " + __file__)


def test_the_rule_sees_function_level_and_type_only_imports():
    tree = ast.parse("import flowmesh.ops\nif TYPE_CHECKING:\n    from flowmesh.runtime import plan\n"
                     "def f():\n    from flowmesh.kernels import registry\n")
    found = [(type(node).__name__, node.lineno, type_only) for node, type_only in _imports(tree)]
    assert found == [("Import", 1, False), ("ImportFrom", 3, True), ("ImportFrom", 5, False)]
    assert layer_of("flowmesh.summary") > layer_of("flowmesh.summary.writer")
    assert layer_of("flowmesh.kernels.math_ops") < layer_of("flowmesh.runtime.plan")
    assert LAYERS[_DEFAULT_LAYER][0] == "api"
    assert layer_of("flowmesh.some_new_module") == _DEFAULT_LAYER == layer_of("flowmesh")


def test_the_rule_sees_the_export_tables_imports():
    """A namespace filled from the table imports its sources: ``tf.math`` imports
    ``flowmesh.ops.math_ops``, the top level imports ``flowmesh.train`` (a submodule source)."""
    tree = ast.parse('_fill_namespace(globals(), "math")\n')
    assert list(_filled_namespaces(tree)) == [("math", 1)]
    edges = import_graph()
    assert ("flowmesh.math", "flowmesh.ops.math_ops") in edges
    assert ("flowmesh", "flowmesh.train") in edges
    assert ("flowmesh", "flowmesh.unsupported") in edges
    assert layer_of("flowmesh.api_builder") == layer_of("flowmesh.errors")


# Op kernels that the runtime's graph rewrites ask for by name: each offers another form of
# kernels it holds (docs/design.md, "kernels/").
KERNEL_VARIANTS = {
    "flowmesh.kernels.inplace": "in-place elementwise variants, for buffer forwarding",
    "flowmesh.kernels.lane_ops": "stacked forms of small ops, for lanes",
    "flowmesh.kernels.multi_update": "one kernel for a run of optimizer updates, for fusion",
}


def test_outside_kernels_only_the_contract_is_imported():
    """Above ``kernels/``, code reaches kernels through ``kernels/contract/`` (registry, kernel
    cache, step, rendezvous, resources, conversions) and ``kernels/cpu/`` (CPU tuning);
    ``import flowmesh.kernels`` registers the op kernels, which nothing imports by name but
    the variant tables in ``KERNEL_VARIANTS``."""
    bad = [f"  {path}:{line}: {src} imports {dst}"
           for (src, dst), (path, line, _) in sorted(import_graph().items())
           if dst.startswith("flowmesh.kernels.") and not src.startswith("flowmesh.kernels")
           and not dst.startswith(("flowmesh.kernels.contract", "flowmesh.kernels.cpu"))
           and dst not in KERNEL_VARIANTS]
    assert not bad, ("Op kernels imported from outside kernels/:\n" + "\n".join(bad)
                     + "\nMove what they need into flowmesh/kernels/contract/.")


def test_the_kernel_contract_and_cpu_tuning_stand_below_the_op_kernels():
    """``kernels/contract/`` and ``kernels/cpu/`` import no op kernel (the op kernels import them)."""
    lower = ("flowmesh.kernels.contract", "flowmesh.kernels.cpu")
    bad = [f"  {path}:{line}: {src} imports {dst}"
           for (src, dst), (path, line, _) in sorted(import_graph().items())
           if src.startswith(lower) and dst.startswith("flowmesh.kernels")
           and not dst.startswith(lower)]
    assert not bad, "\n".join(bad)
