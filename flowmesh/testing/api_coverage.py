"""Which public TensorFlow names flowmesh has, per namespace, against three name lists.

    python -m flowmesh.testing.api_coverage                 # tf.compat.v1, listed namespaces
    python -m flowmesh.testing.api_coverage --list keras    # tf-keras's public names
    python -m flowmesh.testing.api_coverage --list v1-all   # every tf.compat.v1 namespace
    python -m flowmesh.testing.api_coverage --missing       # plus the missing names
    python -m flowmesh.testing.api_coverage --write-snapshot   # refresh the stored lists

The lists (:data:`LISTS`), each read from the installed library when it is there, else from
its snapshot (taken from TensorFlow 2.21 and tf-keras 2.21):

* ``v1``: the public non-module names of ``tf.compat.v1`` (top level) and of the
  namespaces in :data:`NAMESPACES`, compared with ``flowmesh`` (``tf_v1_api.json``);
  :data:`NAMESPACES` is a named subset of the export table's namespaces
  (:func:`flowmesh.api_builder.namespaces`);
* ``v1-all``: every namespace module reachable from ``tf.compat.v1`` (``app.flags``,
  ``image``, ``saved_model.signature_constants`` ...), except ``keras`` (the ``keras``
  list counts it), ``compat`` (aliases of the whole API) and ``raw_ops`` (TensorFlow's
  generated bindings of its C++ kernels: 1462 names, which flowmesh's Python ops do not
  mirror) (``tf_v1_all_api.json``), then any namespace of flowmesh's export table the
  reference lacks (``flowmesh/api_exports.py``; ``keras`` aside);
* ``keras``: tf-keras's public names in :data:`KERAS_NAMESPACES` (the top level,
  ``layers``, ``metrics``, ``backend``, ``applications``, ``datasets.*`` ...), compared with
  ``flowmesh.keras`` (``tf_keras_api.json``).

A name counts as covered when flowmesh's namespace has it and it is not a stand-in from
:mod:`flowmesh.unsupported` (those are counted apart, with their reason).
"""

from __future__ import annotations

import argparse
import json
import os
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowmesh import api_builder

NAMESPACES = ("", "nn", "train", "math", "linalg", "random", "io", "dtypes", "debugging", "sparse",
              "strings", "summary", "signal", "bitwise", "graph_util", "saved_model")
if not set(NAMESPACES) <= set(api_builder.namespaces()):
    raise ValueError(f"api_coverage.NAMESPACES names namespaces the export table lacks: "
                     f"{sorted(set(NAMESPACES) - set(api_builder.namespaces()))}")
KERAS_NAMESPACES = ("", "activations", "applications", "backend", "callbacks", "constraints",
                    "datasets.boston_housing", "datasets.cifar10", "datasets.cifar100",
                    "datasets.fashion_mnist", "datasets.imdb", "datasets.mnist", "datasets.reuters",
                    "estimator", "initializers", "layers", "losses", "metrics", "mixed_precision", "models",
                    "optimizers", "optimizers.schedules", "preprocessing", "preprocessing.image",
                    "preprocessing.sequence", "preprocessing.text", "regularizers", "utils")
_V1_ALL_SKIPPED = ("compat", "keras", "raw_ops")
_HERE = os.path.dirname(__file__)
SNAPSHOT = os.path.join(_HERE, "tf_v1_api.json")


@dataclass
class Namespace:
    """The coverage of one namespace (``""`` is the top level)."""

    name: str
    reference: list[str]
    covered: list[str] = field(default_factory=list)
    unsupported: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def _module(root: Any, dotted: str) -> Any:
    for part in dotted.split(".") if dotted else []:
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


def _public(module: Any) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_")
                  and not isinstance(getattr(module, n, None), types.ModuleType))


def tensorflow_names() -> dict[str, list[str]] | None:
    """Public non-module names of each namespace of ``tf.compat.v1``, or None without TF."""
    from flowmesh.testing.tf_oracle import load_tensorflow

    tf1 = load_tensorflow()
    if tf1 is None:
        return None
    return {ns: _public(_module(tf1, ns)) for ns in NAMESPACES}


def tensorflow_all_names() -> dict[str, list[str]] | None:
    """Public non-module names of every namespace module under ``tf.compat.v1`` (but
    ``compat``, ``keras``, ``raw_ops``), or None without TensorFlow."""
    from flowmesh.testing.tf_oracle import load_tensorflow

    tf1 = load_tensorflow()
    if tf1 is None:
        return None
    names: dict[str, list[str]] = {}
    seen: set[int] = set()
    pending: list[tuple[str, Any]] = [("", tf1)]
    while pending:
        prefix, module = pending.pop(0)
        names[prefix] = _public(module)
        for name in sorted(dir(module)):
            if name.startswith("_") or (not prefix and name in _V1_ALL_SKIPPED) or "keras" in name:
                continue
            child = getattr(module, name, None)
            if isinstance(child, types.ModuleType) and id(child) not in seen and \
                    str(getattr(child, "__name__", "")).startswith("tensorflow"):
                seen.add(id(child))
                pending.append((f"{prefix}.{name}" if prefix else name, child))
    return names


