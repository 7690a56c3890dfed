"""tf.RaggedTensor and tf.ragged against TensorFlow: each row builds the same graph in
flowmesh and in ``tf.compat.v1``, fetches it with ``Session.run`` (RaggedTensorValues) and
compares the nested lists, the dtypes and the row-splits dtypes; the gradient rows compare
the gradients that reach the flat values."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

RT = [[1.0, 2.0], [], [3.0, 4.0, 5.0], [6.0]]
NESTED = [[[1, 2], [3]], [], [[4, 5, 6], [], [7]]]


def _rt(tf):
    return tf.RaggedTensor.from_row_splits(tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), [0, 2, 2, 5, 6])


SPECS = {
    "constant": lambda tf: tf.ragged.constant(RT),
    "constant_nested": lambda tf: tf.ragged.constant(NESTED),
    "constant_inner_shape": lambda tf: tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1),
    "constant_strings_int32_splits": lambda tf: tf.ragged.constant([["a", "b"], ["c"]], row_splits_dtype=tf.int32),
    "constant_empty": lambda tf: tf.ragged.constant([[], []]),
    "constant_flat": lambda tf: tf.ragged.constant([1, 2, 3]),
    "from_row_lengths": lambda tf: tf.RaggedTensor.from_row_lengths([3, 1, 4, 1, 5], [2, 0, 3]),
    "from_row_starts": lambda tf: tf.RaggedTensor.from_row_starts([3, 1, 4, 1, 5], [0, 2, 2]),
    "from_row_limits": lambda tf: tf.RaggedTensor.from_row_limits([3, 1, 4, 1, 5], [2, 2, 5]),
    "from_value_rowids": lambda tf: tf.RaggedTensor.from_value_rowids([3, 1, 4, 1, 5], [0, 0, 2, 2, 2], nrows=4),
    "from_value_rowids_default_nrows": lambda tf: tf.RaggedTensor.from_value_rowids([3, 1, 4], [1, 1, 3]),
    "from_uniform_row_length": lambda tf: tf.RaggedTensor.from_uniform_row_length([1, 2, 3, 4, 5, 6], 3),
    "from_nested_row_splits": lambda tf: tf.RaggedTensor.from_nested_row_splits(
        [1, 2, 3, 4, 5], [[0, 2, 3], [0, 1, 1, 5]]),
    "from_nested_row_lengths": lambda tf: tf.RaggedTensor.from_nested_row_lengths([1, 2, 3, 4], [[1, 2], [3, 0, 1]]),
    "from_tensor": lambda tf: tf.RaggedTensor.from_tensor([[1, 2, 0], [3, 0, 0]]),
    "from_tensor_lengths": lambda tf: tf.RaggedTensor.from_tensor([[1, 2, 0], [3, 0, 0]], lengths=[1, 3]),
    "from_tensor_padding": lambda tf: tf.RaggedTensor.from_tensor([[1, 2, 0], [3, 0, 0], [0, 0, 0]], padding=0),
    "from_tensor_padding_inner": lambda tf: tf.RaggedTensor.from_tensor(
        [[[1, 1], [0, 0]], [[0, 0], [0, 0]], [[2, 0], [0, 0]]], padding=[0, 0]),
    "from_tensor_ragged_rank_2": lambda tf: tf.RaggedTensor.from_tensor(
        np.arange(24).reshape(2, 3, 4), padding=0, ragged_rank=2),
    "from_sparse": lambda tf: tf.RaggedTensor.from_sparse(tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1, 2, 3], [4, 3])),
    "to_tensor": lambda tf: _rt(tf).to_tensor(),
    "to_tensor_default": lambda tf: _rt(tf).to_tensor(default_value=-1.0),
    "to_tensor_shape": lambda tf: _rt(tf).to_tensor(shape=[3, 2]),
    "to_tensor_shape_pad": lambda tf: _rt(tf).to_tensor(default_value=9.0, shape=[5, 4]),
    "to_tensor_nested": lambda tf: tf.ragged.constant(NESTED).to_tensor(),
    "to_tensor_inner_dims": lambda tf: tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).to_tensor(),
    "to_tensor_strings": lambda tf: tf.ragged.constant([["a"], ["b", "c"]]).to_tensor(),
    "to_sparse": lambda tf: _rt(tf).to_sparse(),
    "to_sparse_nested": lambda tf: tf.ragged.constant(NESTED).to_sparse(),
    "accessors": lambda tf: [_rt(tf).values, _rt(tf).row_splits, _rt(tf).row_lengths(), _rt(tf).nrows(),
                             _rt(tf).value_rowids(), _rt(tf).row_starts(), _rt(tf).row_limits(),
                             _rt(tf).bounding_shape()],
    "nested_accessors": lambda tf: [tf.ragged.constant(NESTED).flat_values,
                                    list(tf.ragged.constant(NESTED).nested_row_splits),
                                    list(tf.ragged.constant(NESTED).nested_row_lengths()),
                                    tf.ragged.constant(NESTED).row_lengths(axis=2),
                                    tf.ragged.constant(NESTED).bounding_shape()],
    "with_values": lambda tf: _rt(tf).with_values(_rt(tf).values * 2.0),
    "with_flat_values": lambda tf: tf.ragged.constant(NESTED).with_flat_values(tf.range(7) * 10),
    "with_row_splits_dtype": lambda tf: tf.ragged.constant(NESTED).with_row_splits_dtype(tf.int32),
    "range": lambda tf: tf.ragged.range([0, 5, 8], [3, 3, 12]),
    "range_scalar_limit": lambda tf: tf.ragged.range([3, 0, 5]),
    "range_deltas": lambda tf: tf.ragged.range([0, 10, 3], 8, [2, -3, 1]),
    "range_float": lambda tf: tf.ragged.range(0.0, [1.0, 2.5], 0.5),
    "range_int32_splits": lambda tf: tf.ragged.range([2, 4], row_splits_dtype=tf.int32),
    "row_splits_to_segment_ids": lambda tf: tf.ragged.row_splits_to_segment_ids([0, 3, 3, 5, 6, 9]),
    "segment_ids_to_row_splits": lambda tf: tf.ragged.segment_ids_to_row_splits([0, 0, 0, 2, 2, 3, 4, 4, 4]),
    "segment_ids_to_row_splits_num": lambda tf: tf.ragged.segment_ids_to_row_splits(
        tf.constant([0, 1, 1], tf.int32), num_segments=4),
    "map_flat_values": lambda tf: tf.ragged.map_flat_values(tf.multiply, _rt(tf), _rt(tf)),
    "map_flat_values_kwargs": lambda tf: tf.ragged.map_flat_values(tf.cast, tf.ragged.constant(NESTED),
                                                                   dtype=tf.float32),
    "boolean_mask_dense_2d": lambda tf: tf.ragged.boolean_mask([[1, 2, 3], [4, 5, 6]],
                                                               [[True, False, True], [False, False, True]]),
    "boolean_mask_dense_1d": lambda tf: tf.ragged.boolean_mask([[1, 2, 3], [4, 5, 6]], [False, True]),
    "boolean_mask_dense_3d": lambda tf: tf.ragged.boolean_mask(
        np.arange(12).reshape(2, 2, 3), np.array([[[1, 0, 1], [0, 0, 0]], [[1, 1, 1], [0, 1, 0]]], bool)),
    "boolean_mask_ragged_rows": lambda tf: tf.ragged.boolean_mask(_rt(tf), [True, False, True, False]),
    "boolean_mask_ragged_mask": lambda tf: tf.ragged.boolean_mask(
        _rt(tf), tf.ragged.constant([[True, False], [], [False, True, True], [True]])),
    "boolean_mask_ragged_dense_mask": lambda tf: tf.ragged.boolean_mask(
        tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], ragged_rank=1), [[True, False], [False, True]]),
    "stack_axis0": lambda tf: tf.ragged.stack([_rt(tf), tf.ragged.constant([[7.0, 8.0]])]),
    "stack_axis1": lambda tf: tf.ragged.stack([_rt(tf), _rt(tf) * 2.0], axis=1),
    "stack_axis2": lambda tf: tf.ragged.stack([_rt(tf), _rt(tf) + 1.0], axis=2),
    "stack_dense": lambda tf: tf.ragged.stack([tf.constant([[1, 2], [3, 4]]), tf.ragged.constant([[5], [6, 7, 8]])]),
    "stack_dense_last_axis": lambda tf: tf.ragged.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1),
    "stack_vectors": lambda tf: tf.ragged.stack([tf.constant([1, 2]), tf.constant([3, 4, 5])]),
    "stack_dynamic_partitions": lambda tf: tf.ragged.stack_dynamic_partitions(
        ["a", "b", "c", "d", "e"], [3, 0, 2, 2, 3], 5),
    "stack_dynamic_partitions_2d": lambda tf: tf.ragged.stack_dynamic_partitions(
        [[1, 2], [3, 4], [5, 6]], [[0, 1], [1, 1], [0, 2]], 3),
    "stack_dynamic_partitions_ragged": lambda tf: tf.ragged.stack_dynamic_partitions(
        tf.ragged.constant([[1, 2], [3], [4, 5, 6]]), tf.ragged.constant([[1, 0], [1], [0, 0, 1]]), 2),
    "cross": lambda tf: tf.ragged.cross([tf.ragged.constant([["a"], ["b", "c"]]),
                                         tf.constant([["d"], ["e"]]),
                                         tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["f", "g", "h"], [2, 2])]),
    "cross_int": lambda tf: tf.ragged.cross([tf.ragged.constant([[1, 2], []], dtype=tf.int64),
                                             tf.ragged.constant([["x"], ["y"]])]),
    "cross_hashed": lambda tf: tf.ragged.cross_hashed([tf.ragged.constant([["a"], ["b", "c"]]),
                                                       tf.constant([["d"], ["e"]])], num_buckets=100),
    "cross_hashed_key": lambda tf: tf.ragged.cross_hashed([tf.ragged.constant([["a", "z"], ["b"]]),
                                                           tf.ragged.constant([["q"], ["r"]])], hash_key=7),
    "fill_empty_rows": lambda tf: list(tf.ragged_fill_empty_rows(
        tf.constant([0, 0, 2, 4], tf.int64), [1.0, 2.0, 3.0, 4.0], tf.constant(6, tf.int64), -1.0)),
    "getitem_row": lambda tf: [_rt(tf)[2], _rt(tf)[-1], _rt(tf)[1]],
    "getitem_slices": lambda tf: [_rt(tf)[1:3], _rt(tf)[-2:], _rt(tf)[:10], _rt(tf)[3:1]],
    "getitem_nested": lambda tf: [tf.ragged.constant(NESTED)[2], tf.ragged.constant(NESTED)[1:]],
    "operators": lambda tf: [_rt(tf) + 1.0, 2.0 * _rt(tf), -_rt(tf), _rt(tf) * _rt(tf), _rt(tf) > 2.5,
                             abs(_rt(tf) - 3.0), 1.0 / _rt(tf), _rt(tf) ** 2.0],
    "empty": lambda tf: [tf.ragged.constant([[], []]).to_tensor(), tf.ragged.constant([[], []]).bounding_shape(),
                         tf.RaggedTensor.from_row_splits(tf.zeros([0]), tf.constant([0], tf.int64)).to_tensor(),
                         tf.RaggedTensor.from_tensor(tf.zeros([2, 0]), padding=0.0),
                         tf.ragged.range(tf.zeros([0], tf.int32))],
    "fill_empty_rows_grad": lambda tf: list(tf.ragged_fill_empty_rows_grad(
        tf.constant([0, 1, 3, 5], tf.int64), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])),
}


def _run_all(tf, specs):
    """Every spec's result, built in one graph and fetched with one Session.run."""
    graph = tf.Graph()
    with graph.as_default():
        outs = {name: build(tf) for name, build in specs.items()}
        with tf.Session(graph=graph, config=session_config(tf) if tf is not flowmesh else None) as sess:
            return sess.run(outs)


