"""``tf.gfile``: TensorFlow 1.x's file API, on local paths and fsspec URLs.

Local paths use the operating system; ``s3://``, ``gs://``, ``hdfs://``, ``memory://`` ...
go through fsspec where the user has that filesystem installed (the same layer as
checkpoints, :mod:`flowmesh.formats.filesystem`). Errors are TensorFlow's:
``NotFoundError``, ``AlreadyExistsError``, ``PermissionDeniedError``..., naming the path.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from flowmesh.errors import AlreadyExistsError, FailedPreconditionError, NotFoundError
from flowmesh.formats import filesystem as fs

Exists = fs.exists
IsDirectory = fs.isdir
Glob = fs.glob
MakeDirs = fs.makedirs


def _must_exist(path: str) -> None:
    if not fs.exists(path):
        raise NotFoundError(None, None, f"{path}: no such file or directory")


def MkDir(dirname: str) -> None:  # noqa: N802 - TensorFlow's names
    """Creates one directory; its parent must exist and it must not."""
    if fs.exists(dirname):
        raise AlreadyExistsError(None, None, f"{dirname}: already exists")
    parent = fs.dirname(dirname.rstrip("/"))
    if parent and not fs.isdir(parent):
        raise NotFoundError(None, None, f"{dirname}: parent directory {parent} does not exist "
                            "(tf.gfile.MakeDirs creates parents)")
    fs.makedirs(dirname)


def ListDirectory(dirname: str) -> list[str]:  # noqa: N802
    """Names (not paths) of the entries of a directory."""
    if not fs.isdir(dirname):
        raise NotFoundError(None, None, f"{dirname}: not a directory")
    if not fs.is_url(dirname):
        return sorted(os.listdir(dirname[len("file://"):] if dirname.startswith("file://") else dirname))
    import fsspec

    filesystem, path = fsspec.core.url_to_fs(dirname)
    return sorted(fs.basename(p.rstrip("/")) for p in filesystem.ls(path, detail=False))


def Walk(top: str, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:  # noqa: N802
    """``(directory, subdirectory names, file names)`` for ``top`` and every directory
    below it, parents first (``in_order=True``) or last."""
    if not fs.isdir(top):
        return
    names = ListDirectory(top)
    subdirs = [n for n in names if fs.isdir(fs.join(top, n))]
    files = [n for n in names if n not in subdirs]
    if in_order:
        yield top, subdirs, files
    for sub in subdirs:
        yield from Walk(fs.join(top, sub), in_order)
    if not in_order:
        yield top, subdirs, files


def Remove(filename: str) -> None:  # noqa: N802
    """Deletes a file. Raises NotFoundError when it does not exist."""
    _must_exist(filename)
    fs.remove(filename)


def DeleteRecursively(dirname: str) -> None:  # noqa: N802
    """Deletes a directory and everything below it. Raises NotFoundError when missing."""
    _must_exist(dirname)
    fs.remove_tree(dirname)


def Rename(oldname: str, newname: str, overwrite: bool = False) -> None:  # noqa: N802
    _must_exist(oldname)
    if not overwrite and fs.exists(newname):
        raise AlreadyExistsError(None, None, f"{newname}: already exists (pass overwrite=True)")
    fs.rename(oldname, newname)


def Copy(oldpath: str, newpath: str, overwrite: bool = False) -> None:  # noqa: N802
    _must_exist(oldpath)
    if not overwrite and fs.exists(newpath):
        raise AlreadyExistsError(None, None, f"{newpath}: already exists (pass overwrite=True)")
    if fs.isdir(oldpath):
        raise FailedPreconditionError(None, None, f"{oldpath}: is a directory; copy files only")
    with GFile(oldpath, "rb") as src, GFile(newpath, "wb") as dst:
        shutil.copyfileobj(src, dst)


@dataclass
class FileStatistics:
    length: int
    mtime_nsec: int
    is_directory: bool


def Stat(filename: str) -> FileStatistics:  # noqa: N802
    _must_exist(filename)
    directory = fs.isdir(filename)
    return FileStatistics(0 if directory else fs.size(filename), int(fs.getmtime(filename) * 1e9),
                          directory)


class GFile:
    """A file on a local path or an fsspec URL; modes as ``open`` (``"r"`` text,
    ``"rb"`` bytes, ``"w"``, ``"a"``...). A context manager and an iterator of lines."""

    def __init__(self, name: str, mode: str = "r"):
        self.name = name
        self.mode = mode
        if "r" in mode and not fs.exists(name):
            raise NotFoundError(None, None, f"{name}: no such file")
        if "r" in mode and fs.isdir(name):
            raise FailedPreconditionError(None, None, f"{name}: is a directory")
        self._file = self._open(name, mode)

    @staticmethod
    def _open(name: str, mode: str) -> IO[Any]:
        if fs.is_url(name):
            import fsspec

            return fsspec.open(name, mode).open()
        local = name[len("file://"):] if name.startswith("file://") else name
        return open(local, mode)  # noqa: SIM115 - closed by close() / __exit__

    def __getattr__(self, attr: str) -> Any:  # read, write, readline, seek, tell, flush...
        return getattr(self._file, attr)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._file)

    def size(self) -> int:
        return fs.size(self.name)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


Open = FastGFile = GFile

__all__ = ["Copy", "DeleteRecursively", "Exists", "FastGFile", "FileStatistics", "GFile", "Glob",
           "IsDirectory", "ListDirectory", "MakeDirs", "MkDir", "Open", "Remove", "Rename", "Stat",
           "Walk"]
