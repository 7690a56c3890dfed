"""The tf.linalg / tf.math / tf.signal / tf.random names added for issue 20 take TensorFlow's
argument names in TensorFlow's order, and the LinearOperator classes offer TensorFlow's
constructors and public methods (compared with ``tensorflow.compat.v1``)."""

from __future__ import annotations

import importlib
import inspect

import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow

MODULES = ("bessel_ops", "special_math_ops", "sobol_ops", "fftnd_ops", "mdct_ops", "svd_qr_ops", "lu_ops",
           "matrix_function_ops", "tridiagonal_ops", "linalg_compositions", "random_dist_ops",
           "random_generator", "linear_operator")


# Of these modules, only the names listed are compared (every name when a module is absent).
ONLY: dict[str, set[str]] = {}


def _owned() -> set[int]:
    owned = set()
    for name in MODULES:
        module = importlib.import_module(f"flowmesh.ops.{name}")
        owned.update(id(v) for key, v in vars(module).items()
                     if callable(v) and getattr(v, "__module__", "").startswith(module.__name__)
                     and key in ONLY.get(name, {key}))
    return owned


def _parameters(fn) -> list[str] | None:
    try:
        signature = inspect.signature(fn.__init__ if isinstance(fn, type) else fn)
    except (TypeError, ValueError):
        return None
    return [p.name for p in signature.parameters.values() if p.kind != p.VAR_KEYWORD and p.name != "self"]


@pytest.mark.oracle
def test_signatures_and_operator_methods_match_tensorflow():
    tf1 = require_tensorflow()
    owned, mismatches, compared = _owned(), [], 0
    for label in ("", "math", "linalg", "signal", "random"):
        ours = getattr(flowmesh, label) if label else flowmesh
        theirs = getattr(tf1, label) if label else tf1
        for name in sorted(dir(ours)):
            fn = getattr(ours, name)
            if id(fn) not in owned or not hasattr(theirs, name):
                continue
            compared += 1
            if _parameters(fn) != _parameters(getattr(theirs, name)):
                mismatches.append(f"tf.{label}.{name}: {_parameters(fn)} vs {_parameters(getattr(theirs, name))}")
            if isinstance(fn, type) and name.startswith("LinearOperator"):
                missing = {m for m in dir(getattr(theirs, name)) if not m.startswith("_")} - set(dir(fn))
                if missing:
                    mismatches.append(f"tf.linalg.{name} lacks {sorted(missing)}")
    assert compared > 70, f"only {compared} names were compared"
    assert not mismatches, "\n".join(mismatches)
