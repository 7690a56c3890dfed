"""tf.experimental.ExtensionType and the dispatch decorators: typed, validated, immutable
composite values that flow through tf.nest, Session.run and the dispatching tf.math ops."""

from __future__ import annotations

import typing

import numpy as np
import pytest

import flowmesh as tf


class MaskedTensor(tf.experimental.ExtensionType):
    values: tf.Tensor
    mask: tf.Tensor
    label: str = "masked"

    def __validate__(self):
        self.values.shape.assert_is_compatible_with(self.mask.shape)


class Ragged(tf.experimental.ExtensionType):
    rt: tf.RaggedTensor
    scale: float
    tags: typing.Mapping[str, int]
    shape: tf.TensorShape
    parts: tuple[MaskedTensor, ...] = ()


class Pair(tf.experimental.ExtensionType):
    first: tf.Tensor
    second: tf.Tensor | None

    def __init__(self, first, second=None):
        self.first = first
        self.second = second


def _masked(values, mask):
    return MaskedTensor(values, tf.constant(mask))


def test_fields_are_converted_checked_and_immutable():
    with tf.Graph().as_default():
        m = MaskedTensor([1.0, 2.0], [True, False])
        assert isinstance(m.values, tf.Tensor) and m.mask.dtype == tf.bool and m.label == "masked"
        assert tf.experimental.extension_type.as_dict(m) == {"values": m.values, "mask": m.mask, "label": "masked"}
        with pytest.raises(AttributeError, match="Cannot mutate attribute `values`"):
            m.values = tf.constant([0.0])
        with pytest.raises(TypeError, match="MaskedTensor.label: expected str"):
            MaskedTensor([1.0], [True], label=3)
        with pytest.raises(TypeError, match="missing required field 'mask'"):
            MaskedTensor([1.0])
        with pytest.raises(ValueError):
            MaskedTensor([1.0, 2.0], [True])  # __validate__
        with pytest.raises(TypeError, match="Unsupported type annotation"):
            type("Bad", (tf.experimental.ExtensionType,), {"__annotations__": {"x": list[int]}})
        pair = Pair(tf.constant(1))
        assert pair.second is None and "Pair(first=" in repr(pair)
        r = Ragged(tf.ragged.constant([[1, 2], [3]]), 2, {"a": 1}, [2, None], (m,))
        assert r.scale == 2.0 and isinstance(r.scale, float) and dict(r.tags) == {"a": 1}
        assert r.shape.as_list() == [2, None]
        with pytest.raises(TypeError):
            r.tags["b"] = 2  # read-only mapping


def test_type_spec_equality_and_eq_tensor():
    with tf.Graph().as_default():
        a = _masked(tf.constant([1.0, 2.0]), [True, False])
        b = _masked(tf.constant([1.0, 2.0]), [True, False])
        c = _masked(tf.constant([1.0, 3.0]), [True, False])
        assert a._type_spec == b._type_spec and isinstance(a._type_spec, MaskedTensor.Spec)
        assert isinstance(a._type_spec, tf.experimental.ExtensionTypeSpec)
        assert a._type_spec.is_compatible_with(_masked(tf.placeholder(tf.float32, [None]), [True, False]))
        assert (a == _masked(tf.constant([1, 2]), [True, False])) is False  # different dtype: other spec
        with tf.Session() as sess:
            assert sess.run([a == b, a == c, a != c]) == [True, False, True]


def test_nest_expand_composites_and_session_fetch():
    with tf.Graph().as_default():
        m = _masked(tf.constant([1.0, 2.0]), [True, False])
        r = Ragged(tf.ragged.constant([[1, 2], [3]]), 2.0, {"a": 1}, [2, None], (m,))
        flat = tf.nest.flatten(r, expand_composites=True)
        assert len(flat) == 4 and all(isinstance(t, tf.Tensor) for t in flat)
        assert tf.nest.flatten(r) == [r]
        doubled = tf.nest.map_structure(lambda t: t * 2 if t.dtype != tf.bool else t, m, expand_composites=True)
        assert isinstance(doubled, MaskedTensor) and doubled.label == "masked"
        rebuilt = tf.nest.pack_sequence_as({"k": r}, flat, expand_composites=True)
        assert isinstance(rebuilt["k"], Ragged) and isinstance(rebuilt["k"].rt, tf.RaggedTensor)
        with tf.Session() as sess:
            fetched_m, fetched_r = sess.run([doubled, r])
    assert isinstance(fetched_m, MaskedTensor)
    np.testing.assert_array_equal(fetched_m.values, [2.0, 4.0])
    assert fetched_r.rt.to_list() == [[1, 2], [3]] and fetched_r.scale == 2.0
    np.testing.assert_array_equal(fetched_r.parts[0].mask, [True, False])


