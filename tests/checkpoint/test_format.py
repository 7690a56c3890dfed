"""The checkpoint storage format: round trips, interoperability, corruption detection."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

from flowmesh.checkpoint import (
    CheckpointReader,
    SaveSpec,
    list_variables,
    load_variable,
    merge_checkpoints,
    safetensors_io,
    write_checkpoint,
)
from flowmesh.checkpoint.slices import Slice, parse_spec
from flowmesh.errors import DataLossError, InvalidArgumentError, NotFoundError
from flowmesh.formats import filesystem as fs

ARRAYS = {
    "f32": (np.arange(12, dtype=np.float32).reshape(3, 4), "float32"),
    "f64": (np.linspace(-1, 1, 5), "float64"),
    "f16": (np.array([1.5, -2.25], dtype=np.float16), "float16"),
    "bf16": (np.array([[1.0, 3.5], [-0.5, 256.0]], dtype=ml_dtypes.bfloat16), "bfloat16"),
    "i8": (np.array([-128, 127], dtype=np.int8), "int8"),
    "i32": (np.array([[1, -2]], dtype=np.int32), "int32"),
    "i64": (np.array(2**40, dtype=np.int64), "int64"),
    "u8": (np.arange(5, dtype=np.uint8), "uint8"),
    "u16": (np.array([65535], dtype=np.uint16), "uint16"),
    "bool": (np.array([True, False, True]), "bool"),
    "c64": (np.array([1 + 2j, -3j], dtype=np.complex64), "complex64"),
    "c128": (np.array([[0.5 - 1j]], dtype=np.complex128), "complex128"),
    "str": (np.array([[b"a", b""], ["\u00e9t\u00e9".encode(), b"\x00\xff"]], dtype=object), "string"),
    "scalar_str": (np.array(b"hello", dtype=object), "string"),
    "empty": (np.zeros((0, 3), np.float32), "float32"),
}


def _write_all(prefix: str) -> None:
    write_checkpoint(prefix, [SaveSpec(k, a, t) for k, (a, t) in ARRAYS.items()])


def test_round_trip_every_dtype_and_shape(tmp_path):
    prefix = str(tmp_path / "m.ckpt")
    _write_all(prefix)
    assert sorted(os.listdir(tmp_path)) == ["m.ckpt.data-00000-of-00001", "m.ckpt.index"]
    with CheckpointReader(prefix) as reader:
        shapes = reader.get_variable_to_shape_map()
        dtypes_ = reader.get_variable_to_dtype_map()
        for name, (array, dtype) in ARRAYS.items():
            value = reader.read(name)
            assert value.shape == array.shape and shapes[name] == list(array.shape)
            assert dtypes_[name].name == dtype
            if dtype == "string":
                assert value.tolist() == array.tolist()
            else:
                assert value.dtype == array.dtype
                np.testing.assert_array_equal(value, array)
        assert reader.get_tensor("i64") == 2**40  # scalars come back as NumPy scalars
    assert [n for n, _ in list_variables(prefix)] == sorted(ARRAYS)
    np.testing.assert_array_equal(load_variable(prefix, "f32:0"), ARRAYS["f32"][0])


def test_data_file_is_standard_safetensors(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    prefix = str(tmp_path / "m")
    _write_all(prefix)
    loaded = safetensors_numpy.load_file(prefix + ".data-00000-of-00001")
    np.testing.assert_array_equal(loaded["f32"], ARRAYS["f32"][0])
    np.testing.assert_array_equal(loaded["c64"].view(np.complex64)[..., 0], ARRAYS["c64"][0])
    assert loaded["str/bytes"].tobytes() == b"a" + "\u00e9t\u00e9".encode() + b"\x00\xff"
    # and a file the safetensors library writes reads back through our reader
    path = str(tmp_path / "lib.safetensors")
    safetensors_numpy.save_file({"x": np.arange(6, dtype=np.float32).reshape(2, 3)}, path)
    with open(path, "rb") as f:
        header = safetensors_io.read_header(f, path)
    assert header["x"]["shape"] == [2, 3] and header["x"]["dtype"] == "F32"


def test_large_tensor_spans_several_checksum_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(safetensors_io, "CHUNK_BYTES", 1 << 16)
    big = np.random.RandomState(0).rand(3 * (1 << 14) + 7).astype(np.float32)  # ~3 chunks
    prefix = str(tmp_path / "big")
    write_checkpoint(prefix, [SaveSpec("big", big, "float32")])
    monkeypatch.setattr(safetensors_io, "CHUNK_BYTES", 1 << 20)  # readers use the recorded size
    with CheckpointReader(prefix) as reader:
        assert len(reader.index.tensors["big"].slices[0].records[0].stored.checksums) == 4
        np.testing.assert_array_equal(reader.read("big"), big)


def test_slices_assemble_and_repartition(tmp_path):
    full = np.arange(40, dtype=np.float32).reshape(10, 4)
    prefix = str(tmp_path / "p")
    specs = [SaveSpec("emb", full[0:5], "float32", parse_spec("10 4 0,5:-")),
             SaveSpec("emb", full[5:10], "float32", parse_spec("10 4 5,5:-"))]
    write_checkpoint(prefix, specs)
    with CheckpointReader(prefix) as reader:
        np.testing.assert_array_equal(reader.read("emb"), full)
        # a different partitioning (3 rows at offset 4) spans both saved slices
        np.testing.assert_array_equal(reader.read("emb", Slice((10, 4), (4, 1), (3, 2))), full[4:7, 1:3])
    assert parse_spec("10 4 0,5:-").spec() == "10 4 0,5:-"
    with pytest.raises(InvalidArgumentError, match="Invalid shape_and_slices"):
        parse_spec("10 4 8,5:-", name="emb")


def test_missing_slice_coverage_is_not_found(tmp_path):
    prefix = str(tmp_path / "p")
    write_checkpoint(prefix, [SaveSpec("emb", np.ones((5, 4), np.float32), "float32", parse_spec("10 4 0,5:-"))])
    with CheckpointReader(prefix) as reader, pytest.raises(NotFoundError, match="cover 20 of 40"):
        reader.read("emb")


def test_duplicate_names_are_rejected(tmp_path):
    a = np.zeros(2, np.float32)
    with pytest.raises(InvalidArgumentError, match="saved twice"):
        write_checkpoint(str(tmp_path / "d"), [SaveSpec("w", a, "float32"), SaveSpec("w", a, "float32")])
    with pytest.raises(InvalidArgumentError, match="dtype object"):
        write_checkpoint(str(tmp_path / "d"), [SaveSpec("w", a, "object")])


def test_missing_checkpoint_and_key_are_not_found(tmp_path):
    with pytest.raises(NotFoundError, match="not a valid checkpoint") as info:
        CheckpointReader(str(tmp_path / "nothing"))
    assert isinstance(info.value, ValueError)  # TensorFlow's Saver.restore raises ValueError
    prefix = str(tmp_path / "m")
    _write_all(prefix)
    with CheckpointReader(prefix) as reader, pytest.raises(NotFoundError, match="Did you mean 'f32'"):
        reader.read("f3")


def _corrupt_byte(path: str, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xFF]))


def test_truncated_data_file_is_data_loss(tmp_path):
    prefix = str(tmp_path / "m")
    _write_all(prefix)
    data = prefix + ".data-00000-of-00001"
    os.truncate(data, os.path.getsize(data) - 3)
    with CheckpointReader(prefix) as reader, pytest.raises(DataLossError, match="truncated") as info:
        reader.read("f32")
    assert data in str(info.value)


def test_flipped_byte_is_data_loss_naming_file_and_tensor(tmp_path):
    prefix = str(tmp_path / "m")
    _write_all(prefix)
    with CheckpointReader(prefix) as reader:
        begin = reader.index.tensors["f64"].slices[0].records[0].stored.begin
    _corrupt_byte(prefix + ".data-00000-of-00001", begin + 3)
    with CheckpointReader(prefix) as reader:
        np.testing.assert_array_equal(reader.read("f32"), ARRAYS["f32"][0])  # others still fine
        with pytest.raises(DataLossError, match="Checksum mismatch .*tensor 'f64'"):
            reader.read("f64")


def test_corrupted_or_truncated_index_is_data_loss(tmp_path):
    prefix = str(tmp_path / "m")
    _write_all(prefix)
    index = prefix + ".index"
    _corrupt_byte(index, 40)
    with pytest.raises(DataLossError, match="checksum does not match") as info:
        CheckpointReader(prefix)
    assert index in str(info.value)
    _write_all(prefix)
    os.truncate(index, os.path.getsize(index) // 2)
    with pytest.raises(DataLossError, match="truncated"):
        CheckpointReader(prefix)


def test_missing_data_file_is_data_loss(tmp_path):
    prefix = str(tmp_path / "m")
    _write_all(prefix)
    os.remove(prefix + ".data-00000-of-00001")
    with CheckpointReader(prefix) as reader, pytest.raises(DataLossError, match="is missing"):
        reader.read("f32")


def test_overwriting_a_prefix_never_touches_the_old_files_before_the_index(tmp_path):
    prefix = str(tmp_path / "m")
    write_checkpoint(prefix, [SaveSpec("w", np.zeros(3, np.float32), "float32")])
    old_data = prefix + ".data-00000-of-00001"
    seen = []

    from flowmesh.checkpoint.writer import add_write_observer

    def observe(path, done, total):  # while the new data is written, the old checkpoint is intact
        seen.append(path)
        assert os.path.exists(old_data)
        np.testing.assert_array_equal(CheckpointReader(prefix).read("w"), np.zeros(3))

    remove = add_write_observer(observe)
    try:
        write_checkpoint(prefix, [SaveSpec("w", np.ones(3, np.float32), "float32")])
    finally:
        remove()
    assert seen and seen[0] != old_data
    assert not os.path.exists(old_data)  # replaced data deleted after the new index landed
    np.testing.assert_array_equal(CheckpointReader(prefix).read("w"), np.ones(3))


def test_failed_write_leaves_no_partial_file(tmp_path):
    target = str(tmp_path / "f.bin")
    fs.write_bytes_atomic(target, b"old")
    with pytest.raises(RuntimeError), fs.atomic_write(target) as f:
        f.write(b"new partial")
        raise RuntimeError("crash")
    assert open(target, "rb").read() == b"old"
    assert os.listdir(tmp_path) == ["f.bin"]


def test_merge_shards(tmp_path):
    a, b = str(tmp_path / "tmp" / "part-0"), str(tmp_path / "tmp" / "part-1")
    write_checkpoint(a, [SaveSpec("x", np.ones(2, np.float32), "float32"),
                         SaveSpec("emb", np.ones((1, 2), np.float32), "float32", parse_spec("2 2 0,1:-"))])
    write_checkpoint(b, [SaveSpec("y", np.arange(3), "int64"),
                         SaveSpec("emb", np.zeros((1, 2), np.float32), "float32", parse_spec("2 2 1,1:-"))])
    dest = str(tmp_path / "model")
    merge_checkpoints([a, b], dest)
    assert sorted(os.listdir(tmp_path)) == ["model.data-00000-of-00002", "model.data-00001-of-00002", "model.index"]
    with CheckpointReader(dest) as reader:
        np.testing.assert_array_equal(reader.read("emb"), [[1, 1], [0, 0]])
        np.testing.assert_array_equal(reader.read("y"), np.arange(3))
    with pytest.raises(NotFoundError):
        merge_checkpoints([str(tmp_path / "never-written")], dest)


def test_fsspec_memory_filesystem_round_trip():
    fsspec = pytest.importorskip("fsspec")
    prefix = "memory://flowmesh-test/ckpt/model"
    write_checkpoint(prefix, [SaveSpec("w", np.arange(4, dtype=np.float32), "float32")])
    assert fs.exists(prefix + ".index")
    with CheckpointReader(prefix) as reader:
        np.testing.assert_array_equal(reader.read("w"), np.arange(4))
    fsspec.filesystem("memory").rm("/flowmesh-test", recursive=True)
