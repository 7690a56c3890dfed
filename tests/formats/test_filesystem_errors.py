"""File-system failures become flowmesh errors that say what to do."""

from __future__ import annotations

import errno

import flowmesh as tf
from flowmesh.formats.filesystem import os_error


def test_read_only_file_system_is_permission_denied_with_a_hint():
    exc = OSError(errno.EROFS, "Read-only file system", "/ckpt/model.ckpt.index")
    error = os_error(exc, "/ckpt/model.ckpt.index", "Writing")
    assert isinstance(error, tf.errors.PermissionDeniedError)
    assert "read-only" in error.message and "/ckpt/model.ckpt.index" in error.message


def test_saving_where_a_file_blocks_the_directory_names_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver([v])
    with tf.Session() as sess:
        sess.run(v.initializer)
        try:
            saver.save(sess, str(blocker / "model.ckpt"))
        except tf.errors.OpError as exc:
            assert str(blocker) in exc.message
        else:
            raise AssertionError("saving under a file succeeded")


def test_writes_outside_the_configured_roots_are_refused(tmp_path, monkeypatch):
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (allowed / "escape").symlink_to(other)
    monkeypatch.setenv("FLOWMESH_WRITE_ROOTS", str(allowed))
    v = tf.Variable(2.0, name="v")
    saver = tf.train.Saver([v])
    with tf.Session() as sess:
        sess.run(v.initializer)
        for target in (other / "m.ckpt", allowed / ".." / "other" / "m.ckpt", allowed / "escape" / "m.ckpt"):
            try:
                saver.save(sess, str(target))
            except tf.errors.PermissionDeniedError as exc:
                assert "FLOWMESH_WRITE_ROOTS" in exc.message
            else:
                raise AssertionError(f"saved to {target}")
        saver.save(sess, str(allowed / "m.ckpt"))
    assert not list(other.iterdir())
    assert any(p.name.startswith("m.ckpt") for p in allowed.iterdir())
