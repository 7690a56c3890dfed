"""tf.saved_model's TF1 names: constants equal TensorFlow's, main_op_with_restore, Builder,
contains_saved_model, SaveOptions, Asset, and the TF2-only save/load_v2 stand-ins."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.errors import UnimplementedError
from flowmesh.testing.tf_oracle import require_tensorflow

CONSTANTS = ["ASSETS_DIRECTORY", "ASSETS_KEY", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME",
             "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "DEBUG_DIRECTORY",
             "DEBUG_INFO_FILENAME_PB", "GPU", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "PREDICT_INPUTS",
             "PREDICT_OUTPUTS", "REGRESS_INPUTS", "REGRESS_METHOD_NAME", "REGRESS_OUTPUTS",
             "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION",
             "TPU", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME", "SERVING", "TRAINING",
             "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "PREDICT_METHOD_NAME"]


@pytest.mark.parametrize("name", CONSTANTS)
def test_constant_equals_tensorflow(name):
    tf1 = require_tensorflow()
    assert getattr(tf.saved_model, name) == getattr(tf1.saved_model, name)


def test_main_op_with_restore_restores_and_initializes(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        saver = tf.train.Saver([w])
        with tf.Session() as sess:
            sess.run(w.initializer)
            path = saver.save(sess, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        w = tf.Variable([0.0, 0.0], name="w")
        local = tf.Variable(7.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        saver = tf.train.Saver([w])
        op = tf.saved_model.main_op_with_restore(saver.saver_def.restore_op_name)
        with tf.Session() as sess:
            sess.run(op, {saver.saver_def.filename_tensor_name: path})
            np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])
            assert sess.run(local) == 7.0


def test_builder_alias_writes_a_saved_model(tmp_path):
    export_dir = str(tmp_path / "m")
    assert not tf.saved_model.contains_saved_model(export_dir)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.identity(x * 2.0, name="y")
        builder = tf.saved_model.Builder(export_dir)
        sig = tf.saved_model.predict_signature_def({"x": x}, {"y": y})
        with tf.Session() as sess:
            builder.add_meta_graph_and_variables(sess, [tf.saved_model.SERVING],
                                                 {"serving_default": sig})
        builder.save()
    assert tf.saved_model.contains_saved_model(export_dir)


def test_save_options_and_asset():
    tf1 = require_tensorflow()
    ours, theirs = tf.saved_model.SaveOptions(), tf1.saved_model.SaveOptions()
    for field in ("save_debug_info", "experimental_io_device", "experimental_image_format"):
        assert getattr(ours, field) == getattr(theirs, field)
    with pytest.raises(ValueError, match="experimental_variable_policy"):
        tf.saved_model.SaveOptions(experimental_variable_policy="bogus")
    with tf.Graph().as_default(), tf.Session() as sess:
        asset = tf.saved_model.Asset("vocab.txt")
        assert sess.run(asset.asset_path) == b"vocab.txt"
        assert tf.get_collection("asset_filepaths") == [asset.asset_path]


@pytest.mark.parametrize("name", ["save", "load_v2"])
def test_tf2_object_api_is_listed_unsupported(name):
    with pytest.raises(UnimplementedError, match="simple_save|tf.saved_model.load"):
        getattr(tf.saved_model, name)(None, None)