@pytest.fixture(scope="module")
def results():
    tf1 = require_tensorflow()
    return _run_all(flowmesh, SPECS), _run_all(tf1, SPECS)


def _compare(ours, theirs, path="out"):
    if hasattr(theirs, "to_list"):
        assert isinstance(ours, flowmesh.ragged.RaggedTensorValue), f"{path}: {type(ours)}"
        assert ours.to_list() == theirs.to_list(), f"{path}: {ours.to_list()} != {theirs.to_list()}"
        assert [s.dtype for s in ours.nested_row_splits] == [s.dtype for s in theirs.nested_row_splits], path
        assert ours.flat_values.dtype == theirs.flat_values.dtype, path
        assert ours.flat_values.shape == theirs.flat_values.shape, path
    elif hasattr(theirs, "dense_shape"):
        _compare(ours.indices, theirs.indices, f"{path}.indices")
        _compare(ours.values, theirs.values, f"{path}.values")
        _compare(ours.dense_shape, theirs.dense_shape, f"{path}.dense_shape")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, f"{path}[{i}]")
    else:
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        assert ours.dtype == theirs.dtype, f"{path}: {ours.dtype} != {theirs.dtype}"
        assert ours.shape == theirs.shape, f"{path}: {ours.shape} != {theirs.shape}"
        if theirs.dtype == object:
            assert ours.tolist() == theirs.tolist(), path
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-6, err_msg=path)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_against_tensorflow(name, results):
    ours, theirs = results
    _compare(ours[name], theirs[name], name)


