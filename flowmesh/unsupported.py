"""Names of TensorFlow's API that flowmesh cannot support, each with the reason.

``unsupported(name, reason)`` returns a stand-in that raises ``UnimplementedError`` naming
the reason when called (or instantiated); it carries ``_flowmesh_unsupported = reason`` so
``flowmesh.testing.api_coverage`` lists it as unsupported instead of covered. The reasons
are listed in ``docs/api_coverage.md``.
"""

from __future__ import annotations

from typing import Any, NoReturn

from flowmesh.errors import UnimplementedError

TPU = "TPUs are not a flowmesh device (it runs on CPUs and CUDA GPUs through torch)"
LITE = "TensorFlow Lite is a separate runtime flowmesh does not target"
EAGER = "flowmesh runs TensorFlow 1.x graph mode; eager execution and tf.function are not implemented"
QUANTIZED = ("quantized dtypes (qint8, quint8, ...) and the ops on them are not implemented: flowmesh's "
             "kernels use torch's float and integer tensors")
NATIVE_LIBRARIES = ("flowmesh cannot load TensorFlow's native op/kernel/file-system libraries (.so files built "
                    "against TensorFlow's C++ runtime); define ops in Python with "
                    "flowmesh.core.registry.register_op and their torch kernels with flowmesh.kernels.contract.registry.kernel")
RAGGED = ("parsing into tf.RaggedTensor (io.RaggedFeature) and the string ops that return one for batched "
          "inputs are not implemented; tf.RaggedTensor itself is (build one with tf.RaggedTensor.from_sparse "
          "or tf.ragged.constant), and these ops have SparseTensor or padded forms (e.g. tf.strings.split)")
V1_CONTROL_FLOW = ("TensorFlow 1.x's low-level dataflow control-flow primitives (Enter/Exit/Switch/Merge frames) "
                   "do not exist in flowmesh, whose cond/while_loop are functional (If/While)")

JPEG_XL = ("JPEG XL decoding needs libjxl, which neither flowmesh nor Pillow (its image codec) bundles; "
           "convert the images to PNG or WebP")
MLIR = ("TensorFlow's MLIR converters take TensorFlow's C++ graph and SavedModel representations, which "
        "flowmesh does not have (its graphs are Python objects that export GraphDef protos)")
AUTOGRAPH = ("AutoGraph's source-to-source conversion of Python control flow into graph ops is not implemented "
             "(flowmesh runs TensorFlow 1.x graph mode); write tf.cond / tf.while_loop")
LMDB = ("LMDB databases need the `lmdb` library, which flowmesh does not depend on; convert them to "
        "TFRecord files (tf.TFRecordReader, tf.data.TFRecordDataset)")


class _StandIn:
    """A stand-in for an unsupported name: calling it, or any public attribute of it
    (``tf.lite.TFLiteConverter.from_saved_model``), raises ``UnimplementedError``."""

    def __init__(self, name: str, reason: str):
        self.__name__ = name.rsplit(".", 1)[-1]
        self.__qualname__ = name
        self.__doc__ = f"Not supported by flowmesh: {reason}."
        self._flowmesh_unsupported = reason
        self._name = name

    def _raise(self, what: str) -> NoReturn:
        raise UnimplementedError(None, None, f"tf.{what} is not supported by flowmesh: {self._flowmesh_unsupported}.")

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._raise(self._name)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        self._raise(f"{self._name}.{attr}")

    def __repr__(self) -> str:
        return f"<unsupported tf.{self._name}>"


def unsupported(name: str, reason: str) -> Any:
    """A stand-in named ``name`` that raises ``UnimplementedError`` with ``reason`` when
    called, or when any of its public attributes is read."""
    return _StandIn(name, reason)
