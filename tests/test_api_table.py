"""The export table (``flowmesh/api_exports.py``) is the public API: every entry resolves, each
name is declared once per namespace, and each namespace module holds exactly the table's names
plus what its own source defines."""

from __future__ import annotations

import ast
import functools
import inspect
import types
from collections import Counter
from pathlib import Path

import pytest

import flowmesh as tf
from flowmesh import api_builder
from flowmesh.api_exports import EXPORTS

NAMESPACES = api_builder.namespaces()


def _namespace_module(namespace: str) -> types.ModuleType:
    module = functools.reduce(getattr, namespace.split("."), tf) if namespace else tf
    assert isinstance(module, types.ModuleType), f"tf.{namespace} is not a module"
    return module


def _bound_in_source(module: types.ModuleType) -> set[str]:
    """Names the module's own source binds at top level (definitions, assignments, imports)."""
    tree = ast.parse(inspect.getsource(module))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


@functools.cache
def _fill_calls() -> Counter:
    """How many ``fill_namespace(..., "<namespace>")`` calls flowmesh's source has, per namespace."""
    calls: Counter = Counter()
    for path in Path(tf.__file__).parent.rglob("*.py"):
        text = path.read_text()
        if "fill_namespace(" in text:
            calls.update(node.args[1].value for node in ast.walk(ast.parse(text))
                         if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                         and node.func.id.endswith("fill_namespace") and len(node.args) == 2)
    return calls


def test_the_table_covers_every_namespace_module_of_tf_compat_v1_and_tf_keras():
    import json

    from flowmesh.testing.api_coverage import LISTS

    with open(LISTS["v1-all"].snapshot) as f:
        reference = list(json.load(f))
    with open(LISTS["keras"].snapshot) as f:
        reference += [f"keras.{ns}" if ns else "keras" for ns in json.load(f)]
    modules = [ns for ns in reference if isinstance(_module_or_none(ns), types.ModuleType)]
    assert sorted(modules) == sorted(NAMESPACES)


def _module_or_none(namespace: str):
    obj = tf
    for part in namespace.split(".") if namespace else []:
        obj = getattr(obj, part, None)
    return obj


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_each_name_is_declared_once(namespace):
    counts = Counter(export.name for export in api_builder.exports(namespace))
    assert not [name for name, count in counts.items() if count > 1]


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_entry_resolves_to_what_the_namespace_holds(namespace):
    module = _namespace_module(namespace)
    for export in api_builder.exports(namespace):
        held = getattr(module, export.name)
        if export.unsupported_reason is not None:
            from flowmesh import unsupported

            assert held._flowmesh_unsupported == getattr(unsupported, export.unsupported_reason)
            assert held._name == (f"{namespace}.{export.name}" if namespace else export.name)
        else:
            assert held is api_builder.resolve(namespace, export), (namespace, export)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_a_namespace_module_holds_the_tables_names_and_its_own(namespace):
    module = _namespace_module(namespace)
    declared = {export.name for export in api_builder.exports(namespace)}
    submodules = {name for name, value in vars(module).items() if isinstance(value, types.ModuleType)
                  and value.__name__.startswith(module.__name__ + ".")}
    public = {name for name in dir(module) if not name.startswith("_")}
    assert public - declared - _bound_in_source(module) - submodules == set()
    assert _fill_calls()[namespace] == (1 if EXPORTS[namespace] else 0)


def test_alias_and_stand_in_spellings():
    exports = {e.name: e for e in api_builder.exports("")}
    assert exports["matrix_determinant"] == ("matrix_determinant", "flowmesh.ops.linalg_decomp_ops", "det")
    assert exports["load_library"].unsupported_reason == "NATIVE_LIBRARIES"
    assert tf.matrix_determinant.__name__ == "det"
    assert tf.linalg.inv is tf.linalg.matrix_inverse is tf.matrix_inverse


def test_tf_compat_v1_is_the_filled_top_level():
    import flowmesh.compat.v1 as v1

    assert tf.compat.v1 is tf is v1
    assert tf.compat.v1.reduce_sum is tf.reduce_sum
    assert tf.compat.v1.math.add is tf.add
    assert tf.compat.v1.logging is tf.tf_logging
    assert tf.compat.v1.train.Saver is tf.train.Saver
    assert tf.compat.v1.dtypes.experimental.float8_e4m3fn is tf.experimental.float8_e4m3fn
    assert tf.__version__ == "0.1.0"
    assert tf.config.list_physical_devices is not None  # installed after the fill
