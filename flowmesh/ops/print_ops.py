"""``tf.print`` and ``tf.strings.format``: TensorFlow 2's printing, in graph mode.

``tf.print(*inputs)`` builds, as TensorFlow does, one ``StringFormat`` op (a template where
each tensor is a placeholder; Python values and structures are written with
``pprint.pformat``) feeding one ``PrintV2`` op that writes the text to ``output_stream``
(``sys.stderr`` by default, ``sys.stdout``, a ``tf.logging`` function or
``"file://path"``) each time it runs. Tensors are summarized as TensorFlow's ``print``:
NumPy-like nesting, the first and last ``summarize`` entries of each dimension."""

from __future__ import annotations

import os
import pprint
import random
import sys
from collections.abc import Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.sparse_tensor import SparseTensor
from flowmesh.ops import _structure as nest
from flowmesh.ops._builders import fixed, make_op, make_tensor, no_outputs

register_op("StringFormat", fixed(("string", [])), not_differentiable=True)
register_op("PrintV2", no_outputs, not_differentiable=True, stateful=True)


def string_format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3,
                  name: str | None = None) -> Tensor:
    """A scalar string: ``template`` with each ``placeholder`` replaced by the summary of the
    next tensor of ``inputs`` (``tf.strings.format``).

    Raises:
        ValueError: the number of placeholders differs from the number of tensors.
    """
    tensors = [convert_to_tensor(t) for t in (inputs if isinstance(inputs, (list, tuple)) else [inputs])]
    count = template.count(placeholder)
    if count != len(tensors):
        raise ValueError(f"tf.strings.format: {count} placeholder(s) {placeholder!r} in template "
                         f"{template!r} but {len(tensors)} input tensor(s)")
    attrs = {"template": template, "placeholder": placeholder, "summarize": int(summarize),
             "T": [t.dtype for t in tensors]}
    return make_tensor("StringFormat", tensors, attrs, name=name or "StringFormat")


def _stream_name(stream: Any) -> str:
    from flowmesh import tf_logging

    known = {id(sys.stdout): "stdout", id(sys.stderr): "stderr", id(tf_logging.info): "log(info)",
             id(tf_logging.warning): "log(warning)", id(tf_logging.error): "log(error)"}
    if id(stream) in known:
        return known[id(stream)]
    if isinstance(stream, str) and (stream.startswith("file://") or stream in known.values()):
        return stream
    raise ValueError(f"Unsupported output stream, logging level, or file. {stream!r}. Supported streams "
                     "are sys.stdout, sys.stderr, tf.logging.info/warning/error, or a 'file://path' string")


def _placeholder_for(text: str) -> str:
    placeholder, rng = "{}", random.Random(5)
    while placeholder in text:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def _template(inputs: Sequence[Any], sep: str) -> tuple[str, list[Tensor], str]:
    def is_tensor(x: Any) -> bool:
        return isinstance(x, (Tensor, SparseTensor)) or hasattr(x, "_as_graph_element")

    free = nest.map_structure(lambda x: "" if is_tensor(x) else x, list(inputs))
    placeholder = _placeholder_for(" ".join(pprint.pformat(x) for x in free))
    templates, tensors = [], []
    for item in inputs:
        parts = []
        for x in nest.flatten(item):
            if isinstance(x, SparseTensor):
                raise TypeError("tf.print of a SparseTensor: print its indices, values and dense_shape")
            if is_tensor(x):
                tensors.append(convert_to_tensor(x))
                parts.append(placeholder)
            else:
                parts.append(x)
        templates.append(item if isinstance(item, str) else pprint.pformat(nest.pack_sequence_as(item, parts)))
    template = sep.join(templates).replace(f"'{placeholder}'", placeholder)
    return template, tensors, placeholder


def print_v2(*inputs: Any, **kwargs: Any) -> Operation:
    """Prints ``inputs`` (tensors, Python values and structures of them) when the returned
    op runs (``tf.print``).

    Args:
        *inputs: what to print, separated by ``sep``.
        output_stream: ``sys.stderr`` (default), ``sys.stdout``, ``tf.logging.info`` /
            ``warning`` / ``error``, or ``"file://path"`` (appended to).
        summarize: entries printed at each end of every dimension (``-1``: all).
        sep: separator (default ``" "``); end: appended (default ``os.linesep``).
        name: the op name.

    Returns:
        The ``PrintV2`` op (run it, or add it to control dependencies).

    Raises:
        ValueError: an unknown keyword argument or output stream.
    """
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize, sep = kwargs.pop("summarize", 3), kwargs.pop("sep", " ")
    end, name = kwargs.pop("end", os.linesep), kwargs.pop("name", None)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {kwargs}")
    stream = _stream_name(output_stream)
    with name_scope(name, "print"):
        single = inputs[0] if len(inputs) == 1 else None
        if isinstance(single, Tensor) and single.dtype == dtypes.string and single.shape.rank == 0:
            text = single
        else:
            template, tensors, placeholder = _template(inputs, sep)
            text = string_format(template, tensors, placeholder, summarize, name="StringFormat")
        return make_op("PrintV2", [text], {"output_stream": stream, "end": end}, name="PrintV2")
