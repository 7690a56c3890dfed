"""tf.quantization.experimental: option messages and the representative-dataset saver,
byte for byte against TensorFlow's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.data.tfrecord import tf_record_iterator
from flowmesh.protos.quantization_options import RepresentativeDataSample

qx = tf.quantization.experimental


def _options(module: Any) -> Any:
    method = module.QuantizationMethod(
        preset_method=module.QuantizationMethod.METHOD_STATIC_RANGE_INT8,
        quantization_component_specs=[module.QuantizationComponentSpec(
            quantization_component=module.QuantizationComponentSpec.COMPONENT_WEIGHT,
            tensor_type=module.QuantizationComponentSpec.TENSORTYPE_INT_8)])
    unit = module.UnitWiseQuantizationSpec(
        unit=[module.UnitWiseQuantizationSpec.QuantizationUnit(op_type="MatMul", node_name="dense",
                                                               func_name="f")],
        quantization_method=module.QuantizationMethod(
            preset_method=module.QuantizationMethod.METHOD_NO_QUANTIZE))
    options = module.QuantizationOptions(
        quantization_method=method, op_set=2, unit_wise_quantization_specs=[unit],
        tags=["serve"], signature_keys=["serving_default"], min_num_elements_for_weights=7,
        freeze_all_variables=False, enable_two_input_tensors=True)
    options.representative_datasets["serving_default"].tfrecord_file_path = "/tmp/x.tfrecord"
    options.calibration_options.calibration_method = 3
    options.calibration_options.calibration_parameters.num_bins = 256
    options.debugger_config.log_dir_path = "/tmp/log"
    return options


def test_messages_serialize_to_tensorflows_bytes() -> None:
    tft = pytest.importorskip("tensorflow")
    theirs = _options(tft.quantization.experimental).SerializeToString(deterministic=True)
    ours = _options(qx)
    assert ours.SerializeToString(deterministic=True) == theirs
    assert ours.HasField("freeze_all_variables") and not ours.HasField("enable_per_channel_quantization")
    assert qx.QuantizationOptions.FromString(theirs) == ours
    for name in ("QuantizationComponentSpec", "QuantizationMethod", "QuantizationOptions",
                 "UnitWiseQuantizationSpec"):
        ours_d, theirs_d = getattr(qx, name).DESCRIPTOR, getattr(tft.quantization.experimental, name).DESCRIPTOR
        assert ours_d.full_name == theirs_d.full_name
        assert [(f.name, f.number, f.type, f.has_presence) for f in ours_d.fields] == \
            [(f.name, f.number, f.type, f.has_presence) for f in theirs_d.fields]
        assert {e.name: [(v.name, v.number) for v in e.values] for e in ours_d.enum_types} == \
            {e.name: [(v.name, v.number) for v in e.values] for e in theirs_d.enum_types}


def _dataset() -> dict[str, list[dict[str, Any]]]:
    rng = np.random.default_rng(0)
    return {"serving_default": [{"x": rng.random((3, 3), dtype=np.float32),
                                 "ids": np.arange(4, dtype=np.int64)} for _ in range(3)],
            "other": [{"s": np.array([b"a", b"bc"])}]}


def test_saver_writes_tensorflows_records(tmp_path: Path) -> None:
    tft = pytest.importorskip("tensorflow")
    paths = {k: str(tmp_path / f"ours_{k}.tfrecord") for k in ("serving_default", "other")}
    files = qx.TfRecordRepresentativeDatasetSaver(paths).save(_dataset())
    assert {k: f.tfrecord_file_path for k, f in files.items()} == paths
    their_paths = {k: str(tmp_path / f"theirs_{k}.tfrecord") for k in paths}
    tft.quantization.experimental.TfRecordRepresentativeDatasetSaver(their_paths).save(_dataset())
    for key in paths:
        assert Path(paths[key]).read_bytes() == Path(their_paths[key]).read_bytes()
    assert len(list(tf_record_iterator(paths["serving_default"]))) == 3


def test_saver_evaluates_graph_tensors_and_checks_keys(tmp_path: Path) -> None:
    path = str(tmp_path / "r.tfrecord")
    with tf.Graph().as_default():
        sample = {"x": tf.constant([[1.0, 2.0]]) * 2.0}
        qx.TfRecordRepresentativeDatasetSaver({"k": path}).save({"k": [sample]})
    (record,) = tf_record_iterator(path)
    value = tf.make_ndarray(RepresentativeDataSample.FromString(record).tensor_proto_inputs["x"])
    np.testing.assert_array_equal(value, [[2.0, 4.0]])
    with pytest.raises(ValueError, match="path_map"):
        qx.TfRecordRepresentativeDatasetSaver({"k": path}).save({"missing": []})
    with pytest.raises(KeyError):
        qx.TfRecordRepresentativeDatasetSaver({"k": path}, {"j": ["x"]})
    with pytest.raises(KeyError, match="input keys"):
        qx.TfRecordRepresentativeDatasetSaver({"k": path}, {"k": {"y"}}).save({"k": [{"x": 1.0}]})