def test_dispatch_for_elementwise_apis_and_api():
    @tf.experimental.dispatch_for_unary_elementwise_apis(MaskedTensor)
    def unary(api_func, x):
        return MaskedTensor(api_func(x.values), x.mask)

    @tf.experimental.dispatch_for_binary_elementwise_apis(MaskedTensor, MaskedTensor)
    def binary(api_func, x, y):
        return MaskedTensor(api_func(x.values, y.values), tf.logical_and(x.mask, y.mask))

    @tf.experimental.dispatch_for_api(tf.math.maximum)
    def masked_maximum(x: MaskedTensor, y: MaskedTensor, name=None):
        return MaskedTensor(tf.maximum(x.values, y.values) + 100.0, x.mask)

    try:
        with tf.Graph().as_default():
            a = _masked(tf.constant([-1.0, 4.0]), [True, False])
            b = _masked(tf.constant([2.0, 3.0]), [True, True])
            results = [tf.abs(a), tf.math.exp(a), tf.add(a, b), tf.math.multiply(a, b, name="mul"),
                       tf.maximum(a, b), tf.abs(tf.constant([-3.0]))]
            assert all(isinstance(r, MaskedTensor) for r in results[:5])
            with tf.Session() as sess:
                values = sess.run([r.values if isinstance(r, MaskedTensor) else r for r in results]
                                  + [results[3].mask])
    finally:
        for target in (unary, binary, masked_maximum):
            tf.experimental.unregister_dispatch_for(target)
    np.testing.assert_allclose(values[0], [1.0, 4.0])
    np.testing.assert_allclose(values[1], np.exp([-1.0, 4.0]), rtol=1e-6)
    np.testing.assert_allclose(values[2], [1.0, 7.0])
    np.testing.assert_allclose(values[3], [-2.0, 12.0])
    np.testing.assert_allclose(values[4], [102.0, 104.0])
    np.testing.assert_allclose(values[5], [3.0])
    np.testing.assert_array_equal(values[6], [True, False])
    with tf.Graph().as_default(), pytest.raises(TypeError):
        tf.abs(_masked(tf.constant([1.0]), [True]))  # unregistered: the op itself rejects it
    with pytest.raises(ValueError, match="was not registered"):
        tf.experimental.unregister_dispatch_for(unary)


def test_dispatch_for_assert_apis_and_bad_targets():
    calls = []

    @tf.experimental.dispatch_for_binary_elementwise_assert_apis(MaskedTensor, MaskedTensor)
    def masked_assert(assert_func, x, y):
        calls.append(assert_func)
        return assert_func(x.values, y.values)

    try:
        with tf.Graph().as_default():
            a = _masked(tf.constant([1.0]), [True])
            tf.debugging.assert_equal(a, a)
            assert calls
    finally:
        tf.experimental.unregister_dispatch_for(masked_assert)
    with pytest.raises(ValueError, match="signature"):
        tf.experimental.dispatch_for_api(tf.math.add)(lambda a, b: None)


def test_batch_encoder_batches_field_specs():
    with tf.Graph().as_default():
        spec = _masked(tf.constant([1.0, 2.0]), [True, False])._type_spec
        encoder = tf.experimental.ExtensionTypeBatchEncoder()
        batched = encoder.batch(spec, 8)
        assert batched._field_specs["values"].shape.as_list() == [8, 2]
        assert encoder.unbatch(batched) == spec
        assert [s.shape.as_list() for s in encoder.encoding_specs(spec)] == [[2], [2]]
        assert issubclass(tf.experimental.BatchableExtensionType, tf.experimental.ExtensionType)
