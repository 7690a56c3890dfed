"""DataFeed and Feeder without Spark: flow control, epochs, early termination."""

from __future__ import annotations

import threading

import pytest

from flowmesh.spark import feed as feed_module
from flowmesh.spark.feed import DataFeed, FeedChannel, Feeder


def _feed(rows, epochs, alive=lambda: True, timeout=30.0):
    channel = FeedChannel()
    feeder = Feeder(channel, rows, epochs, timeout, alive, "test node")
    thread = threading.Thread(target=feeder.run, daemon=True)
    thread.start()
    return channel, feeder, thread


def test_batches_end_with_each_epoch():
    channel, feeder, thread = _feed(range(10), epochs=2)
    feed = DataFeed(channel)
    batches = []
    while not feed.should_stop():
        batches.append(feed.next_batch(4))
    thread.join(10)
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] * 2
    assert feed.epoch == 2 and feeder.rows_fed == 20
    assert feed.next_batch(4) == []


def test_the_feeder_reads_no_further_than_the_queue_allows(monkeypatch):
    monkeypatch.setattr(feed_module, "CHUNK_ROWS", 10)
    read = []

    def rows():
        for i in range(10_000):
            read.append(i)
            yield i

    channel, _, thread = _feed(rows(), epochs=1)
    feed = DataFeed(channel)
    assert feed.next_batch(5) == [0, 1, 2, 3, 4]
    thread.join(0.5)
    # what is buffered is bounded by the queue, not by the partition
    assert len(read) <= (feed_module.QUEUE_CHUNKS + 3) * 10
    feed.terminate()
    thread.join(10)
    assert not thread.is_alive() and feed.should_stop()


def test_input_mapping_returns_columns():
    channel, _, thread = _feed([(1, "a"), (2, "b")], epochs=1)
    feed = DataFeed(channel, input_mapping={"x": "x_tensor", "label": "y_tensor"})
    assert feed.next_batch(5) == {"x_tensor": [1, 2], "y_tensor": ["a", "b"]}
    thread.join(10)


def test_a_node_that_stops_consuming_times_out(monkeypatch):
    monkeypatch.setattr(feed_module, "CHUNK_ROWS", 1)
    channel = FeedChannel()
    feeder = Feeder(channel, range(100), 1, 1.0, lambda: True, "worker:0")
    with pytest.raises(TimeoutError, match="worker:0 took no input"):
        feeder.run()


def test_data_feed_needs_a_spark_mode_node():
    with pytest.raises(TypeError, match="InputMode.SPARK"):
        DataFeed(None)


def test_chunks_of_array_rows_travel_as_columns_and_come_back_equal():
    import numpy as np

    from flowmesh.spark.feed import pack_columns, unpack_columns

    rows = [(np.full(3, i, np.float32), i, float(i) / 2) for i in range(5)]
    kind, columns = pack_columns(rows)
    assert kind == "columns" and columns[0].shape == (5, 3)
    back = unpack_columns(columns)
    assert all(np.array_equal(a[0], b[0]) and a[1:] == b[1:] and type(b[1]) is int for a, b in zip(rows, back))
    mixed = [(np.zeros(3), 1), (np.zeros(4), 2)]
    assert pack_columns(mixed) == ("rows", mixed)
    assert pack_columns([[1, 2], [3, 4]])[0] == "rows"  # lists stay rows, as they came
