"""``tf.dtypes``: the dtype objects, ``as_dtype``, ``cast`` and ``saturate_cast``.

The quantized dtypes (``qint8 quint8 qint16 quint16 qint32``, ``QUANTIZED_DTYPES``) are
held as integers of the same width; ``tf.quantize``/``tf.dequantize`` convert to and from
float."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "dtypes")
