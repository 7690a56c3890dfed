"""TFRecord files: byte compatibility with TensorFlow both ways, checksums, errors, readers."""

from __future__ import annotations

import gzip
import zlib

import pytest

import flowmesh as fm
from flowmesh.formats import tfrecord as fm_records
from flowmesh.testing.tf_oracle import require_tensorflow
from tests.data.helpers import assert_same_elements, drain, run_flowmesh, run_tensorflow

RECORDS = [b"", b"a", b"hello world", bytes(range(256)) * 40, b"\x00" * 7]


def _write_fm(path, records, options=None):
    with fm.io.TFRecordWriter(str(path), options) as writer:
        for r in records:
            writer.write(r)


def _read_dataset(path, compression=None):
    with fm.Graph().as_default():
        element = fm.data.TFRecordDataset(str(path), compression_type=compression) \
            .make_one_shot_iterator().get_next()
        with fm.Session() as sess:
            return drain(fm, sess, element)


def test_uncompressed_files_are_byte_identical_to_tensorflow(tmp_path):
    tf1 = require_tensorflow()
    ours, theirs = tmp_path / "fm.tfrecord", tmp_path / "tf.tfrecord"
    _write_fm(ours, RECORDS)
    with tf1.io.TFRecordWriter(str(theirs)) as writer:
        for r in RECORDS:
            writer.write(r)
    assert ours.read_bytes() == theirs.read_bytes()
    assert list(tf1.io.tf_record_iterator(str(ours))) == RECORDS
    assert list(fm.python_io.tf_record_iterator(str(theirs))) == RECORDS
    assert _read_dataset(theirs) == RECORDS


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_compressed_files_read_both_ways(tmp_path, compression):
    tf1 = require_tensorflow()
    ours, theirs = tmp_path / "fm.z", tmp_path / "tf.z"
    _write_fm(ours, RECORDS, fm.io.TFRecordOptions(compression))
    with tf1.io.TFRecordWriter(str(theirs), tf1.io.TFRecordOptions(compression)) as writer:
        for r in RECORDS:
            writer.write(r)
    assert list(tf1.io.tf_record_iterator(str(ours), tf1.io.TFRecordOptions(compression))) == RECORDS
    assert list(fm.io.tf_record_iterator(str(theirs), compression)) == RECORDS
    assert _read_dataset(theirs, compression) == RECORDS
    tf_read = run_tensorflow(lambda tf: tf.data.TFRecordDataset(str(ours), compression))
    assert tf_read == RECORDS
    inflate = gzip.decompress if compression == "GZIP" else zlib.decompress
    assert inflate(ours.read_bytes()) == inflate(theirs.read_bytes())  # same framed stream


def test_parallel_reads_interleave_files_like_tensorflow(tmp_path):
    paths = []
    for f in range(3):
        path = tmp_path / f"shard-{f}.tfrecord"
        _write_fm(path, [f"{f}:{i}".encode() for i in range(4 + f)])
        paths.append(str(path))

    def build(tf):
        return tf.data.TFRecordDataset(paths, num_parallel_reads=2)

    assert_same_elements(run_flowmesh(build), run_tensorflow(build))

    def sequential(tf):
        return tf.data.TFRecordDataset(tf.constant(paths)).map(lambda s: tf.strings.length(s))

    assert_same_elements(run_flowmesh(sequential), run_tensorflow(sequential))


