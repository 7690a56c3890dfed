"""Fills a ``tf.*`` namespace module with its names from the export table.

A namespace module (``flowmesh/math.py`` for ``tf.math``) ends its imports with::

    from flowmesh.api_builder import fill_namespace

    fill_namespace(globals(), "math")

which imports each source of :data:`flowmesh.api_exports.EXPORTS` ``["math"]`` in the table's
order and binds its names, as the ``from module import name`` statements it replaces did.
This module imports no part of flowmesh at load, so a namespace module of any layer may use
it; ``tests/test_import_layers.py`` reads the table to see the imports it makes.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any, NamedTuple

import flowmesh.unsupported as unsupported
from flowmesh.api_exports import EXPORTS

UNSUPPORTED_SOURCE = "unsupported:"


class Export(NamedTuple):
    """One public name of a namespace: ``name`` is ``source``'s ``attribute``."""

    name: str
    source: str
    attribute: str

    @property
    def unsupported_reason(self) -> str | None:
        """The reason constant's name in :mod:`flowmesh.unsupported` for a stand-in, else None."""
        if self.source.startswith(UNSUPPORTED_SOURCE):
            return self.source[len(UNSUPPORTED_SOURCE):]
        return None


def namespaces() -> list[str]:
    """Every namespace of the table, in the table's order (``""`` is the top level)."""
    return list(EXPORTS)


def exports(namespace: str) -> Iterator[Export]:
    """The names ``namespace`` takes from the table, in import order.

    Raises:
        KeyError: the table has no such namespace.
    """
    for source, names in EXPORTS[namespace]:
        for spec in names.split():
            name, _, attribute = spec.partition("=")
            yield Export(name, source, attribute or name)


def resolve(namespace: str, export: Export) -> Any:
    """The object ``export`` names: an attribute of its source module, else its submodule."""
    reason = export.unsupported_reason
    if reason is not None:
        qualified = f"{namespace}.{export.name}" if namespace else export.name
        return unsupported.unsupported(qualified, getattr(unsupported, reason))
    module = importlib.import_module(export.source)
    try:
        return getattr(module, export.attribute)
    except AttributeError:
        return importlib.import_module(f"{export.source}.{export.attribute}")


def fill_namespace(namespace_globals: dict[str, Any], namespace: str) -> None:
    """Binds every name the table gives ``namespace`` in ``namespace_globals`` (a module's
    ``globals()``), importing the sources in the table's order."""
    for export in exports(namespace):
        namespace_globals[export.name] = resolve(namespace, export)
