"""``tf.mlir.experimental``: not supported (TensorFlow's MLIR converters work on TensorFlow's C++ graph
representation, which flowmesh does not have)."""

from __future__ import annotations

from flowmesh.unsupported import MLIR, unsupported

convert_function = unsupported("mlir.experimental.convert_function", MLIR)
convert_graph_def = unsupported("mlir.experimental.convert_graph_def", MLIR)
convert_saved_model = unsupported("mlir.experimental.convert_saved_model", MLIR)
convert_saved_model_v1 = unsupported("mlir.experimental.convert_saved_model_v1", MLIR)
run_pass_pipeline = unsupported("mlir.experimental.run_pass_pipeline", MLIR)
tflite_to_tosa_bytecode = unsupported("mlir.experimental.tflite_to_tosa_bytecode", MLIR)
write_bytecode = unsupported("mlir.experimental.write_bytecode", MLIR)
