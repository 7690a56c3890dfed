"""The op registry is complete: every op has a kernel, a shape rule and a gradient decision,
and every kernel belongs to an op. Checks whatever is registered after ``import flowmesh``
(and after importing every module of the package, so lazily imported families count)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import flowmesh
from flowmesh.core import registry
from flowmesh.kernels.contract.registry import registered_kernels

# Modules that need optional third-party packages or start services at import time.
_OPTIONAL_IMPORTS = ("ray", "pyspark")


def _import_everything() -> None:
    for info in pkgutil.walk_packages(flowmesh.__path__, "flowmesh."):
        try:
            importlib.import_module(info.name)
        except ImportError as exc:  # only optional integrations may be missing
            if not any(name in str(exc) for name in _OPTIONAL_IMPORTS):
                raise


@pytest.fixture(scope="module")
def registered():
    _import_everything()
    return registry.registered_ops(), registered_kernels()


def test_every_op_has_a_kernel(registered):
    ops, kernels = registered
    missing = sorted(name for name in ops if name not in kernels)
    assert not missing, f"ops without a kernel (add one in flowmesh/kernels/<family>.py): {missing}"


def test_every_kernel_has_an_op(registered):
    ops, kernels = registered
    orphans = sorted(name for name in kernels if name not in ops)
    assert not orphans, f"kernels registered for op types that are not registered ops: {orphans}"


def test_every_op_has_a_shape_rule(registered):
    ops, _ = registered
    missing = sorted(name for name, op_def in ops.items() if not callable(op_def.shape_fn))
    assert not missing, f"ops without a callable shape rule: {missing}"


def test_every_op_has_a_gradient_decision(registered):
    ops, _ = registered
    undecided = sorted(name for name in ops if registry.gradient_decision(name) is None)
    assert not undecided, (
        f"ops with neither a gradient nor not_differentiable=True: {undecided}; pass grad= or "
        "not_differentiable=True to register_op"
    )


def test_gradient_decisions_are_callable_or_explicitly_none(registered):
    ops, _ = registered
    bad = sorted(name for name in ops if (d := registry.gradient_decision(name)) is not None
                 and d is not registry.NOT_DIFFERENTIABLE and not callable(d))
    assert not bad, f"gradient entries that are neither functions nor NOT_DIFFERENTIABLE: {bad}"


def test_registry_rejects_duplicates_and_conflicting_decisions():
    with pytest.raises(KeyError, match="already registered"):
        registry.register_op("MatMul", lambda inputs, attrs: [])
    with pytest.raises(ValueError, match="either grad or not_differentiable"):
        registry.register_op("RegistryTestBoth", lambda inputs, attrs: [], grad=lambda op, g: [g],
                             not_differentiable=True)
    assert "RegistryTestBoth" not in registry.registered_ops()


def test_unknown_op_type_is_a_clear_error():
    with pytest.raises(flowmesh.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
        registry.get_op_def("NoSuchOp")
