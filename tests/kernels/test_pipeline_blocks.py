"""Blocks (``DatasetDef.blocks``): ``repeat``, ``shuffle`` and ``batch`` over file records
or dense ``unbatch`` a block at a time give exactly what the element-at-a-time path gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import flowmesh as fm
from flowmesh.kernels.pipeline.batching import BatchDataset, UnbatchDataset
from flowmesh.kernels.pipeline.context import PipelineContext
from flowmesh.kernels.pipeline.readers import TFRecordDataset
from flowmesh.kernels.pipeline.shuffle import ShuffleDataset, _Buffer, _exchange
from flowmesh.kernels.pipeline.sources import TensorSliceDataset
from flowmesh.kernels.pipeline.transforms import RepeatDataset


@pytest.fixture
def record_file(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    rng = np.random.default_rng(3)
    with fm.io.TFRecordWriter(path) as writer:  # mostly one size (runs), some others
        for i in range(1500):
            writer.write(b"%06d" % i + (b"x" * int(rng.integers(0, 5)) if i % 97 == 0 else b""))
    return path


def _elements(stage):
    return [e[0] for e in stage.iterate(PipelineContext())]


def _from_blocks(stage):
    blocks = stage.blocks(PipelineContext())
    return [r for (column,) in blocks for r in column.tolist()]


@pytest.mark.parametrize("buffer_size", [1, 7, 1000, 5000])
@pytest.mark.parametrize("reshuffle", [True, False])
def test_shuffle_and_repeat_by_blocks_give_the_element_order(record_file, buffer_size, reshuffle):
    source = TFRecordDataset("files", [record_file, record_file], "", 1 << 12)  # many reads
    shuffled = ShuffleDataset("shuffle", source, buffer_size, seed=5, seed2=9, reshuffle=reshuffle)
    stage = RepeatDataset("repeat", shuffled, 3)
    by_elements, by_blocks = _elements(stage), _from_blocks(stage)
    assert by_blocks == by_elements
    one_pass = sorted(_elements(source))
    passes = [by_elements[i * 3000:(i + 1) * 3000] for i in range(3)]
    assert len(by_elements) == 9000 and all(sorted(p) == one_pass for p in passes)
    if buffer_size == 1:  # nothing to choose from
        assert passes[0] == passes[1] == _elements(source)
    else:
        assert (passes[0] != passes[1]) == reshuffle  # a new order each pass, or the same one


@pytest.mark.parametrize("drop_remainder", [True, False])
def test_batches_cut_from_blocks_equal_stacked_elements(record_file, drop_remainder):
    source = TFRecordDataset("files", [record_file], "", 1 << 12)
    shuffled = ShuffleDataset("shuffle", source, 100, seed=1, seed2=2, reshuffle=True)
    batched = BatchDataset("batch", RepeatDataset("repeat", shuffled, 2), 128, drop_remainder)
    blocks = list(batched.iterate(PipelineContext()))
    stacked = [tuple(b[0]) for b in blocks]
    flat = _elements(RepeatDataset("repeat", shuffled, 2))
    expected = [tuple(flat[i:i + 128]) for i in range(0, len(flat), 128)]
    if drop_remainder:
        expected = [b for b in expected if len(b) == 128]
    assert stacked == expected
    assert all(b[0].dtype == object and b[0].ndim == 1 for b in blocks)


def test_exchange_matches_replacing_one_slot_at_a_time():
    rng = np.random.default_rng(0)
    for size, count in [(1, 5), (3, 50), (50, 20), (1000, 1437)]:
        buffer = np.empty(size, dtype=object)
        buffer[:] = [("old", i) for i in range(size)]
        incoming = np.empty(count, dtype=object)
        incoming[:] = [("new", i) for i in range(count)]
        slots = rng.integers(0, size, count)
        expected_buffer, expected = list(buffer), []
        for t, slot in enumerate(slots.tolist()):
            expected.append(expected_buffer[slot])
            expected_buffer[slot] = incoming[t]
        (out,) = _exchange((buffer,), slots, (incoming,))
        assert out.tolist() == expected
        assert buffer.tolist() == expected_buffer


@pytest.mark.parametrize("buffer_size", [1, 50, 100_000])
def test_dense_unbatch_blocks_shuffle_and_batch_like_elements(buffer_size):
    # numbers and strings of 1000 elements in blocks of 37 rows (the vectorized-map route)
    images = torch.arange(4000, dtype=torch.float32).reshape(1000, 2, 2)
    names = np.array([b"n%d" % i for i in range(1000)], dtype=object)
    blocks = BatchDataset("blocks", TensorSliceDataset("slices", [images, names]), 37, False)

    def pipeline(dense):
        rows = UnbatchDataset("unbatch", blocks, dense=dense)
        shuffled = ShuffleDataset("shuffle", rows, buffer_size, seed=4, seed2=2, reshuffle=True)
        return BatchDataset("batch", RepeatDataset("repeat", shuffled, 2), 64, False)

    by_blocks = list(pipeline(True).iterate(PipelineContext()))
    by_elements = list(pipeline(False).iterate(PipelineContext()))
    assert pipeline(True).source.source.source.blocks(PipelineContext()) is not None
    assert len(by_blocks) == len(by_elements) == 32
    for (image, name), (image_e, name_e) in zip(by_blocks, by_elements):
        assert isinstance(image, torch.Tensor) and image.dtype == torch.float32
        torch.testing.assert_close(image, image_e, rtol=0, atol=0)
        assert name.dtype == object and name.tolist() == name_e.tolist()
    firsts = torch.cat([b[0] for b in by_blocks[:16]])[:, 0, 0].tolist()
    assert sorted(firsts[:1000]) == list(range(0, 4000, 4))  # one pass: every element once


def test_block_shuffle_buffer_grows_with_its_input():
    # shuffle(10**7) over a small input must not allocate ten million rows up front
    buffer = _Buffer(10_000_000)
    rows = np.zeros((700, 64), np.float32)
    for filled in range(700, 7001, 700):
        assert buffer.fill((rows,)) == 700 and buffer.filled == filled
        assert len(buffer.columns[0]) <= max(2 * filled, 1024)
    small = _Buffer(1000)
    assert small.fill((rows,)) == 700 and small.fill((rows,)) == 300
    assert small.full and len(small.columns[0]) == 1000 and small.fill((rows,)) == 0
