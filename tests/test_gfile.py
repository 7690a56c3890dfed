"""tf.gfile on local paths and on an fsspec URL (memory://)."""

from __future__ import annotations

import pytest

import flowmesh as tf
from flowmesh.errors import AlreadyExistsError, NotFoundError


@pytest.mark.parametrize("root", ["local", "memory://gfile-test"])
def test_directories_files_and_errors(tmp_path, root):
    base = str(tmp_path) if root == "local" else root
    gfile = tf.gfile
    top = f"{base}/train"
    assert not gfile.Exists(top)
    gfile.MakeDirs(f"{top}/sub")
    gfile.MakeDirs(f"{top}/sub")  # no error when it exists
    with pytest.raises(AlreadyExistsError, match="already exists"):
        gfile.MkDir(f"{top}/sub")
    with pytest.raises(NotFoundError, match="parent directory"):
        gfile.MkDir(f"{top}/a/b")
    with gfile.GFile(f"{top}/notes.txt", "w") as f:
        f.write("one\ntwo\n")
    with gfile.Open(f"{top}/notes.txt") as f:
        assert list(f) == ["one\n", "two\n"]
    with gfile.GFile(f"{top}/sub/blob", "wb") as f:
        f.write(b"\x00\x01")
    assert gfile.ListDirectory(top) == ["notes.txt", "sub"]
    assert gfile.IsDirectory(f"{top}/sub") and not gfile.IsDirectory(f"{top}/notes.txt")
    assert gfile.Stat(f"{top}/sub/blob").length == 2
    assert [(d.rsplit("/", 1)[-1], s, f) for d, s, f in gfile.Walk(top)] == [
        ("train", ["sub"], ["notes.txt"]), ("sub", [], ["blob"])]
    gfile.Copy(f"{top}/notes.txt", f"{top}/copy.txt")
    with pytest.raises(AlreadyExistsError, match="overwrite=True"):
        gfile.Copy(f"{top}/notes.txt", f"{top}/copy.txt")
    gfile.Rename(f"{top}/copy.txt", f"{top}/moved.txt")
    assert gfile.GFile(f"{top}/moved.txt", "rb").read() == b"one\ntwo\n"
    assert gfile.Glob(f"{top}/*.txt")[-1].endswith("notes.txt")
    gfile.Remove(f"{top}/moved.txt")
    with pytest.raises(NotFoundError, match="moved.txt"):
        gfile.Remove(f"{top}/moved.txt")
    with pytest.raises(NotFoundError, match="no such file"):
        gfile.GFile(f"{top}/missing.txt")
    gfile.DeleteRecursively(top)
    assert not gfile.Exists(top)
    with pytest.raises(NotFoundError):
        gfile.ListDirectory(top)
