"""tf.saved_model.signature_def_utils.MethodNameUpdater and
tf.saved_model.experimental.VariablePolicy, as TensorFlow's."""

from __future__ import annotations

import os
import shutil

import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow


def saved_model(export_dir: str) -> None:
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.identity(x * 2.0, name="y")
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})


def method_names(export_dir: str, tags=("serve",)) -> dict:
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, list(tags), export_dir)
        return {key: sig.method_name for key, sig in meta.signature_def.items()}


def test_replace_method_name_in_place_and_elsewhere(tmp_path):
    export_dir = str(tmp_path / "model")
    saved_model(export_dir)
    updater = tf.saved_model.signature_def_utils.MethodNameUpdater(export_dir)
    updater.replace_method_name("serving_default", "tensorflow/serving/classify", tags="serve")
    copy_dir = str(tmp_path / "copy")
    shutil.copytree(export_dir, copy_dir)
    updater.save(copy_dir)
    assert method_names(copy_dir) == {"serving_default": "tensorflow/serving/classify"}
    assert method_names(export_dir) == {"serving_default": "tensorflow/serving/predict"}
    updater.save()
    assert method_names(export_dir) == {"serving_default": "tensorflow/serving/classify"}
    with pytest.raises(ValueError, match="does not have a signature_def with key: 'other'"):
        updater.replace_method_name("other", "x")
    with pytest.raises(ValueError, match="could not be found in SavedModel"):
        updater.replace_method_name("serving_default", "x", tags=["train"])
    with pytest.raises(ValueError, match="`method_name` must be defined"):
        updater.replace_method_name("serving_default", "")
    with pytest.raises(tf.errors.NotFoundError):
        tf.saved_model.signature_def_utils.MethodNameUpdater(str(tmp_path / "missing"))


def test_tensorflow_reads_the_update(tmp_path):
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    export_dir = str(tmp_path / "model")
    saved_model(export_dir)
    tf.saved_model.signature_def_utils.MethodNameUpdater(export_dir).replace_method_name("serving_default", "m")
    updater = tf.saved_model.signature_def_utils.MethodNameUpdater(export_dir)
    updater.replace_method_name("serving_default", "m")
    updater.save()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        meta = tf1.saved_model.loader.load(sess, ["serve"], export_dir)
    assert meta.signature_def["serving_default"].method_name == "m"
    assert os.path.exists(os.path.join(export_dir, "saved_model.pb"))


def test_variable_policy():
    policy = tf.saved_model.experimental.VariablePolicy
    assert policy.from_obj(None) is policy.NONE and policy.from_obj("Save_Variable_Devices") is \
        policy.SAVE_VARIABLE_DEVICES
    assert policy.EXPAND_DISTRIBUTED_VARIABLES._save_variable_devices()
    assert not policy.SAVE_VARIABLE_DEVICES._expand_distributed_variables()
    assert tf.saved_model.SaveOptions(experimental_variable_policy="expand_distributed_variables") \
        .experimental_variable_policy is policy.EXPAND_DISTRIBUTED_VARIABLES
    with pytest.raises(ValueError, match="invalid VariablePolicy value: none"):
        policy.from_obj("none")
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    theirs = tf1.saved_model.experimental.VariablePolicy
    assert [(p.name, p.value) for p in policy] == [(p.name, p.value) for p in theirs]