def keras_names() -> dict[str, list[str]] | None:
    """Public non-module names of each namespace of tf-keras, or None without it."""
    from flowmesh.testing.keras_oracle import load_tf_keras

    keras = load_tf_keras()
    if keras is None:
        return None
    return {ns: _public(_module(keras, ns)) for ns in KERAS_NAMESPACES}


def _flowmesh() -> Any:
    import flowmesh

    return flowmesh


def _flowmesh_keras() -> Any:
    import flowmesh.keras

    return flowmesh.keras


@dataclass(frozen=True)
class NameList:
    """A reference name list: where its names come from and what flowmesh module holds them."""

    title: str
    snapshot: str
    load: Callable[[], dict[str, list[str]] | None]
    ours: Callable[[], Any]
    library: str


LISTS = {
    "v1": NameList("tf.compat.v1 API coverage", SNAPSHOT, tensorflow_names, _flowmesh, "tensorflow.compat.v1"),
    "v1-all": NameList("tf.compat.v1 API coverage, every namespace", os.path.join(_HERE, "tf_v1_all_api.json"),
                       tensorflow_all_names, _flowmesh, "tensorflow.compat.v1"),
    "keras": NameList("tf.keras API coverage (tf-keras's names)", os.path.join(_HERE, "tf_keras_api.json"),
                      keras_names, _flowmesh_keras, "tf_keras"),
}


def reference_names(kind: str = "v1") -> tuple[dict[str, list[str]], str]:
    """The reference lists of ``kind`` (a key of :data:`LISTS`) and where they came from."""
    spec = LISTS[kind]
    names = spec.load()
    if names is not None:
        return names, f"{spec.library} (installed)"
    with open(spec.snapshot) as f:
        return json.load(f), f"snapshot {os.path.basename(spec.snapshot)}"


def coverage(reference: dict[str, list[str]], kind: str = "v1") -> list[Namespace]:
    """Each namespace's covered, unsupported and missing names (namespaces in ``reference``'s
    order; for ``v1`` those of :data:`NAMESPACES`; ``v1-all`` adds the export table's
    namespaces that ``reference`` lacks, with no reference names)."""
    root = LISTS[kind].ours()
    result = []
    namespaces = NAMESPACES if kind == "v1" else list(reference)
    if kind == "v1-all":
        namespaces += [ns for ns in api_builder.namespaces()
                       if ns not in reference and ns.split(".")[0] not in _V1_ALL_SKIPPED]
    for ns in namespaces:
        entry = Namespace(ns, reference.get(ns, []))
        module = _module(root, ns)
        for name in entry.reference:
            obj = getattr(module, name, None) if module is not None else None
            reason = getattr(obj, "_flowmesh_unsupported", None) if obj is not None else None
            if obj is None and not (module is not None and hasattr(module, name)):
                entry.missing.append(name)
            elif isinstance(reason, str):
                entry.unsupported[name] = reason
            else:
                entry.covered.append(name)
        result.append(entry)
    return result


def totals(result: list[Namespace]) -> tuple[int, int, int]:
    """``(covered, unsupported, total)`` over every namespace."""
    return (sum(len(e.covered) for e in result), sum(len(e.unsupported) for e in result),
            sum(len(e.reference) for e in result))


def summary(result: list[Namespace], source: str, missing: bool = False, title: str = LISTS["v1"].title,
            prefix: str = "tf.") -> str:
    """The printable table (and the missing names with ``missing``)."""
    width = max([14] + [len(e.name) + 2 for e in result])
    lines = [f"{title} (reference: {source})",
             f"{'namespace':<{width}}{'covered':>9}{'unsupp.':>9}{'total':>8}{'%':>7}"]
    for e in result:
        pct = 100.0 * len(e.covered) / max(1, len(e.reference))
        lines.append(f"{e.name or '(top level)':<{width}}{len(e.covered):>9}{len(e.unsupported):>9}"
                     f"{len(e.reference):>8}{pct:>6.1f}%")
    covered, unsupported, total = totals(result)
    lines.append(f"{'all':<{width}}{covered:>9}{unsupported:>9}{total:>8}{100.0 * covered / max(1, total):>6.1f}%")
    if missing:
        for e in result:
            if e.missing:
                where = f"{prefix}{e.name}" if e.name else prefix.rstrip(".")
                lines.append(f"missing in {where}: {' '.join(e.missing)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", choices=sorted(LISTS), default="v1", help="the reference name list")
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument("--write-snapshot", action="store_true", help="write every list's snapshot")
    args = parser.parse_args(argv)
    if args.write_snapshot:
        for spec in LISTS.values():
            names = spec.load()
            if names is None:
                raise SystemExit(f"{spec.library} is not installed: cannot take a snapshot")
            with open(spec.snapshot, "w") as f:
                json.dump(names, f, indent=0, sort_keys=True)
            print(f"wrote {spec.snapshot}")
        return
    reference, source = reference_names(args.list)
    prefix = "tf.keras." if args.list == "keras" else "tf."
    print(summary(coverage(reference, args.list), source, args.missing, LISTS[args.list].title, prefix))


if __name__ == "__main__":
    main()
