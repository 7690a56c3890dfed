"""Optimizers against ``tensorflow.compat.v1``: same initial values, same gradients, N steps.

Each optimizer trains the same tiny model in flowmesh and in TensorFlow (when installed):
a dense layer (dense gradients) and an embedding read with ``tf.gather`` through repeated
ids (``IndexedSlices`` gradients, duplicates included). After every step the variables,
their slots and Adam's beta powers must agree.

The comparison's tolerance is only meaningful on a well-conditioned trajectory: a model
that diverges amplifies the last-bit differences of another CPU's summation order (AVX2
vs AVX-512 kernels) past any fixed rtol. The data are scaled so that every optimizer
contracts (SGD's step 0.1 x the largest Hessian eigenvalue ~6 < 2), and
``test_trajectories_are_well_conditioned`` checks that premise: the float32 run stays
within a quarter of the tolerance of the float64 run of the same model, so two float32
implementations of the same math (ours, TensorFlow's) agree within it on any CPU.

An element's tolerance follows the scale of its variable (``_tolerance``): a slot such as
FTRL's ``z`` accumulates large terms of both signs, and an element that cancels to near
zero carries the rounding of those terms, not of its own tiny value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import flowmesh as tf

STEPS = 4
RNG = np.random.RandomState(1234)
W0 = RNG.randn(4, 3).astype(np.float32)
B0 = RNG.randn(3).astype(np.float32) * 0.1
E0 = (RNG.randn(6, 3) * 0.5).astype(np.float32)
X = (RNG.randn(5, 4) * 0.5).astype(np.float32)  # unscaled, SGD and Nesterov diverged
IDS = np.array([1, 4, 4, 0, 1], np.int32)  # repeated rows; rows 2, 3, 5 untouched
Y = RNG.randn(5, 3).astype(np.float32)
RTOL, ATOL = 2e-5, 2e-6

OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda t: t.train.GradientDescentOptimizer(0.1),
    "momentum": lambda t: t.train.MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda t: t.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda t: t.train.AdamOptimizer(0.05),
    "adam_custom": lambda t: t.train.AdamOptimizer(0.02, beta1=0.5, beta2=0.9, epsilon=1e-3),
    "adagrad": lambda t: t.train.AdagradOptimizer(0.3, initial_accumulator_value=0.2),
    "rmsprop": lambda t: t.train.RMSPropOptimizer(0.01),
    "rmsprop_momentum": lambda t: t.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.7),
    "rmsprop_centered": lambda t: t.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    "adadelta": lambda t: t.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-4),
    "ftrl": lambda t: t.train.FtrlOptimizer(0.2),
    "ftrl_l1_l2": lambda t: t.train.FtrlOptimizer(
        0.2, l1_regularization_strength=0.05, l2_regularization_strength=0.1),
    "ftrl_power": lambda t: t.train.FtrlOptimizer(
        0.2, learning_rate_power=-0.3, initial_accumulator_value=0.5,
        l1_regularization_strength=0.01),
    "ftrl_shrinkage": lambda t: t.train.FtrlOptimizer(
        0.2, l2_shrinkage_regularization_strength=0.2, l2_regularization_strength=0.05),
}


def _train(t: Any, make_opt: Callable[[Any], Any], sparse: bool,
           dtype: type = np.float32) -> list[dict[str, np.ndarray]]:
    """Runs STEPS steps with module ``t`` (flowmesh or tf.compat.v1) in ``dtype``; returns
    the state (variables, slots, non-slot variables) after every step."""
    graph = t.Graph()
    with graph.as_default():
        w = t.Variable(W0.astype(dtype), name="w")
        b = t.Variable(B0.astype(dtype), name="b")
        h = t.matmul(t.constant(X.astype(dtype)), w) + b
        if sparse:
            emb = t.Variable(E0.astype(dtype), name="emb")
            h = h * t.gather(emb, t.constant(IDS))
        loss = t.reduce_sum(t.square(h - t.constant(Y.astype(dtype))))
        global_step = t.train.get_or_create_global_step()
        opt = make_opt(t)
        train_op = opt.minimize(loss, global_step=global_step)
        tracked = {v.op.name: v for v in t.global_variables()}
        init = t.global_variables_initializer()
    states = []
    with t.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(STEPS):
            sess.run(train_op)
            states.append(sess.run({name: v for name, v in tracked.items()}))
    return states


def _tolerance(expected: np.ndarray) -> np.ndarray:
    """Per-element tolerance: RTOL of the element plus a tenth of RTOL of the variable's
    largest element (the scale of the terms an element was summed from), plus ATOL."""
    magnitude = np.abs(np.asarray(expected, np.float64))
    return ATOL + RTOL * (magnitude + 0.1 * magnitude.max(initial=0.0))


def _assert_states_close(actual: list[dict[str, np.ndarray]],
                         expected: list[dict[str, np.ndarray]], fraction: float,
                         what: str) -> None:
    """Every state of ``actual`` within ``fraction`` of ``_tolerance`` of ``expected``."""
    for step, (mine, ref) in enumerate(zip(actual, expected), 1):
        for var_name, want in ref.items():
            error = np.abs(np.asarray(mine[var_name], np.float64) - want)
            ratio = error / (fraction * _tolerance(want))
            assert ratio.max(initial=0.0) <= 1.0, (
                f"{what}: {var_name} after step {step} differs by {error.max():.3g} at "
                f"{np.unravel_index(ratio.argmax(), ratio.shape)}, "
                f"{ratio.max():.2f}x the allowed {fraction:g} x tolerance\n"
                f"got {mine[var_name]}\nexpected {want}")


@pytest.fixture(scope="module")
def tf1() -> Any:
    return pytest.importorskip("tensorflow.compat.v1")


@pytest.mark.oracle
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_matches_tensorflow(tf1: Any, name: str, sparse: bool) -> None:
    ours = _train(tf, OPTIMIZERS[name], sparse)
    theirs = _train(tf1, OPTIMIZERS[name], sparse)
    assert sorted(ours[0]) == sorted(theirs[0]), "variables/slots differ from TensorFlow's"
    _assert_states_close(ours, theirs, 1.0, f"{name} ({'sparse' if sparse else 'dense'})")
    assert ours[-1]["global_step"] == STEPS


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_trajectories_are_well_conditioned(name: str, sparse: bool) -> None:
    """float32 rounding moves every compared state by at most a quarter of the oracle
    tolerance (measured against float64): a second CPU's summation order cannot break
    ``test_matches_tensorflow``, while a real bug (a wrong term) still moves it by more.
    A failure here means the test model is ill-conditioned (scale its data down)."""
    single = _train(tf, OPTIMIZERS[name], sparse)
    double = _train(tf, OPTIMIZERS[name], sparse, np.float64)
    _assert_states_close(single, double, 0.25,
                         f"{name} ({'sparse' if sparse else 'dense'}) float32 vs float64")


def test_sparse_update_touches_only_gathered_rows() -> None:
    emb = tf.Variable(E0, name="emb")
    loss = tf.reduce_sum(tf.gather(emb, tf.constant(IDS)))
    train_op = tf.train.AdagradOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        after = sess.run(emb)
    untouched = [r for r in range(len(E0)) if r not in IDS]
    np.testing.assert_array_equal(after[untouched], E0[untouched])
    assert not np.allclose(after[np.unique(IDS)], E0[np.unique(IDS)])


def test_slots_are_named_and_colocated_with_their_variable() -> None:
    with tf.device("/cpu:0"):
        w = tf.Variable(W0, name="w")
    opt = tf.train.AdamOptimizer()
    opt.minimize(tf.reduce_sum(w * w))
    assert opt.get_slot_names() == ["m", "v"]
    m, v = opt.get_slot(w, "m"), opt.get_slot(w, "v")
    assert (m.op.name, v.op.name) == ("w/Adam", "w/Adam_1")
    assert m.op.colocation_groups() == w.op.colocation_groups() == v.op.colocation_groups()
    assert not m.trainable and m in tf.global_variables()
    assert opt.get_slot(w, "nope") is None
    beta1_power, beta2_power = opt._get_beta_accumulators()
    assert beta1_power.op.colocation_groups() == w.op.colocation_groups()
    assert {x.op.name for x in opt.variables()} == {"w/Adam", "w/Adam_1", "beta1_power",
                                                    "beta2_power"}


def test_beta_powers_colocate_with_first_variable_by_name() -> None:
    b = tf.Variable(B0, name="b_second")
    a = tf.Variable(W0, name="a_first")
    opt = tf.train.AdamOptimizer()
    opt.minimize(tf.reduce_sum(a) + tf.reduce_sum(b))
    assert opt._get_beta_accumulators()[0].op.colocation_groups() == a.op.colocation_groups()


def test_minimize_increments_global_step_and_returns_train_op() -> None:
    w = tf.Variable(1.0, name="w")
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.square(w), global_step=step)
    assert train_op in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train_op)
        assert sess.run(step) == 3


def test_learning_rate_can_be_a_tensor_or_callable() -> None:
    w = tf.Variable(2.0, name="w")
    lr = tf.placeholder(tf.float32, [], name="lr")
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(tf.square(w))
    w2 = tf.Variable(2.0, name="w2")
    train_op2 = tf.train.GradientDescentOptimizer(lambda: 0.25).minimize(tf.square(w2))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {lr: 0.25})
        sess.run(train_op2)
        assert sess.run([w, w2]) == [1.0, 1.0]  # 2 - 0.25 * 2 * 2


def test_float64_variables_cast_hyperparameters() -> None:
    w = tf.Variable(np.array([1.0, -2.0]), name="w")
    assert w.dtype == tf.float64
    train_op = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(tf.square(w)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        np.testing.assert_allclose(sess.run(w), [0.9, -1.9], rtol=1e-6)


def test_optimizer_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        tf.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0)
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.train.GradientDescentOptimizer(0.1, name="")
    w = tf.Variable(1.0, name="w")
    unrelated = tf.Variable(1.0, name="unrelated")
    with pytest.raises(ValueError, match="No gradients provided"):
        tf.train.AdamOptimizer().minimize(tf.constant(1.0) * 2.0, var_list=[unrelated])
    with pytest.raises(TypeError, match="Invalid type int32"):
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.constant(3), var_list=[w])
    with pytest.raises(TypeError, match="Gradient must be convertible"):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(object(), w)])


def test_fused_op_rejects_mismatched_gradient_shape() -> None:
    from flowmesh.ops.training_ops import apply_op

    w = tf.Variable(W0, name="w")
    with pytest.raises(tf.errors.InvalidArgumentError, match="var and grad"):
        apply_op("ResourceApplyGradientDescent", [w.handle, tf.constant(0.1), tf.zeros([3, 4])])
    with pytest.raises(TypeError, match="float64"):
        apply_op("ResourceApplyGradientDescent",
                 [w.handle, tf.constant(0.1, tf.float64), tf.zeros([4, 3])])


def test_sparse_index_out_of_range_is_invalid_argument() -> None:
    emb = tf.Variable(E0, name="emb")
    ids = tf.placeholder(tf.int32, [None])
    train_op = tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(tf.gather(emb, ids)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(train_op, {ids: [0, 99]})
        np.testing.assert_array_equal(sess.run(emb), E0)


def test_user_subclass_with_resource_hooks_gets_deduplicated_sparse_gradients() -> None:
    from flowmesh.train.optimizer import Optimizer

    class HalfStep(Optimizer):
        def __init__(self) -> None:
            super().__init__(False, "HalfStep")

        def _resource_apply_dense(self, grad, var):
            return var.assign_sub(0.5 * grad).op

        def _resource_apply_sparse(self, grad, var, indices):
            return tf.scatter_sub(var, indices, 0.5 * grad).op

    emb = tf.Variable(np.ones((5, 2), np.float32), name="emb")
    w = tf.Variable(2.0, name="w")
    train_op = HalfStep().minimize(tf.reduce_sum(tf.gather(emb, [1, 1, 3])) + w * w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        got_emb, got_w = sess.run([emb, w])
    np.testing.assert_allclose(got_emb[:, 0], [1.0, 0.0, 1.0, 0.5, 1.0])
    assert got_w == 0.0


def test_an_optimizer_without_update_hooks_says_what_to_implement() -> None:
    from flowmesh.train.optimizer import Optimizer

    w = tf.Variable(1.0, name="w")
    with pytest.raises(NotImplementedError, match="_apply_dense or _resource_apply_dense"):
        Optimizer(False, "Bare").minimize(w * w)


@pytest.mark.parametrize("variables", [1, 2])  # one kernel per variable / a fused run
@pytest.mark.parametrize("name", ["adam", "rmsprop", "momentum"])
def test_concurrent_steps_apply_whole_updates(name: str, variables: int) -> None:
    """Asynchronous steps (threads here, ps workers in a cluster) whose gradients touch
    fresh weights each step: every update of a multi-pass optimizer is applied whole,
    never interleaved with another. Interleaved, Adam divided another step's fresh ``m``
    by a ``v`` still 0 (+ epsilon) and moved weights by ~1e5."""
    import sys
    import threading

    make = {"adam": lambda: tf.train.AdamOptimizer(0.01),
            "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01),
            "momentum": lambda: tf.train.MomentumOptimizer(0.01, 0.9)}[name]
    block, steps, threads = 8, 200, 4
    width = block * steps * threads
    graph = tf.Graph()
    with graph.as_default():
        g = tf.placeholder(tf.float32, [width])
        ws = [tf.Variable(tf.zeros([width]), name=f"w{i}") for i in range(variables)]
        train = make().minimize(tf.add_n([tf.reduce_sum(w * g) for w in ws]))
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    errors: list[BaseException] = []

    def worker(thread: int) -> None:
        try:
            for step in range(steps):
                feed = np.zeros([width], np.float32)
                start = (step * threads + thread) * block
                feed[start:start + block] = 1.0
                sess.run(train, {g: feed})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a GIL hand-off between nearly every two torch calls
    try:
        pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join(60)
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors
    # A whole update moves a weight by at most lr / (1 - momentum) (Adam and RMSProp ~lr,
    # or lr / sqrt(1 - rho) on a weight's first gradient), and there are steps * threads.
    bound = steps * threads * 0.01 / (1 - 0.9)
    for value in sess.run(ws):
        assert np.isfinite(value).all() and np.abs(value).max() <= bound, np.abs(value).max()
