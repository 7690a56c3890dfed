"""MirroredStrategy on two logical CPU devices of one process."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.distribute import MirroredVariable, PerReplica

CONFIG = tf.ConfigProto(device_count={"CPU": 2})
DEVICES = ["/cpu:0", "/cpu:1"]


def data(n: int = 64):
    rng = np.random.RandomState(0)
    x = rng.rand(n, 4).astype(np.float32)
    y = (x @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def linear_step(w, b, opt, global_step=None):
    def step(x, y):
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        with tf.control_dependencies([opt.minimize(loss, global_step=global_step)]):
            return tf.identity(loss)
    return step


def reference_weights(x_all, y_all, steps: int, optimizer) -> np.ndarray:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
        b = tf.Variable(0.0)
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train = optimizer().minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train, {x: x_all, y: y_all})
            return sess.run(w)


@pytest.mark.parametrize("optimizer", [
    lambda: tf.train.GradientDescentOptimizer(0.1),
    lambda: tf.train.MomentumOptimizer(0.05, 0.9),
    lambda: tf.train.AdamOptimizer(0.05),
])
def test_training_matches_one_device_with_the_global_batch(optimizer):
    x_all, y_all = data()
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    xs = [tf.placeholder(tf.float32, [None, 4]) for _ in DEVICES]
    ys = [tf.placeholder(tf.float32, [None, 1]) for _ in DEVICES]
    with strategy.scope():
        w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
        b = tf.Variable(0.0, name="b")
        step = tf.train.get_or_create_global_step()
        losses = strategy.run(linear_step(w, b, optimizer(), step), args=(PerReplica(xs), PerReplica(ys)))
        mean_loss = strategy.reduce(tf.distribute.ReduceOp.MEAN, losses)
    feed = {xs[0]: x_all[:32], ys[0]: y_all[:32], xs[1]: x_all[32:], ys[1]: y_all[32:]}
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(mean_loss, feed)
        for _ in range(9):
            last = sess.run(mean_loss, feed)
        components = sess.run([c.value() for c in w.components])
        steps = sess.run([c.value() for c in step.components])
    np.testing.assert_array_equal(components[0], components[1])  # replicas stay in sync
    np.testing.assert_allclose(components[0], reference_weights(x_all, y_all, 10, optimizer),
                               rtol=1e-5, atol=1e-6)
    assert last < first and steps == [10, 10]


def test_mirrored_variables_have_one_component_per_device():
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    with strategy.scope():
        v = tf.Variable(tf.random_normal([3]), name="v")
        w = tf.get_variable("w", [2], trainable=False)
    assert isinstance(v, MirroredVariable) and len(v.components) == 2
    assert [c.device for c in v.components] == [
        "/device:CPU:0", "/device:CPU:1"] or all("CPU" in c.device for c in v.components)
    assert tf.trainable_variables() == [v] and set(tf.global_variables()) == {v, w}
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())  # one random draw shared by both copies
        a, b = sess.run([c.value() for c in v.components])
        np.testing.assert_array_equal(a, b)
        sess.run(v.assign([1.0, 2.0, 3.0]))  # cross-replica assignment writes every copy
        assert [x.tolist() for x in sess.run([c.value() for c in v.components])] == [[1, 2, 3]] * 2
        v.load([4.0, 5.0, 6.0], sess)
        assert sess.run(v.value()).tolist() == [4, 5, 6]


def test_replica_context_and_reductions():
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    seen = []

    def fn(x):
        ctx = tf.distribute.get_replica_context()
        seen.append((ctx.replica_id, tf.distribute.in_cross_replica_context()))
        summed = ctx.all_reduce(tf.distribute.ReduceOp.SUM, {"x": x, "sq": x * x})
        return summed, ctx.replica_id_in_sync_group

    assert tf.distribute.get_replica_context() is not None  # default context outside scopes
    with strategy.scope():
        assert tf.distribute.in_cross_replica_context()
        assert tf.distribute.get_replica_context() is None
        out, ids = strategy.run(fn, args=(PerReplica([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])]),))
        per_replica = PerReplica([tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0], [5.0, 6.0]])])
        mean_all = strategy.reduce("MEAN", per_replica, axis=0)
        total = strategy.reduce(tf.distribute.ReduceOp.SUM, PerReplica([tf.constant(1.0), tf.constant(2.0)]))
    assert seen == [(0, False), (1, False)]
    with tf.Session(config=CONFIG) as sess:
        values = sess.run([strategy.experimental_local_results(out["x"]),
                           strategy.experimental_local_results(ids), mean_all, total])
    assert [v.tolist() for v in values[0]] == [[4.0, 6.0], [4.0, 6.0]]
    assert list(values[1]) == [0, 1]
    assert values[2].tolist() == [3.0, 4.0] and values[3] == 3.0


def test_merge_call_explains_the_alternative():
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    with strategy.scope(), pytest.raises(NotImplementedError, match="all_reduce"):
        strategy.run(lambda: tf.distribute.get_replica_context().merge_call(lambda s: None))


def test_bad_devices_are_rejected():
    with pytest.raises(ValueError, match="twice"):
        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:0"])
    with pytest.raises(ValueError, match="names no device type"):
        tf.distribute.MirroredStrategy(["/job:worker"])
    assert tf.distribute.MirroredStrategy().num_replicas_in_sync >= 1


def test_default_strategy_outside_scopes():
    strategy = tf.distribute.get_strategy()
    assert strategy.num_replicas_in_sync == 1 and not tf.distribute.has_strategy()
    assert strategy.run(lambda a: a + 1, args=(1,)) == 2


def test_checkpoint_round_trip_then_sync(tmp_path):
    strategy = tf.distribute.MirroredStrategy(DEVICES)
    with strategy.scope():
        v = tf.Variable([1.0, 2.0], name="v")
        step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver()
    sync = strategy.extended.sync_op()
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([v.assign([3.0, 4.0]), step.assign(7)])
        path = saver.save(sess, str(tmp_path / "model"))
        sess.run(v.assign([0.0, 0.0]))
        saver.restore(sess, path)
        sess.run(sync)
        assert [x.tolist() for x in sess.run([c.value() for c in v.components])] == [[3.0, 4.0]] * 2
        assert sess.run([c.value() for c in step.components]) == [7, 7]


def test_run_inside_scope_creates_each_variable_once():
    """Regression: ``strategy.run`` enters the strategy's scope again; its variable creator
    was registered a second time, so a variable made inside ``run`` within ``scope()`` was
    mirrored twice (a MirroredVariable of MirroredVariables, three global variables)."""
    from flowmesh.ops.variable_creator import active_creators

    with tf.Graph().as_default():
        strategy = tf.distribute.MirroredStrategy(DEVICES)
        creators = []

        def make():
            creators.append(len(active_creators()))
            return tf.get_variable("w", [2], initializer=tf.ones_initializer())

        with strategy.scope():
            with strategy.scope():  # nesting the same scope adds no second creator either
                assert len(active_creators()) == 1
            w = strategy.run(make)
        assert creators == [1, 1]
        assert isinstance(w, MirroredVariable)
        assert not any(isinstance(c, MirroredVariable) for c in w.components)
        assert [v.name for v in tf.global_variables()] == ["w:0"]
        assert len({c.name for c in w.components}) == 2
        with tf.Session(config=CONFIG) as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run([c.value() for c in w.components]), [[1, 1], [1, 1]])