def _static_shapes(tf):
    return [_rt(tf).shape, tf.ragged.constant(NESTED).shape,
            tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).shape,
            tf.RaggedTensor.from_tensor(tf.zeros([2, 3])).shape, tf.ragged.constant(NESTED).ragged_rank,
            tf.ragged.constant(RT).dtype, _rt(tf).to_tensor().shape]


def test_static_shapes_and_specs_match_tensorflow():
    tf1 = require_tensorflow()
    with flowmesh.Graph().as_default():
        ours = _static_shapes(flowmesh)
        spec = flowmesh.ragged.constant(NESTED)._type_spec
    with tf1.Graph().as_default():
        theirs = _static_shapes(tf1)
        tf1_spec = tf1.ragged.constant(NESTED)._type_spec
    assert [x.as_list() for x in ours[:4]] == [x.as_list() for x in theirs[:4]]
    assert ours[4] == theirs[4] and ours[5].name == theirs[5].name
    assert ours[6].as_list() == theirs[6].as_list()
    assert (spec.shape.as_list(), spec.dtype.name, spec.ragged_rank, spec.row_splits_dtype.name) == (
        tf1_spec.shape.as_list(), tf1_spec.dtype.name, tf1_spec.ragged_rank, tf1_spec.row_splits_dtype.name)
    assert spec.value_type is flowmesh.RaggedTensor
    assert flowmesh.RaggedTensorSpec([None, None], flowmesh.int32).is_compatible_with(
        flowmesh.RaggedTensorSpec([3, None], flowmesh.int32))


