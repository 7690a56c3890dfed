"""A prefetch that switches between its thread and its consumer producing: same elements in
the same order, errors and the end delivered once, and the choice follows the timings."""

from __future__ import annotations

import itertools
import threading

import pytest

from flowmesh.kernels.pipeline import prefetch_mode
from flowmesh.kernels.pipeline.context import PipelineContext
from flowmesh.kernels.pipeline.parallel import RunAhead
from flowmesh.kernels.pipeline.prefetch_mode import PrefetchChooser


class _Script:
    """A chooser that plays a fixed pattern of modes (True: the consumer produces)."""

    def __init__(self, pattern):
        self._modes = itertools.cycle(pattern)

    def next_inline(self, last_counts=True):
        return next(self._modes)


def _source(n, fail_at=None):
    for i in range(n):
        if i == fail_at:
            raise ValueError(f"bad element {i}")
        yield (i, threading.current_thread().name)


@pytest.mark.parametrize("pattern", [[False], [True], [False, True], [True, True, False],
                                     [False] * 5 + [True] * 7])
def test_every_element_once_in_order_whoever_produces_it(pattern):
    ctx = PipelineContext()
    out = list(RunAhead(ctx, lambda: _source(200), 3, "t", _Script(pattern)))
    assert [e[0] for e in out] == list(range(200))
    by_consumer = [name == threading.current_thread().name for _, name in out]
    if pattern == [False]:
        assert not any(by_consumer)
    elif pattern == [True]:  # the thread may have run ahead before the first request
        assert all(by_consumer[3:])
    else:
        assert any(by_consumer) and not all(by_consumer)
    ctx.cancel()


@pytest.mark.parametrize("pattern", [[False], [True], [False, True]])
def test_an_error_is_raised_once_after_the_elements_before_it(pattern):
    ctx = PipelineContext()
    ahead = RunAhead(ctx, lambda: _source(50, fail_at=30), 4, "t", _Script(pattern))
    got = [ahead.get()[0] for _ in range(30)]
    with pytest.raises(ValueError, match="bad element 30"):
        ahead.get()
    assert got == list(range(30))
    ctx.cancel()


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _consume(chooser, clock, count, thread_s, consumer_s):
    modes = []
    for _ in range(count):
        inline = chooser.next_inline()
        modes.append(inline)
        clock.now += consumer_s if inline else thread_s
    return modes


@pytest.mark.parametrize("thread_s, consumer_s, keeps", [(0.010, 0.008, True),
                                                         (0.008, 0.010, False)])
def test_the_chooser_keeps_the_faster_way_and_checks_again_later(thread_s, consumer_s, keeps):
    clock = _Clock()
    chooser = PrefetchChooser(clock)
    modes = _consume(chooser, clock, prefetch_mode.WARMUP, thread_s, consumer_s)
    assert not any(modes)  # warm-up on the thread
    modes = _consume(chooser, clock, 200, thread_s, consumer_s)
    assert True in modes and False in modes  # the probe tried both
    assert chooser.inline == keeps and modes[-1] == keeps
    clock.now += 60.0  # the next probe is due (FIRST_REPROBE_S, or 20 probes' time)
    _consume(chooser, clock, 400, consumer_s, thread_s)  # the costs swapped
    assert chooser.inline == (not keeps)


def test_a_session_reads_a_prefetched_dataset_in_order_through_probes(monkeypatch):
    import flowmesh as tf

    monkeypatch.setattr(prefetch_mode, "WARMUP", 5)
    monkeypatch.setattr(prefetch_mode, "BLOCK_S", 0.002)
    monkeypatch.setattr(prefetch_mode, "FIRST_REPROBE_S", 0.01)
    monkeypatch.setattr(prefetch_mode, "REPROBE_S", 0.01)
    decisions = []
    decide = PrefetchChooser._decide
    monkeypatch.setattr(PrefetchChooser, "_decide",
                        lambda self, now: (decide(self, now), decisions.append(self.inline)))
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(600).map(lambda x: x * 3).batch(2).prefetch(2)
        element = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            got = [sess.run(element).tolist() for _ in range(300)]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(element)
    assert got == [[6 * i, 6 * i + 3] for i in range(300)]
    assert decisions  # at least one probe ran to its end
