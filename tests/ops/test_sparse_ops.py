"""tf.sparse against TensorFlow: each row builds the same graph in flowmesh and in
``tf.compat.v1`` and compares indices, values and dense_shape (canonical order), and for
differentiable rows the gradients w.r.t. the sparse values and the dense operands."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow

A = ([[0, 1], [1, 0], [1, 2], [2, 3]], [1.0, -2.0, 3.0, 4.0], [3, 4])
B = ([[0, 1], [1, 1], [2, 3]], [0.5, 7.0, -4.0], [3, 4])
C = ([[0, 0, 1], [0, 2, 0], [1, 1, 1], [1, 2, 0]], [1.5, -1.0, 2.0, 3.0], [2, 3, 2])
U = ([[2, 1], [0, 3], [0, 1]], [1.0, 2.0, 3.0], [3, 4])  # unordered
D = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
M = np.arange(8, dtype=np.float32).reshape(4, 2) / 3.0


def _sp(tf, triple):
    ind, val, shape = triple
    return tf.SparseTensor(tf.constant(ind, tf.int64), tf.constant(val, tf.float32), tf.constant(shape, tf.int64))


# name -> (build(tf, a, b, c, u, d, m), differentiable)
SPECS = {
    "reorder": (lambda tf, a, b, c, u, d, m: tf.sparse.reorder(u), True),
    "reshape": (lambda tf, a, b, c, u, d, m: tf.sparse.reshape(c, [3, -1]), False),
    "transpose": (lambda tf, a, b, c, u, d, m: tf.sparse.transpose(c, [2, 0, 1]), True),
    "transpose_default": (lambda tf, a, b, c, u, d, m: tf.sparse.transpose(a), True),
    "add_sparse": (lambda tf, a, b, c, u, d, m: tf.sparse.add(a, b), True),
    "add_threshold": (lambda tf, a, b, c, u, d, m: tf.sparse.add(a, b, threshold=2.0), True),
    "add_dense": (lambda tf, a, b, c, u, d, m: tf.sparse.add(a, tf.constant(D)), True),
    "concat": (lambda tf, a, b, c, u, d, m: tf.sparse.concat(1, [a, b]), False),
    "concat_expand": (lambda tf, a, b, c, u, d, m: tf.sparse.concat(
        0, [a, tf.sparse.reset_shape(b, [3, 6])], expand_nonconcat_dim=True), False),
    "slice": (lambda tf, a, b, c, u, d, m: tf.sparse.slice(a, [1, 1], [5, 2]), True),
    "slice_3d": (lambda tf, a, b, c, u, d, m: tf.sparse.slice(c, [0, 1, 0], [2, 2, 1]), True),
    "split": (lambda tf, a, b, c, u, d, m: tf.sparse.split(sp_input=a, num_split=3, axis=1), False),
    "retain": (lambda tf, a, b, c, u, d, m: tf.sparse.retain(a, [True, False, True, False]), True),
    "reset_shape": (lambda tf, a, b, c, u, d, m: tf.sparse.reset_shape(a), False),
    "fill_empty_rows": (lambda tf, a, b, c, u, d, m: tf.sparse.fill_empty_rows(
        tf.sparse.reset_shape(a, [5, 4]), -1.0), True),
    "reduce_sum": (lambda tf, a, b, c, u, d, m: tf.sparse.reduce_sum(c, axis=1), True),
    "reduce_sum_all": (lambda tf, a, b, c, u, d, m: tf.sparse.reduce_sum(a), True),
    "reduce_sum_keep": (lambda tf, a, b, c, u, d, m: tf.sparse.reduce_sum(c, [0, 2], keepdims=True), True),
    "reduce_max": (lambda tf, a, b, c, u, d, m: tf.sparse.reduce_max(a, 1), False),
    "reduce_sum_sparse": (lambda tf, a, b, c, u, d, m: tf.sparse.reduce_sum_sparse(c, 1), False),
    "reduce_max_sparse_keep": (lambda tf, a, b, c, u, d, m: tf.sparse.reduce_max_sparse(c, -1, keepdims=True), False),
    "matmul": (lambda tf, a, b, c, u, d, m: tf.sparse.sparse_dense_matmul(a, tf.constant(M)), True),
    "matmul_adjoint": (lambda tf, a, b, c, u, d, m: tf.sparse_tensor_dense_matmul(
        a, tf.constant(D), adjoint_a=True), True),
    "matmul_adjoint_b": (lambda tf, a, b, c, u, d, m: tf.sparse.matmul(a, tf.constant(M.T), adjoint_b=True), True),
    "maximum": (lambda tf, a, b, c, u, d, m: tf.sparse.maximum(a, b), False),
    "minimum": (lambda tf, a, b, c, u, d, m: tf.sparse_minimum(a, b), False),
    "softmax": (lambda tf, a, b, c, u, d, m: tf.sparse.softmax(c), True),
    "from_dense": (lambda tf, a, b, c, u, d, m: tf.sparse.from_dense(tf.constant(D) * tf.constant(D > 0, tf.float32)), True),
    "to_dense": (lambda tf, a, b, c, u, d, m: tf.sparse.to_dense(a), True),
    "to_indicator": (lambda tf, a, b, c, u, d, m: tf.sparse.to_indicator(tf.SparseTensor(
        [[0, 0], [0, 1], [2, 0]], tf.constant([3, 1, 2], tf.int64), [3, 2]), 5), False),
    "eye": (lambda tf, a, b, c, u, d, m: tf.sparse.eye(3, 5), False),
    "expand_dims": (lambda tf, a, b, c, u, d, m: tf.sparse.expand_dims(a, 1), False),
    "segment_sum": (lambda tf, a, b, c, u, d, m: tf.sparse.segment_sum(tf.constant(D), [0, 2, 1], [0, 0, 1]), True),
    "segment_mean": (lambda tf, a, b, c, u, d, m: tf.sparse.segment_mean(tf.constant(D), [0, 2, 1], [0, 0, 2]), True),
    "segment_sqrt_n": (lambda tf, a, b, c, u, d, m: tf.sparse.segment_sqrt_n(
        tf.constant(D), [0, 2, 1], [0, 0, 1], num_segments=3), True),
    "cross": (lambda tf, a, b, c, u, d, m: tf.sparse.cross([_strings(tf), tf.constant([[7], [8], [9]], tf.int64)]), False),
    "cross_hashed": (lambda tf, a, b, c, u, d, m: tf.sparse.cross_hashed(
        [_strings(tf), tf.constant([["x", "y"], ["z", "w"], ["v", "u"]])], num_buckets=100), False),
    "cross_hashed_raw": (lambda tf, a, b, c, u, d, m: tf.sparse.cross_hashed(
        [tf.constant([[3, 4]], tf.int64), tf.constant([["q"]])], hash_key=77), False),
    "bincount": (lambda tf, a, b, c, u, d, m: tf.sparse.bincount(tf.constant([[1, 3, 3], [0, 5, 1]])), False),
    "bincount_rows_weights": (lambda tf, a, b, c, u, d, m: tf.sparse.bincount(
        tf.constant([[1, 3, 3], [0, 5, 1]], tf.int64), weights=tf.constant([[1., 2., 3.], [4., 5., 6.]]),
        axis=-1, minlength=7), False),
    "bincount_binary_max": (lambda tf, a, b, c, u, d, m: tf.sparse.bincount(
        tf.constant([1, 3, 3, 9]), maxlength=4, binary_output=True), False),
    "bincount_sparse_rows": (lambda tf, a, b, c, u, d, m: tf.sparse.bincount(tf.SparseTensor(
        [[0, 0], [0, 2], [1, 1]], tf.constant([2, 2, 4], tf.int64), [2, 3]), axis=-1), False),
    "strings": (lambda tf, a, b, c, u, d, m: [tf.sparse.reorder(tf.SparseTensor(
        [[1, 0], [0, 1]], tf.constant(["p", "q"]), [2, 2])), tf.sparse.concat(0, [_strings(tf), _strings(tf)]),
        tf.sparse.fill_empty_rows(_strings(tf), "e")[0], tf.sparse.split(sp_input=_strings(tf), num_split=2, axis=1)],
        False),
    "tf1_spellings": (lambda tf, a, b, c, u, d, m: [tf.sparse_tensor_to_dense(tf.sparse_add(a, b)),
                                                    tf.sparse_reduce_sum(tf.sparse_transpose(a), 0)], False),
}


def _strings(tf):
    return tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant(["a", "b", "c"]), [3, 2])


def _build(tf, build):
    a, b, c, u = (_sp(tf, t) for t in (A, B, C, U))
    out = build(tf, a, b, c, u, D, M)
    return out, [a.values, b.values, c.values, u.values]


def _values_of(tf, out):
    """Differentiable float tensors of a result (sparse values or dense tensors)."""
    items = out if isinstance(out, (list, tuple)) else [out]
    found = []
    for item in items:
        t = item.values if hasattr(item, "dense_shape") else item
        if t.dtype.is_floating:
            found.append(t)
    return found


def _run(tf, build, with_grads):
    graph = tf.Graph()
    with graph.as_default():
        out, xs = _build(tf, build)
        grads = []
        if with_grads:
            outs = _values_of(tf, out)
            rng = np.random.RandomState(0)
            loss = tf.add_n([tf.reduce_sum(o * tf.constant(rng.rand(8 * 8)[:1].astype(np.float32)) * o)
                             for o in outs])
            dense_consts = [op.outputs[0] for op in graph.get_operations()
                            if op.type == "Const" and op.outputs[0].dtype == tf.float32
                            and op.outputs[0].shape.rank == 2]
            targets = xs + dense_consts
            grads = [g for g in tf.gradients(loss, targets) if g is not None]
            grads = [tf.convert_to_tensor(g) for g in grads]
            assert grads, "a differentiable row must have gradients"
        with tf.Session(graph=graph) as sess:
            return sess.run([out, grads])


def _compare(ours, theirs, path="out"):
    if hasattr(theirs, "dense_shape"):
        np.testing.assert_array_equal(ours.indices, theirs.indices, err_msg=f"{path}.indices")
        if theirs.values.dtype == object:
            assert list(ours.values) == list(theirs.values), f"{path}.values"
        else:
            np.testing.assert_allclose(ours.values, theirs.values, rtol=1e-5, atol=1e-6, err_msg=f"{path}.values")
        np.testing.assert_array_equal(ours.dense_shape, theirs.dense_shape, err_msg=f"{path}.dense_shape")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _compare(o, t, f"{path}[{i}]")
    else:
        assert np.asarray(ours).shape == np.asarray(theirs).shape, path
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, err_msg=path)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_matches_tensorflow(name):
    tf1 = require_tensorflow()
    build, differentiable = SPECS[name]
    ours = _run(flowmesh.compat.v1, build, differentiable)
    theirs = _run(tf1, build, differentiable)
    _compare(ours, theirs)


def test_sparse_placeholder_is_fed_a_sparse_tensor_value():
    tf = flowmesh.compat.v1
    with tf.Graph().as_default():
        sp = tf.sparse_placeholder(tf.float32, shape=[None, 3])
        total = tf.sparse.reduce_sum(sp, 1)
        with tf.Session() as sess:
            value = tf.SparseTensorValue([[0, 1], [2, 2]], [4.0, 5.0], [3, 3])
            np.testing.assert_allclose(sess.run(total, {sp: value}), [4.0, 0.0, 5.0])
            np.testing.assert_allclose(sess.run(total, {sp: value._replace(values=[1.0, 2.0])}), [1.0, 0.0, 2.0])
            assert tf.convert_to_tensor_or_sparse_tensor(value).dtype == tf.float32
            assert tf.convert_to_tensor_or_sparse_tensor(sp) is sp


@pytest.mark.parametrize("build, pattern", [
    (lambda tf, a, b: tf.sparse.add(a, tf.sparse.reset_shape(b, [3, 5])), r"SparseAdd.*\[3, 4\].*\[3, 5\]"),
    (lambda tf, a, b: tf.sparse.sparse_dense_matmul(a, tf.ones([3, 2])), r"SparseTensorDenseMatMul.*inner"),
    (lambda tf, a, b: tf.sparse.reshape(a, [5, -1]), r"SparseReshape.*\[3, 4\]"),
    (lambda tf, a, b: tf.sparse.softmax(tf.SparseTensor([[0]], [1.0], [2])), r"SparseSoftmax.*rank"),
    (lambda tf, a, b: tf.sparse.add(_sp(tf, U), a), r"SparseAdd.*out of order.*\[2, 1\] then \[0, 3\].*reorder"),
    (lambda tf, a, b: tf.sparse.softmax(_sp(tf, U)), r"SparseSoftmax.*out of order"),
    (lambda tf, a, b: tf.sparse.concat(0, [a, tf.sparse.reset_shape(b, [3, 5])]), r"SparseConcat.*\[3, 5\]"),
    (lambda tf, a, b: tf.sparse.reorder(tf.SparseTensor([[0, 7]], [1.0], [2, 2])), r"SparseReorder.*out of bounds"),
])
def test_bad_input_names_the_op_and_shapes(build, pattern):
    tf = flowmesh.compat.v1
    with tf.Graph().as_default():
        with pytest.raises(flowmesh.errors.InvalidArgumentError, match=pattern):
            out = build(tf, _sp(tf, A), _sp(tf, B))  # static shapes: raised while building
            with tf.Session() as sess:
                sess.run(out)


def test_graph_def_runs_in_tensorflow():
    """Sparse ops export with TensorFlow's op names and type attrs: TF imports and runs them."""
    tf1 = require_tensorflow()
    tf = flowmesh.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        a, b, c, u = (_sp(tf, t) for t in (A, B, C, U))
        outs = [tf.sparse.to_dense(tf.sparse.concat(1, [a, b])), tf.sparse.to_dense(tf.sparse.add(a, b)),
                tf.sparse.sparse_dense_matmul(a, tf.constant(M)), tf.sparse.reduce_sum(c, 1),
                tf.sparse.to_dense(tf.sparse.reshape(c, [3, -1])), tf.sparse.reorder(u).values,
                tf.sparse.softmax(c).values, tf.sparse.add(a, tf.constant(D)),
                tf.sparse.to_dense(tf.sparse.fill_empty_rows(tf.sparse.reset_shape(a, [5, 4]), -1.0)[0]),
                tf.sparse.split(sp_input=a, num_split=2, axis=1)[1].values, tf.sparse.slice(a, [1, 1], [2, 2]).values,
                tf.sparse.maximum(a, b).values, tf.sparse.bincount(tf.constant([1, 3, 3])).values]
        with tf.Session(graph=graph) as sess:
            ours = sess.run(outs)
        names = [t.name for t in outs]
        serialized = graph.as_graph_def().SerializeToString()
    with tf1.Graph().as_default() as theirs_graph:
        tf1.import_graph_def(tf1.GraphDef.FromString(serialized), name="")
        with tf1.Session(graph=theirs_graph) as sess:
            theirs = sess.run(names)
    for name, o, t in zip(names, ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-6, err_msg=name)
