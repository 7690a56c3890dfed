# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.io.gfile``: the file API under TensorFlow 2's lower-case names (``exists``,
``glob``, ``makedirs`` ...), the same functions as :mod:`flowmesh.gfile`'s."""

from __future__ import annotations

import os

from flowmesh import gfile as _gfile
from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "io.gfile")

exists = _gfile.Exists
glob = _gfile.Glob
isdir = _gfile.IsDirectory
listdir = _gfile.ListDirectory
makedirs = _gfile.MakeDirs
mkdir = _gfile.MkDir
remove = _gfile.Remove
rmtree = _gfile.DeleteRecursively
stat = _gfile.Stat
walk = _gfile.Walk


def copy(src: str, dst: str, overwrite: bool = False) -> None:
    """Copies ``src`` to ``dst`` (``AlreadyExistsError`` when it exists, unless ``overwrite``)."""
    _gfile.Copy(src, dst, overwrite)


def rename(src: str, dst: str, overwrite: bool = False) -> None:
    """Renames ``src`` to ``dst`` (``AlreadyExistsError`` when it exists, unless ``overwrite``)."""
    _gfile.Rename(src, dst, overwrite)


def join(path: str, *paths: str) -> str:
    """Joins path parts with ``/``, keeping a URL's ``scheme://`` (TensorFlow's ``join``)."""
    if "://" in path:
        scheme, rest = path.split("://", 1)
        return f"{scheme}://{os.path.join(rest, *paths)}" if rest else f"{scheme}://" + os.path.join(*paths)
    return os.path.join(path, *paths)


def get_registered_schemes() -> list[str]:
    """The URL schemes paths may use: ``file`` and every fsspec protocol installed here."""
    try:
        import fsspec

        return sorted({"file", *fsspec.available_protocols()})
    except ImportError:
        return ["file"]


__all__ = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join", "listdir", "makedirs",
           "mkdir", "remove", "rename", "rmtree", "stat", "walk"]