def _corrupt(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_corrupted_data_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.tfrecord"
    _write_fm(path, [b"first", b"second", b"third"])
    second = 12 + 5 + 4  # the second record starts after the first's framing
    _corrupt(path, second + 12 + 2)  # a byte of "second"'s data
    with pytest.raises(fm.errors.DataLossError, match=rf"at {second} in .*bad\.tfrecord"):
        list(fm.python_io.tf_record_iterator(str(path)))
    with pytest.raises(fm.errors.DataLossError, match=rf"corrupted record at {second}"):
        _read_dataset(path)


def test_corrupted_length_names_file_and_offset(tmp_path):
    path = tmp_path / "badlen.tfrecord"
    _write_fm(path, [b"first", b"second"])
    _corrupt(path, 21)  # the second record's length field
    with pytest.raises(fm.errors.DataLossError, match=r"at 21 in .*badlen.*length"):
        _read_dataset(path)


def test_truncated_last_record_is_data_loss(tmp_path):
    path = tmp_path / "short.tfrecord"
    _write_fm(path, [b"first", b"second record"])
    path.write_bytes(path.read_bytes()[:-6])
    with pytest.raises(fm.errors.DataLossError, match=r"truncated record at 21 in .*short"):
        _read_dataset(path)
    with pytest.raises(fm.errors.DataLossError, match="truncated"):
        list(fm.io.tf_record_iterator(str(path)))


def _same_size(count, width=40, start=0):
    return [bytes([(start + i) % 251]) * width for i in range(count)]


def _counting_runs(monkeypatch):
    runs = []
    cut = fm_records._cut_run
    monkeypatch.setattr(fm_records, "_cut_run", lambda *a: runs.append(a[3]) or cut(*a))
    return runs


@pytest.mark.parametrize("read_size", [1 << 16, 64 * 56])  # one read; reads that cut runs
def test_runs_of_same_size_records_read_in_order_with_every_checksum(tmp_path, monkeypatch,
                                                                     read_size):
    # Same-size records are framed a run at a time; other sizes between them one by one.
    # (runs of empty records and of records ending in NUL bytes come back whole)
    records = _same_size(300) + [b"odd", b""] + _same_size(20, 7) + RECORDS + _same_size(70) \
        + [b""] * 40 + [b"\x00ab\x00\x00"] * 30
    path = tmp_path / "runs.tfrecord"
    _write_fm(path, records)
    runs = _counting_runs(monkeypatch)
    with open(path, "rb") as stream:
        blocks = list(fm_records._record_blocks(stream, str(path), read_size))
    assert [r for block in blocks for r in block] == records
    assert sum(runs) >= 300 + 70 - 2 * 15 and len(blocks) >= (1 if read_size > 30000 else 4)
    assert list(fm.io.tf_record_iterator(str(path))) == records


@pytest.mark.parametrize("victim", [0, 17, 299])
@pytest.mark.parametrize("field", ["data", "checksum"])
def test_a_bad_checksum_inside_a_run_stops_at_that_record(tmp_path, monkeypatch, victim, field):
    records = _same_size(300)
    path = tmp_path / "badrun.tfrecord"
    _write_fm(path, records)
    offset = victim * (12 + 40 + 4)
    _corrupt(path, offset + 12 + (39 if field == "data" else 40 + 2))
    runs = _counting_runs(monkeypatch)
    read = []
    with pytest.raises(fm.errors.DataLossError, match=rf"corrupted record at {offset} in .*"
                                                      r"badrun.*data's checksum"):
        for record in fm.io.tf_record_iterator(str(path)):
            read.append(record)
    assert read == records[:victim] and runs  # every record before the bad one, none after
    with pytest.raises(fm.errors.DataLossError, match=rf"corrupted record at {offset} "):
        _read_dataset(path)


def test_missing_file_is_not_found_with_the_path(tmp_path):
    missing = str(tmp_path / "nope.tfrecord")
    with pytest.raises(fm.errors.NotFoundError, match="nope.tfrecord"):
        _read_dataset(missing)
    with pytest.raises(fm.errors.NotFoundError, match="nope.tfrecord"):
        list(fm.io.tf_record_iterator(missing))


def test_fsspec_memory_paths():
    pytest.importorskip("fsspec")
    path = "memory://flowmesh-data-test/records.tfrecord"
    _write_fm(path, RECORDS)
    assert list(fm.io.tf_record_iterator(path)) == RECORDS
    assert _read_dataset(path) == RECORDS


def test_text_lines_and_fixed_length_records_match_tensorflow(tmp_path):
    text = tmp_path / "lines.txt"
    text.write_bytes(b"alpha\nbeta\r\n\ngamma")
    text_gz = tmp_path / "lines.txt.gz"
    text_gz.write_bytes(gzip.compress(b"one\ntwo\n"))
    fixed = tmp_path / "fixed.bin"
    fixed.write_bytes(b"HDR" + bytes(range(18)) + b"FT")

    def build(tf):
        lines = tf.data.TextLineDataset([str(text)]).concatenate(
            tf.data.TextLineDataset(str(text_gz), compression_type="GZIP"))
        records = tf.data.FixedLengthRecordDataset(str(fixed), 6, header_bytes=3, footer_bytes=2)
        return lines.concatenate(records)

    assert_same_elements(run_flowmesh(build), run_tensorflow(build))


def test_fixed_length_body_must_hold_whole_records(tmp_path):
    path = tmp_path / "odd.bin"
    path.write_bytes(bytes(10))
    with fm.Graph().as_default():
        element = fm.data.FixedLengthRecordDataset(str(path), 4).make_one_shot_iterator().get_next()
        with fm.Session() as sess, pytest.raises(fm.errors.InvalidArgumentError,
                                                 match="not an exact multiple"):
            sess.run(element)
