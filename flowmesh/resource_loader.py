"""``tf.resource_loader``: data files that ship next to a program's modules."""

from __future__ import annotations

import inspect
import os


def get_data_files_path() -> str:
    """The directory of the module that calls this function."""
    frame = inspect.stack()[1]
    return os.path.dirname(os.path.abspath(frame.filename))


def get_root_dir_with_all_resources() -> str:
    """The directory resources are found under: the calling module's package root (the
    directory above the top-level package it belongs to)."""
    frame = inspect.stack()[1]
    directory = os.path.dirname(os.path.abspath(frame.filename))
    while os.path.exists(os.path.join(directory, "__init__.py")):
        directory = os.path.dirname(directory)
    return directory


def get_path_to_datafile(path: str) -> str:
    """``path`` (relative) under the calling module's directory; an absolute path as is."""
    frame = inspect.stack()[1]
    return os.path.join(os.path.dirname(os.path.abspath(frame.filename)), path)


def load_resource(path: str) -> bytes:
    """The bytes of ``path``, relative to the directory above the flowmesh package (as
    TensorFlow's is relative to the directory above ``tensorflow``).

    Raises:
        OSError: the file cannot be read.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, os.path.normpath(path)), "rb") as f:
        return f.read()


def readahead_file_path(path: str, readahead: str = "128M") -> str:
    """``path`` itself: TensorFlow's readahead prefix only applied to its old GCS layer."""
    return path
