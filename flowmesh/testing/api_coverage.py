"""Which ``tf.compat.v1`` names flowmesh has, per namespace.

    python -m flowmesh.testing.api_coverage             # the table
    python -m flowmesh.testing.api_coverage --missing   # plus the missing names
    python -m flowmesh.testing.api_coverage --write-snapshot   # refresh the stored list

The reference is TensorFlow's ``tf.compat.v1`` when TensorFlow is installed, else the
snapshot ``tf_v1_api.json`` taken from it (TensorFlow 2.21). A name counts as covered when
flowmesh's namespace has it and it is not a stand-in from :mod:`flowmesh.unsupported`
(those are counted apart, with their reason). Only namespaces of this table are counted;
``layers``, ``keras``, ``data``, ``image``, ``metrics``, ``feature_column``, ``estimator`` and
``nn.rnn_cell`` have issues of their own.
"""

from __future__ import annotations

import argparse
import json
import os
import types
from dataclasses import dataclass, field
from typing import Any

NAMESPACES = ("", "nn", "train", "math", "linalg", "random", "io", "dtypes", "debugging", "sparse",
              "strings", "summary", "signal", "bitwise", "graph_util", "saved_model")
SNAPSHOT = os.path.join(os.path.dirname(__file__), "tf_v1_api.json")


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


def tensorflow_names() -> dict[str, list[str]] | None:
    """Public non-module names of each namespace of ``tf.compat.v1``, or None without TF."""
    from flowmesh.testing.tf_oracle import load_tensorflow

    tf1 = load_tensorflow()
    if tf1 is None:
        return None
    names = {}
    for ns in NAMESPACES:
        module = _module(tf1, ns)
        names[ns] = sorted(n for n in dir(module) if not n.startswith("_")
                           and not isinstance(getattr(module, n), types.ModuleType))
    return names


def reference_names() -> tuple[dict[str, list[str]], str]:
    """The reference lists and where they came from."""
    names = tensorflow_names()
    if names is not None:
        return names, "tensorflow.compat.v1 (installed)"
    with open(SNAPSHOT) as f:
        return json.load(f), f"snapshot {os.path.basename(SNAPSHOT)}"


def coverage(reference: dict[str, list[str]]) -> list[Namespace]:
    import flowmesh

    result = []
    for ns in NAMESPACES:
        entry = Namespace(ns, reference.get(ns, []))
        module = _module(flowmesh, ns)
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


def summary(result: list[Namespace], source: str, missing: bool = False) -> str:
    """The printable table (and the missing names with ``missing``)."""
    lines = [f"tf.compat.v1 API coverage (reference: {source})",
             f"{'namespace':<14}{'covered':>9}{'unsupp.':>9}{'total':>8}{'%':>7}"]
    for e in result:
        pct = 100.0 * len(e.covered) / max(1, len(e.reference))
        lines.append(f"{e.name or '(top level)':<14}{len(e.covered):>9}{len(e.unsupported):>9}"
                     f"{len(e.reference):>8}{pct:>6.1f}%")
    covered = sum(len(e.covered) for e in result)
    total = sum(len(e.reference) for e in result)
    lines.append(f"{'all':<14}{covered:>9}{sum(len(e.unsupported) for e in result):>9}{total:>8}"
                 f"{100.0 * covered / max(1, total):>6.1f}%")
    if missing:
        for e in result:
            if e.missing:
                lines.append(f"missing in tf.{e.name or ''}: {' '.join(e.missing)}".replace("tf.:", "tf:"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--missing", action="store_true", help="list the missing names")
    parser.add_argument("--write-snapshot", action="store_true", help=f"write {SNAPSHOT} from TensorFlow")
    args = parser.parse_args(argv)
    if args.write_snapshot:
        names = tensorflow_names()
        if names is None:
            raise SystemExit("TensorFlow is not installed: cannot take a snapshot")
        with open(SNAPSHOT, "w") as f:
            json.dump(names, f, indent=0, sort_keys=True)
        print(f"wrote {SNAPSHOT}")
        return
    reference, source = reference_names()
    print(summary(coverage(reference), source, args.missing))


if __name__ == "__main__":
    main()
