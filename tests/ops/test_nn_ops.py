"""Activations, softmax, bias_add and the cross-entropy family against NumPy/torch, float64
finite differences (first and second order) and TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import flowmesh as fm
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.op_harness import Input, OpHarness, OpSpec, spec_ids
from flowmesh.testing.tf_oracle import require_tensorflow

X = Input((3, 4))
AWAY_FROM_0 = Input((3, 4), kind="nonzero", low=0.2, high=2.0)  # no kink inside an FD step


def _t(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.asarray(x, dtype=np.float64))


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.log(_softmax(x, axis))


def _gelu(tf, x, approximate=False):
    nn = tf.nn if hasattr(tf.nn, "gelu") else tf.compat.v2.nn  # tf.compat.v1.nn has no gelu
    return nn.gelu(x, approximate=approximate)


def _onehot_like(rng: np.random.Generator) -> np.ndarray:
    p = rng.uniform(0.1, 1.0, (3, 4))
    return p / p.sum(axis=1, keepdims=True)


ACTIVATIONS = [
    OpSpec("relu", lambda tf, x: tf.nn.relu(x), (AWAY_FROM_0,), reference=lambda x: np.maximum(x, 0),
           second_order=True),
    OpSpec("relu6", lambda tf, x: tf.nn.relu6(x), (Input((3, 4), kind="distinct", low=-1.9, high=7.9),),
           reference=lambda x: np.clip(x, 0, 6), second_order=True),
    OpSpec("elu", lambda tf, x: tf.nn.elu(x), (AWAY_FROM_0,),
           reference=lambda x: np.where(x > 0, x, np.expm1(x)), second_order=True),
    OpSpec("selu", lambda tf, x: tf.nn.selu(x), (AWAY_FROM_0,),
           reference=lambda x: torch.selu(_t(x)), second_order=True),
    OpSpec("softplus", lambda tf, x: tf.nn.softplus(x), (X,), reference=lambda x: np.logaddexp(0, x),
           second_order=True),
    OpSpec("softsign", lambda tf, x: tf.nn.softsign(x), (AWAY_FROM_0,),
           reference=lambda x: x / (1 + np.abs(x))),
    # TensorFlow has no gradient for SoftsignGrad; flowmesh does.
    OpSpec("softsign/second_order", lambda tf, x: tf.nn.softsign(x), (AWAY_FROM_0,),
           second_order=True, oracle=False),
    OpSpec("leaky_relu", lambda tf, x: tf.nn.leaky_relu(x, alpha=0.1), (AWAY_FROM_0,),
           reference=lambda x: np.where(x > 0, x, 0.1 * x), second_order=True),
    OpSpec("gelu/exact", lambda tf, x: _gelu(tf, x), (X,),
           reference=lambda x: torch.nn.functional.gelu(_t(x)), second_order=True),
    OpSpec("gelu/tanh", lambda tf, x: _gelu(tf, x, approximate=True), (X,),
           reference=lambda x: torch.nn.functional.gelu(_t(x), approximate="tanh"), second_order=True),
    OpSpec("swish", lambda tf, x: tf.nn.swish(x), (X,), reference=lambda x: x / (1 + np.exp(-x)),
           second_order=True),
    OpSpec("crelu", lambda tf, x: tf.nn.crelu(x), (AWAY_FROM_0,),
           reference=lambda x: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1)),
    OpSpec("relu/float16", lambda tf, x: tf.nn.relu(x), (Input((3, 4), "float16", kind="nonzero", low=0.2),),
           reference=lambda x: np.maximum(x, 0)),
    OpSpec("elu/float16", lambda tf, x: tf.nn.elu(x), (Input((3, 4), "float16", kind="nonzero", low=0.2),),
           reference=lambda x: np.where(x > 0, x, np.expm1(x.astype(np.float64)))),
    OpSpec("softplus/float64", lambda tf, x: tf.nn.softplus(x), (Input((3, 4), "float64"),),
           reference=lambda x: np.logaddexp(0, x)),
    OpSpec("relu6/int32", lambda tf, x: tf.nn.relu6(x), (Input((3, 4), "int32", kind="int", low=-3, high=9),),
           reference=lambda x: np.clip(x, 0, 6)),
]

SOFTMAX = [
    OpSpec("softmax", lambda tf, x: tf.nn.softmax(x), (X,), reference=_softmax, second_order=True),
    OpSpec("softmax/axis0", lambda tf, x: tf.nn.softmax(x, axis=0), (X,),
           reference=lambda x: _softmax(x, 0)),
    OpSpec("softmax/rank3", lambda tf, x: tf.nn.softmax(x), (Input((2, 2, 3)),), reference=_softmax),
    OpSpec("log_softmax", lambda tf, x: tf.nn.log_softmax(x), (X,), reference=_log_softmax,
           second_order=True),
    OpSpec("log_softmax/axis0", lambda tf, x: tf.nn.log_softmax(x, axis=0), (X,),
           reference=lambda x: _log_softmax(x, 0)),
    OpSpec("softmax/bfloat16", lambda tf, x: tf.nn.softmax(x), (Input((3, 4), "bfloat16"),),
           reference=lambda x: _softmax(x.astype(np.float64))),
    OpSpec("bias_add", lambda tf, x, b: tf.nn.bias_add(x, b), (Input((2, 3, 4)), Input((4,))),
           reference=lambda x, b: x + b, second_order=True),
    OpSpec("bias_add/nchw", lambda tf, x, b: tf.nn.bias_add(x, b, data_format="NCHW"),
           (Input((2, 3, 2, 2)), Input((3,))), reference=lambda x, b: x + b.reshape(1, 3, 1, 1),
           second_order=True, oracle=False),  # TF's CPU BiasAdd kernel rejects NCHW
    OpSpec("xw_plus_b", lambda tf, x, w, b: tf.nn.xw_plus_b(x, w, b),
           (Input((2, 3)), Input((3, 4)), Input((4,))), reference=lambda x, w, b: x @ w + b),
    OpSpec("relu_layer", lambda tf, x, w, b: tf.nn.relu_layer(x, w, b),
           (Input((2, 3), kind="distinct", low=0.5, high=2.0), Input((3, 4), kind="distinct", low=0.1, high=1.0),
            Input((4,), kind="distinct", low=0.1, high=1.0)),
           reference=lambda x, w, b: np.maximum(x @ w + b, 0)),
]


def _xent(labels, logits):
    return -(labels * _log_softmax(logits)).sum(-1)


def _sparse_xent(labels, logits):
    return -np.take_along_axis(_log_softmax(logits), labels[:, None].astype(np.int64), -1)[:, 0]


def _sigmoid_xent(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


LABELS = Input((3, 4), maker=_onehot_like)
FIXED_LABELS = Input((3, 4), maker=_onehot_like, diff=False)


def _xent_v2(tf, z, x):
    return tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x)


CROSS_ENTROPY = [
    OpSpec("softmax_xent_v2", _xent_v2, (LABELS, X), reference=_xent),
    OpSpec("softmax_xent_v2/second_order_logits", _xent_v2, (FIXED_LABELS, X), second_order=True),
    # TensorFlow drops the d(backprop)/d(labels) term of the second derivative; flowmesh keeps it.
    OpSpec("softmax_xent_v2/second_order_all", _xent_v2, (LABELS, X), second_order=True, oracle=False),
    OpSpec("softmax_xent_v1", lambda tf, z, x: tf.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
           (FIXED_LABELS, X), reference=_xent, second_order=True),
    OpSpec("softmax_xent/rank3", lambda tf, z, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
           (Input((2, 2, 3), maker=lambda r: _softmax(r.uniform(-1, 1, (2, 2, 3)))), Input((2, 2, 3))),
           reference=_xent),
    OpSpec("softmax_xent/axis0", lambda tf, z, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x, axis=0),
           (Input((3, 4), maker=lambda r: _softmax(r.uniform(-1, 1, (3, 4)), 0)), X),
           reference=lambda z, x: -(z * _log_softmax(x, 0)).sum(0)),
    OpSpec("sparse_softmax_xent",
           lambda tf, y, x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x),
           (Input((3,), "int64", kind="int", low=0, high=4), X), reference=_sparse_xent, second_order=True),
    OpSpec("sparse_softmax_xent/int32_rank3",
           lambda tf, y, x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x),
           (Input((2, 2), "int32", kind="int", low=0, high=3), Input((2, 2, 3))),
           reference=lambda y, x: -np.take_along_axis(_log_softmax(x), y[..., None].astype(np.int64), -1)[..., 0]),
    OpSpec("sigmoid_xent", lambda tf, z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
           (Input((3, 4), low=0.0, high=1.0), Input((3, 4), kind="nonzero", low=0.1, high=3.0)),
           reference=_sigmoid_xent, second_order=True),
    OpSpec("weighted_xent", lambda tf, z, x: tf.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=3.0),
           (Input((3, 4), low=0.0, high=1.0), Input((3, 4), kind="nonzero", low=0.1, high=3.0)),
           reference=lambda z, x: (1 - z) * x + (1 + 2 * z) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)),
           second_order=True),
    OpSpec("softmax_xent/float16", lambda tf, z, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
           (Input((3, 4), "float16", maker=lambda r: np.eye(4)[r.integers(0, 4, 3)]), Input((3, 4), "float16")),
           reference=lambda z, x: _xent(z.astype(np.float64), x.astype(np.float64))),
]

SPECS = ACTIVATIONS + SOFTMAX + CROSS_ENTROPY
ORACLE_SPECS = [s for s in SPECS if s.oracle]


@pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
def test_op(spec):
    OpHarness(spec).check()


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ORACLE_SPECS, ids=spec_ids(ORACLE_SPECS))
def test_op_matches_tensorflow(spec):
    OpHarness(spec).check_tensorflow(require_tensorflow())


# --- bad input -------------------------------------------------------------------------------
def test_softmax_xent_casts_labels_to_the_logits_dtype():
    """float64 (or integer) labels with float32 logits: TensorFlow casts the labels, and the
    gradient reaches them through the Cast in the v2 form."""
    with fm.Graph().as_default():
        labels = fm.constant(np.eye(3))
        logits = fm.constant(np.arange(9, dtype=np.float32).reshape(3, 3))
        loss = fm.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss_v2 = fm.nn.softmax_cross_entropy_with_logits_v2(labels=fm.constant(np.eye(3, dtype=np.int32)),
                                                             logits=logits)
        grad = fm.gradients(fm.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits), labels)[0]
        assert loss.dtype == fm.float32 and loss_v2.dtype == fm.float32 and grad.dtype == fm.float64
        with fm.Session() as sess:
            got, got_v2 = sess.run([loss, loss_v2])
    x = np.arange(9, dtype=np.float64).reshape(3, 3)
    want = -np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True))[np.arange(3), np.arange(3)]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_v2, want, rtol=1e-5)


def test_sparse_xent_label_out_of_range_names_value_and_range():
    logits = fm.placeholder(fm.float32, [2, 3])
    labels = fm.placeholder(fm.int32, [2])
    loss = fm.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with fm.Session() as sess:
        with pytest.raises(InvalidArgumentError, match=r"label value of 3 which is outside the valid range of \[0, 3\)"):
            sess.run(loss, {logits: np.zeros((2, 3)), labels: [0, 3]})
        with pytest.raises(InvalidArgumentError, match=r"-1"):
            sess.run(loss, {logits: np.zeros((2, 3)), labels: [-1, 0]})


def test_xent_shape_errors_at_graph_construction():
    with pytest.raises(ValueError, match="Rank mismatch"):
        fm.nn.sparse_softmax_cross_entropy_with_logits(labels=fm.zeros([2, 1, 1], fm.int32), logits=fm.zeros([2, 3]))
    with pytest.raises(InvalidArgumentError, match="same first dimension"):
        fm.nn.sparse_softmax_cross_entropy_with_logits(labels=fm.zeros([3], fm.int32), logits=fm.zeros([2, 4]))
    with pytest.raises(ValueError):
        fm.nn.softmax_cross_entropy_with_logits_v2(labels=fm.zeros([2, 3]), logits=fm.zeros([2, 4]))


def test_bias_add_rejects_bad_shapes_and_formats():
    with pytest.raises(InvalidArgumentError, match="as many biases as the channel"):
        fm.nn.bias_add(fm.zeros([2, 3]), fm.zeros([4]))
    with pytest.raises(InvalidArgumentError, match="data_format"):
        fm.nn.bias_add(fm.zeros([2, 3]), fm.zeros([3]), data_format="NWHC")


def test_bias_add_with_unknown_shapes_checks_at_run_time():
    x = fm.placeholder(fm.float32, None)
    y = fm.nn.bias_add(x, fm.constant([1.0, 2.0]))
    with fm.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: np.zeros((1, 2))}), [[1.0, 2.0]])
        with pytest.raises(InvalidArgumentError, match=r"as many biases as the channel dimension.*\[2\] vs value shape \[2, 3\]"):
            sess.run(y, {x: np.zeros((2, 3))})


def test_bias_add_nchw_second_order_with_unknown_rank():
    x = fm.placeholder(fm.float64, None)
    b = fm.placeholder(fm.float64, [2])
    y = fm.nn.bias_add(x, b, data_format="NCHW")
    gb = fm.gradients(fm.reduce_sum(y * y), b)[0]
    gx = fm.gradients(fm.reduce_sum(gb * gb), x)[0]
    value = np.arange(8.0).reshape(1, 2, 2, 2)
    with fm.Session() as sess:
        result = sess.run(gx, {x: value, b: [0.5, -1.0]})
    sums = 2 * (value + np.array([0.5, -1.0]).reshape(1, 2, 1, 1)).sum(axis=(0, 2, 3))
    np.testing.assert_allclose(result, np.broadcast_to((4 * sums).reshape(1, 2, 1, 1), value.shape))


def test_activation_dtype_errors():
    with pytest.raises(TypeError, match="int32"):
        fm.nn.elu(fm.zeros([2], fm.int32))
    with pytest.raises(TypeError, match="DataType bool"):
        fm.nn.relu(fm.constant([True]))
    with pytest.raises(TypeError, match="int32 or int64, got int8"):
        fm.nn.sparse_softmax_cross_entropy_with_logits(labels=fm.zeros([2], fm.int8), logits=fm.zeros([2, 3]))
    assert fm.nn.leaky_relu(fm.zeros([2], fm.int32)).dtype == fm.float32  # TF casts ints


def test_sparse_xent_second_derivative_is_softmax_hessian():
    logits = fm.placeholder(fm.float64, [1, 3])
    loss = fm.nn.sparse_softmax_cross_entropy_with_logits(labels=fm.constant([1]), logits=logits)
    grad = fm.gradients(loss, logits)[0]
    hess = fm.hessians(loss, logits)[0]
    value = np.array([[0.2, -0.4, 1.0]])
    with fm.Session() as sess:
        g, h = sess.run([grad, hess], {logits: value})
    p = _softmax(value)[0]
    np.testing.assert_allclose(g[0], p - np.eye(3)[1], rtol=1e-12)
    np.testing.assert_allclose(h.reshape(3, 3), np.diag(p) - np.outer(p, p), rtol=1e-10, atol=1e-12)