GRAD_SPECS = {
    "to_tensor": lambda tf, x: tf.RaggedTensor.from_row_splits(x, [0, 2, 2, 5, 6]).to_tensor(default_value=0.5),
    "nested_to_tensor": lambda tf, x: tf.RaggedTensor.from_nested_row_splits(x, [[0, 1, 3], [0, 2, 2, 6]]).to_tensor(),
    "from_tensor_lengths": lambda tf, x: tf.RaggedTensor.from_tensor(
        tf.reshape(x, [2, 3]), lengths=[1, 3]).to_tensor(),
    "boolean_mask": lambda tf, x: tf.ragged.boolean_mask(
        tf.reshape(x, [2, 3]), [[True, False, True], [False, True, True]]).to_tensor(),
    "stack_axis1": lambda tf, x: tf.ragged.stack(
        [tf.RaggedTensor.from_row_lengths(x, [4, 2]), tf.RaggedTensor.from_row_lengths(x * x, [1, 5])],
        axis=1).to_tensor(),
    "map_flat_values": lambda tf, x: tf.ragged.map_flat_values(
        tf.square, tf.RaggedTensor.from_row_lengths(x, [3, 3])).to_tensor(),
    "fill_empty_rows": lambda tf, x: tf.ragged_fill_empty_rows(
        tf.constant([0, 0, 2, 2, 2, 5], tf.int64), x, tf.constant(7, tf.int64), tf.reduce_sum(x))[1],
}


def _gradients(tf):
    graph = tf.Graph()
    with graph.as_default():
        grads = {}
        for name, build in GRAD_SPECS.items():
            x = tf.constant(np.linspace(-1.0, 2.0, 6))
            out = build(tf, x)
            positions = tf.cast(tf.range(tf.size(out)), out.dtype)
            weights = tf.reshape(1.0 + 0.1 * positions * positions, tf.shape(out))  # distinct per element
            grads[name] = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(out * weights), x)[0])
        with tf.Session(graph=graph) as sess:
            return sess.run(grads)


