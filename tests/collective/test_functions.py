"""The Horovod-style API in a world of one process (the multi-process behaviour is in
test_multiprocess.py): argument handling, sparse gradients, hooks, accumulation."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
import flowmesh.collective as hvd
from flowmesh.collective.functions import resolve_op


def test_world_of_one_process():
    hvd.init()
    assert (hvd.rank(), hvd.size(), hvd.local_rank(), hvd.local_size()) == (0, 1, 0, 1)
    assert hvd.is_initialized()
    assert {"DistributedOptimizer", "allreduce", "Compression", "BroadcastGlobalVariablesHook"} <= set(dir(hvd))
    with pytest.raises(AttributeError):
        hvd.not_a_function  # noqa: B018


def test_op_and_average_arguments():
    assert resolve_op() is hvd.Average
    assert resolve_op(average=True) is hvd.Average and resolve_op(average=False) is hvd.Sum
    assert resolve_op("max") is hvd.Max
    with pytest.raises(ValueError, match="not both"):
        resolve_op(hvd.Sum, average=True)
    with pytest.raises(ValueError, match="Unknown reduction"):
        resolve_op("median")


def test_tensor_functions_and_scaling():
    x = tf.constant([[1.0, 2.0]])
    with tf.Session() as sess:
        out = sess.run([hvd.allreduce(x), hvd.allreduce(x, op=hvd.Sum, prescale_factor=2.0,
                                                        postscale_factor=3.0),
                        hvd.allreduce(x, compression=hvd.Compression.fp16),
                        hvd.allgather(x), hvd.broadcast(x, 0), hvd.reducescatter(tf.range(4.0)),
                        hvd.grouped_allreduce([x, x * 2.0])])
    assert out[0].tolist() == [[1.0, 2.0]] and out[1].tolist() == [[6.0, 12.0]]
    assert out[2].dtype == np.float32 and out[2].tolist() == [[1.0, 2.0]]
    assert out[3].tolist() == [[1.0, 2.0]] and out[4].tolist() == [[1.0, 2.0]]
    assert out[5].tolist() == [0.0, 1.0, 2.0, 3.0] and out[6][1].tolist() == [[2.0, 4.0]]


def test_sparse_allreduce_gathers_values_and_indices():
    slices = tf.IndexedSlices(tf.constant([[1.0, 1.0], [2.0, 2.0]]), tf.constant([3, 0]),
                              tf.constant([5, 2]))
    reduced = hvd.allreduce(slices)
    assert isinstance(reduced, tf.IndexedSlices)
    with tf.Session() as sess:
        values, indices = sess.run([reduced.values, reduced.indices])
    assert values.tolist() == [[1.0, 1.0], [2.0, 2.0]] and indices.tolist() == [3, 0]
    with pytest.raises(ValueError, match="Sum and Average"):
        hvd.allreduce(slices, op=hvd.Max)


def test_distributed_optimizer_wraps_and_validates():
    w = tf.Variable([1.0, 2.0])
    loss = tf.reduce_sum(tf.square(w))
    opt = hvd.DistributedOptimizer(tf.train.MomentumOptimizer(0.1, 0.9))
    train = opt.minimize(loss)
    assert opt.get_slot_names() == ["momentum"] and opt.get_slot(w, "momentum") is not None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), [0.8, 1.6])
    with pytest.raises(ValueError, match="Average or Sum"):
        hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1), op=hvd.Max)
    with pytest.raises(ValueError, match=">= 1"):
        hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1), backward_passes_per_step=0)
    for grouping in ({"num_groups": 2}, {"groups": [[w]]}):
        with pytest.raises(ValueError, match="bucket_size_mb"):
            hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1), **grouping)


def test_backward_passes_per_step_applies_every_kth_run():
    w = tf.Variable([1.0])
    x = tf.placeholder(tf.float32, [1])
    loss = tf.reduce_sum(w * x)
    step = tf.train.get_or_create_global_step()
    opt = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0), backward_passes_per_step=3,
                                   average_aggregated_gradients=True)
    train = opt.minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        history = []
        for value in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]:
            sess.run(train, {x: [value]})
            history.append((float(sess.run(w)[0]), int(sess.run(step))))
    # updates after passes 3 and 6 with the mean gradient of the last 3 passes (dloss/dw = x)
    assert history == [(1.0, 0), (1.0, 0), (-1.0, 1), (-1.0, 1), (-1.0, 1), (-6.0, 2)]


def test_broadcast_global_variables_and_hook():
    v = tf.Variable([3.0, 4.0])
    n = tf.Variable(7, dtype=tf.int64)
    hook = hvd.BroadcastGlobalVariablesHook(0)
    hook.begin()
    assert hook.bcast_op is not None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(v.assign([5.0, 6.0]))
        hook.after_create_session(sess, None)
        assert sess.run(v).tolist() == [5.0, 6.0] and sess.run(n) == 7
    with tf.train.MonitoredTrainingSession(hooks=[hvd.BroadcastGlobalVariablesHook(0)]) as sess:
        assert sess.run(v).tolist() == [3.0, 4.0]
