"""``tf.quantization.experimental``: TensorFlow's SavedModel quantizer, stand-ins only."""

from flowmesh.unsupported import MLIR, unsupported

_QUANTIZER = MLIR + " (tf.quantization.experimental quantizes TF2 SavedModels with MLIR passes configured by its option protos)"

QuantizationComponentSpec = unsupported("quantization.experimental.QuantizationComponentSpec", _QUANTIZER)
QuantizationMethod = unsupported("quantization.experimental.QuantizationMethod", _QUANTIZER)
QuantizationOptions = unsupported("quantization.experimental.QuantizationOptions", _QUANTIZER)
TfRecordRepresentativeDatasetSaver = unsupported("quantization.experimental.TfRecordRepresentativeDatasetSaver",
                                                 _QUANTIZER)
UnitWiseQuantizationSpec = unsupported("quantization.experimental.UnitWiseQuantizationSpec", _QUANTIZER)
quantize_saved_model = unsupported("quantization.experimental.quantize_saved_model", _QUANTIZER)
