"""Record blocks (``DatasetDef.string_blocks``): ``repeat``, ``shuffle`` and ``batch`` over
file records a block at a time give exactly what the element-at-a-time path gives."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as fm
from flowmesh.kernels.pipeline.batching import BatchDataset
from flowmesh.kernels.pipeline.context import PipelineContext
from flowmesh.kernels.pipeline.readers import TFRecordDataset
from flowmesh.kernels.pipeline.shuffle import ShuffleDataset, _exchange
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
    blocks = stage.string_blocks(PipelineContext())
    return [r for block in blocks for r in block.tolist()]


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
        assert _exchange(buffer, slots, incoming).tolist() == expected
        assert buffer.tolist() == expected_buffer
