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
RAGGED = ("RaggedTensor is not implemented: flowmesh represents variable-length rows as SparseTensor "
          "(TensorFlow 1.x's form, e.g. tf.strings.split) or as padded dense tensors with lengths")
V1_CONTROL_FLOW = ("TensorFlow 1.x's low-level dataflow control-flow primitives (Enter/Exit/Switch/Merge frames) "
                   "do not exist in flowmesh, whose cond/while_loop are functional (If/While)")

JPEG_XL = ("JPEG XL decoding needs libjxl, which neither flowmesh nor Pillow (its image codec) bundles; "
           "convert the images to PNG or WebP")
LMDB = ("LMDB databases need the `lmdb` library, which flowmesh does not depend on; convert them to "
        "TFRecord files (tf.TFRecordReader, tf.data.TFRecordDataset)")


def unsupported(name: str, reason: str) -> Any:
    """A callable named ``name`` that raises ``UnimplementedError`` with ``reason``."""

    def stand_in(*args: Any, **kwargs: Any) -> NoReturn:
        raise UnimplementedError(None, None, f"tf.{name} is not supported by flowmesh: {reason}.")

    stand_in.__name__ = name.rsplit(".", 1)[-1]
    stand_in.__qualname__ = name
    stand_in.__doc__ = f"Not supported by flowmesh: {reason}."
    stand_in._flowmesh_unsupported = reason  # type: ignore[attr-defined]
    return stand_in