@pytest.fixture(scope="module")
def gradients():
    tf1 = require_tensorflow()
    return _gradients(flowmesh), _gradients(tf1)


@pytest.mark.parametrize("name", sorted(GRAD_SPECS))
def test_gradients_reach_flat_values_as_in_tensorflow(name, gradients):
    ours, theirs = gradients
    np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-10, err_msg=name)


def test_placeholder_feeds_and_fetches_ragged_tensor_values():
    with flowmesh.Graph().as_default():
        rt = flowmesh.ragged.placeholder(flowmesh.float32, ragged_rank=2, value_shape=[2])
        assert rt.shape.as_list() == [None, None, None, 2] and rt.ragged_rank == 2
        doubled = flowmesh.ragged.map_flat_values(lambda v: v * 2.0, rt)
        value = flowmesh.ragged.constant_value([[[[1, 2]], [[3, 4], [5, 6]]], []], dtype=np.float32, ragged_rank=2)
        with flowmesh.Session() as sess:
            fetched = sess.run({"rt": doubled, "dense": rt.to_tensor()}, feed_dict={rt: value})
    assert isinstance(fetched["rt"], flowmesh.ragged.RaggedTensorValue)
    assert fetched["rt"].to_list() == [[[[2, 4]], [[6, 8], [10, 12]]], []]
    assert fetched["dense"].shape == (2, 2, 2, 2)
    with flowmesh.Graph().as_default():
        rt = flowmesh.ragged.placeholder(flowmesh.int32, ragged_rank=1)
        with flowmesh.Session() as sess, pytest.raises(TypeError, match="RaggedTensorValue"):
            sess.run(rt.values, feed_dict={rt: [[1], [2, 3]]})


def test_constant_value_matches_tensorflow():
    tf1 = require_tensorflow()
    for args, kwargs in [((NESTED,), {}), ((RT,), {"row_splits_dtype": "int32"}),
                         (([[[1, 2], [3, 4]], [[5, 6]]],), {"ragged_rank": 1}), (([["a"], []],), {}),
                         (([1, 2],), {}), (([[1, 2]],), {"dtype": np.int16})]:
        _compare(flowmesh.ragged.constant_value(*args, **kwargs), tf1.ragged.constant_value(*args, **kwargs))
    value = flowmesh.ragged.RaggedTensorValue(np.array([1, 2, 3]), np.array([0, 1, 3]))
    assert value.shape == (2, None) and value.ragged_rank == 1 and str(value) == "<tf.RaggedTensorValue [[1], [2, 3]]>"


def test_bad_input_raises_clear_errors():
    with flowmesh.Graph().as_default():
        with pytest.raises(ValueError, match="factory methods"):
            flowmesh.RaggedTensor(flowmesh.constant([1]), flowmesh.constant([0, 1], flowmesh.int64))
        with pytest.raises(flowmesh.errors.InvalidArgumentError, match="valid RaggedTensor"):
            with flowmesh.Session() as sess:
                sess.run(flowmesh.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 4]))
        with pytest.raises(ValueError, match="same nesting depth"):
            flowmesh.ragged.constant([[1, [2]], [3]])
        with pytest.raises(ValueError, match="not both"):
            flowmesh.RaggedTensor.from_tensor([[1]], lengths=[1], padding=0)
        with pytest.raises(ValueError, match="mismatched row_splits dtypes"):
            flowmesh.ragged.stack([flowmesh.ragged.constant([[1]]),
                                   flowmesh.ragged.constant([[1]], row_splits_dtype=flowmesh.int32)])
        with pytest.raises(ValueError, match="scalar"):
            flowmesh.ragged.boolean_mask([1, 2], True)
        with pytest.raises(TypeError, match="int or a slice"):
            flowmesh.ragged.constant([[1], [2, 3]])[::2]
        with pytest.raises(ValueError, match="cannot broadcast"):
            flowmesh.ragged.constant([[1], [2, 3]]) + flowmesh.constant([[1], [2]])
        values = flowmesh.placeholder(flowmesh.float32, [None])
        splits = flowmesh.placeholder(flowmesh.int64, [None])
        rt = flowmesh.RaggedTensor.from_row_splits(values, splits)
        with flowmesh.Session() as sess, pytest.raises(flowmesh.errors.InvalidArgumentError):
            sess.run(rt.row_splits, feed_dict={values: [1.0], splits: np.array([0, 2], np.int64)})
