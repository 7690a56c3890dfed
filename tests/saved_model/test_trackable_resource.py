"""tf.saved_model.experimental.TrackableResource: the handle is created once, lazily, on the
resource's device, by the subclass."""

from __future__ import annotations

import pytest

import flowmesh as tf


class Counter(tf.saved_model.experimental.TrackableResource):
    def __init__(self, device=""):
        super().__init__(device=device)
        self.created = 0

    def _create_resource(self):
        self.created += 1
        return tf.Variable(0, name="counter").op.outputs[0]


def test_handle_is_created_once_on_the_device():
    with tf.Graph().as_default():
        resource = Counter(device="/cpu:0")
        assert resource._resource_handle is None and resource.created == 0
        handle = resource.resource_handle
        assert resource.resource_handle is handle and resource.created == 1
        assert "CPU:0" in handle.op.device
        with tf.device("/job:worker"):
            plain = Counter().resource_handle
        assert plain.op.device.startswith("/job:worker")
        assert Counter._resource_type() == "Counter"


def test_a_subclass_must_create_the_resource():
    with tf.Graph().as_default():
        with pytest.raises(NotImplementedError, match="_create_resource"):
            _ = tf.saved_model.experimental.TrackableResource().resource_handle
