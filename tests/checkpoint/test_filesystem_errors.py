"""File-system failures become flowmesh errors that say what to do."""

from __future__ import annotations

import errno

import flowmesh as tf
from flowmesh.checkpoint.filesystem import os_error


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
