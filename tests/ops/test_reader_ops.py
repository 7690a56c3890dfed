"""TF1 readers (TFRecordReader, TextLineReader, FixedLengthRecordReader, WholeFileReader,
IdentityReader) against TensorFlow on real files: keys, values, counters and errors."""

from __future__ import annotations

import gzip

import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import require_tensorflow


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("readers")
    paths = {"tfr": str(root / "a.tfrecord"), "txt": str(root / "t.txt"), "bin": str(root / "f.bin"),
             "gz": str(root / "g.tfrecord.gz")}
    with tf.io.TFRecordWriter(paths["tfr"]) as writer:
        for i in range(3):
            writer.write(b"rec%d" % i * (i + 1))
    with tf.io.TFRecordWriter(paths["gz"], options="GZIP") as writer:
        for i in range(4):
            writer.write(b"z" * i)
    with open(paths["txt"], "wb") as f:
        f.write(b"header\nl1\r\nl2\n\nl4")
    with open(paths["bin"], "wb") as f:
        f.write(bytes(range(23)))
    return paths


def _readers(lib):
    return [
        ("tfr", lib.TFRecordReader()),
        ("gz", lib.TFRecordReader(options=lib.io.TFRecordOptions(lib.io.TFRecordCompressionType.GZIP))),
        ("txt", lib.TextLineReader(skip_header_lines=1)),
        ("bin", lib.FixedLengthRecordReader(5, header_bytes=2, footer_bytes=1)),
        ("bin", lib.FixedLengthRecordReader(5, header_bytes=2, footer_bytes=1, hop_bytes=3)),
        ("tfr", lib.WholeFileReader()),
        ("txt", lib.IdentityReader()),
    ]


def _read_everything(lib, files):
    """Each reader reads its file twice (two work units) to the end; returns what it saw."""
    out = []
    with lib.Session(config=lib.ConfigProto(operation_timeout_in_ms=20000)) as sess:
        for key, reader in _readers(lib):
            queue = lib.FIFOQueue(4, lib.string, shapes=[[]])
            sess.run(queue.enqueue_many([[files[key], files[key]]]))
            sess.run(queue.close())
            read = reader.read(queue)
            seen = []
            with pytest.raises(lib.errors.OutOfRangeError):
                while True:
                    seen.append(tuple(sess.run(read)))
            counts = sess.run([reader.num_records_produced(), reader.num_work_units_completed()])
            out.append((seen, [int(c) for c in counts]))
    return out


def test_readers_match_tensorflow(files):
    tf1 = require_tensorflow()
    with tf1.Graph().as_default():
        theirs = _read_everything(tf1, files)
    with tf.Graph().as_default():
        ours = _read_everything(tf, files)
    assert ours == theirs
    assert ours[0][0][1] == (f"{files['tfr']}:20".encode(), b"rec1rec1")  # byte offsets


def _read_up_to(lib, path):
    with lib.Session() as sess:
        queue = lib.FIFOQueue(4, lib.string, shapes=[[]])
        sess.run(queue.enqueue_many([[path, path]]))
        sess.run(queue.close())
        keys, values = lib.TFRecordReader().read_up_to(queue, 2)
        out = []
        with pytest.raises(lib.errors.OutOfRangeError):
            while True:
                k, v = sess.run([keys, values])
                out.append((k.tolist(), v.tolist()))
        return out


def test_read_up_to_stops_at_the_end_of_each_file(files):
    tf1 = require_tensorflow()
    with tf1.Graph().as_default():
        theirs = _read_up_to(tf1, files["tfr"])
    with tf.Graph().as_default():
        ours = _read_up_to(tf, files["tfr"])
    assert ours == theirs
    assert [len(k) for k, _ in ours] == [2, 1, 2, 1]


def _session_with_queue(names):
    sess = tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=20000))
    queue = tf.FIFOQueue(8, tf.string, shapes=[[]])
    sess.run(queue.enqueue_many([names]))
    sess.run(queue.close())
    return sess, queue


def test_reader_errors_name_the_file(files, tmp_path):
    bad = tmp_path / "bad.tfrecord"
    data = bytearray(open(files["tfr"], "rb").read())
    data[25] ^= 0xFF  # inside the second record's data
    bad.write_bytes(bytes(data))
    missing = str(tmp_path / "nope.tfrecord")
    sess, queue = _session_with_queue([str(bad), missing])
    with sess:
        read = tf.TFRecordReader().read(queue)
        assert sess.run(read)[1] == b"rec0"
        with pytest.raises(tf.errors.DataLossError, match="bad.tfrecord"):
            sess.run(read)
        with pytest.raises(tf.errors.NotFoundError, match="nope.tfrecord"):
            sess.run(read)
        numbers = tf.FIFOQueue(2, tf.int32, shapes=[[]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="string"):
            sess.run(tf.WholeFileReader().read(numbers))
        with pytest.raises(tf.errors.UnimplementedError, match="SerializeState"):
            sess.run(tf.TextLineReader().serialize_state())
    with pytest.raises(TypeError, match="queue"):
        tf.TFRecordReader().read([files["tfr"]])
    with pytest.raises(ValueError, match="record_bytes"):
        tf.FixedLengthRecordReader(0)
    with pytest.raises(tf.errors.UnimplementedError, match="lmdb"):
        tf.LMDBReader()


def test_reset_and_identity_state_round_trip(files):
    sess, queue = _session_with_queue(["a", "b", files["txt"], files["txt"]])
    with sess:
        identity = tf.IdentityReader()
        read = identity.read(queue)
        assert sess.run(read) == (b"a", b"a")
        state = sess.run(identity.serialize_state())
        assert sess.run(read)[0] == b"b"
        sess.run(identity.restore_state(state))
        assert sess.run([identity.num_records_produced(), identity.num_work_units_completed()]) == [1, 1]
        lines = tf.TextLineReader()
        key, _ = lines.read(queue)
        assert sess.run(key).endswith(b":1")
        sess.run(lines.reset())
        assert sess.run(lines.num_records_produced()) == 0
        assert sess.run(key).endswith(b":1")  # the reset dropped the rest of the first work unit


def test_gzip_tfrecord_reader_reads_python_gzip(tmp_path):
    path = tmp_path / "p.tfrecord.gz"
    plain = tmp_path / "p.tfrecord"
    with tf.io.TFRecordWriter(str(plain)) as writer:
        writer.write(b"hello")
    path.write_bytes(gzip.compress(plain.read_bytes()))
    sess, queue = _session_with_queue([str(path)])
    with sess:
        key, value = sess.run(tf.TFRecordReader(options="GZIP").read(queue))
        assert (key, value) == (f"{path}:0".encode(), b"hello")
