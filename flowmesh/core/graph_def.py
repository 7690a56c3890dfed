"""Graphs as TensorFlow's ``GraphDef`` protobuf: export, import and the attr/tensor codecs.

``graph_to_graph_def`` writes one ``NodeDef`` per op with TensorFlow's op type, inputs
(``op:k``, ``^op`` for control inputs), device and attrs, adding the type attrs TensorFlow's
kernels require and flowmesh's ops do not store (``T``, ``Tidx``, ``Tshape`` ...), so
TensorFlow imports the result and TensorBoard draws it. Function-valued attrs (the
branches of ``If``/``While``) are not exported (TensorFlow would need a function library):
such graphs still draw in TensorBoard, but TensorFlow cannot run them.

``import_graph_def`` creates ops from a ``GraphDef`` (TensorFlow's or flowmesh's) in the
default graph through the op registry, so shapes are inferred and unknown op types raise
``NotFoundError`` naming the node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError

PRODUCER = 1882  # a TensorFlow 2.x GraphDef version (TensorFlow 2.21 is 2474)

# Type attrs TensorFlow's OpDefs declare that flowmesh's ops leave implicit: attr <- input index.
_INPUT_TYPE_ATTRS: dict[str, dict[str, int]] = {
    **{op: {"T": 0, "Tidx": 1} for op in ("Sum", "Mean", "Max", "Min", "Prod", "Cumsum", "Cumprod")},
    **{op: {"Tidx": 1} for op in ("Any", "All")},
    "ArgMax": {"T": 0, "Tidx": 1}, "ArgMin": {"T": 0, "Tidx": 1},
    "Reshape": {"T": 0, "Tshape": 1}, "Transpose": {"T": 0, "Tperm": 1},
    "ExpandDims": {"T": 0, "Tdim": 1}, "Tile": {"T": 0, "Tmultiples": 1},
    "Pad": {"T": 0, "Tpaddings": 1}, "PadV2": {"T": 0, "Tpaddings": 1},
    "MirrorPad": {"T": 0, "Tpaddings": 1}, "Fill": {"index_type": 0, "T": 1},
    "Slice": {"T": 0, "Index": 1}, "StridedSlice": {"T": 0, "Index": 1},
    "GatherV2": {"Tparams": 0, "Tindices": 1, "Taxis": 2}, "ResourceGather": {"Tindices": 1},
    "ConcatV2": {"T": 0}, "Range": {"Tidx": 0}, "OneHot": {"TI": 0, "T": 2},
    "AssignVariableOp": {"dtype": 1}, "AssignAddVariableOp": {"dtype": 1},
    "AssignSubVariableOp": {"dtype": 1}, "Shape": {"T": 0}, "Size": {"T": 0}, "Rank": {"T": 0},
    "Select": {"T": 1}, "SelectV2": {"T": 1}, "SparseSoftmaxCrossEntropyWithLogits": {"T": 0, "Tlabels": 1},
    "BroadcastTo": {"T": 0, "Tidx": 1}, "Squeeze": {"T": 0}, "Split": {"T": 1}, "SplitV": {"T": 0, "Tlen": 1},
    # tf.sparse (ops/sparse_*.py); SparseConcat sets its T itself (the values follow N indices)
    **{op: {"T": 1} for op in ("SparseReorder", "SparseSlice", "SparseFillEmptyRows", "SparseReduceSum",
                               "SparseReduceMax", "SparseReduceSumSparse", "SparseReduceMaxSparse",
                               "SparseSparseMaximum", "SparseSparseMinimum", "SparseSoftmax")},
    "SparseReshape": {}, "SparseSplit": {"T": 2}, "SparseSliceGrad": {"T": 0}, "SparseAddGrad": {"T": 0},
    "SparseAdd": {"T": 1, "Treal": 6}, "SparseTensorDenseAdd": {"T": 1, "Tindices": 0},
    "SparseTensorDenseMatMul": {"T": 1, "Tindices": 0}, "SparseToDense": {"T": 2, "Tindices": 0},
    "DenseCountSparseOutput": {"T": 0, "output_type": 1}, "SparseCountSparseOutput": {"T": 1, "output_type": 3},
    # random ops: T is the shape's dtype
    **{op: {"T": 0} for op in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal")},
}
# Ops whose OpDef has no ``T`` (everything else with inputs gets T = its first input's dtype).
_NO_T = {
    "Const", "Placeholder", "PlaceholderWithDefault", "VarHandleOp", "ReadVariableOp", "NoOp",
    "Cast", "SaveV2", "RestoreV2", "MergeV2Checkpoints", "VarIsInitializedOp", "If", "While",
    "StatelessIf", "StatelessWhile", "DestroyResourceOp", "Any", "All", "LogicalAnd", "LogicalOr",
    "LogicalNot", "RandomUniform", "RandomStandardNormal", "TruncatedNormal", "StringJoin",
    "Assert", "ShardedFilename", "ShardedFilespec", "ScalarSummary", "HistogramSummary", "MergeSummary",
    "IsVariableInitialized", "Print", "PrintV2", "StringFormat", "Range", "SobolSample",
}
_COUNTED = {"ConcatV2": "N", "Pack": "N", "AddN": "N", "ShapeN": "N", "MergeSummary": "N"}


def _pb() -> Any:
    from flowmesh.protos import graph, tensor

    return graph, tensor


# --- tensors and shapes ----------------------------------------------------------------------------
def shape_to_proto(shape: Any) -> Any:
    """A ``TensorShapeProto`` (-1 for unknown dimensions, ``unknown_rank`` for unknown rank)."""
    proto = _pb()[1].TensorShapeProto()
    shape = TensorShape(shape) if not isinstance(shape, TensorShape) else shape
    if shape.rank is None:
        proto.unknown_rank = True
        return proto
    for d in shape.as_list():
        proto.dim.add(size=-1 if d is None else int(d))
    return proto


def shape_from_proto(proto: Any) -> TensorShape:
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else int(d.size) for d in proto.dim])


def make_tensor_proto(values: Any, dtype: Any = None, shape: Any = None, verify_shape: bool = False,
                      allow_broadcast: bool = False) -> Any:
    """``tf.make_tensor_proto``: a ``TensorProto`` holding ``values`` (bytes in
    ``tensor_content`` for numbers, ``string_val`` for strings).

    Raises:
        TypeError: a value NumPy cannot hold as ``dtype``.
        ValueError: ``values`` does not fit ``shape``.
    """
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if dtype is None:
        array = np.asarray(values)
        dtype = dtypes.string if array.dtype.kind in "SUO" else dtypes.as_dtype(array.dtype)
    array = np.asarray(values, dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
        if list(array.shape) != shape:
            if verify_shape or (array.size not in (1, int(np.prod(shape))) and not allow_broadcast):
                raise ValueError(f"Expected values of shape {shape}, got {list(array.shape)}")
            array = np.broadcast_to(array.reshape(-1) if array.size == int(np.prod(shape)) else array,
                                    shape if array.size == 1 else array.shape).reshape(shape)
    proto = _pb()[1].TensorProto(dtype=dtype.as_datatype_enum, tensor_shape=shape_to_proto(array.shape))
    if dtype == dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    return proto


_VAL_FIELDS = {"float32": "float_val", "float64": "double_val", "int32": "int_val", "int16": "int_val",
               "int8": "int_val", "uint8": "int_val", "uint16": "int_val", "int64": "int64_val",
               "bool": "bool_val", "uint32": "uint32_val", "uint64": "uint64_val",
               "complex64": "scomplex_val", "complex128": "dcomplex_val", "float16": "half_val",
               "bfloat16": "half_val"}


def make_ndarray(tensor: Any) -> np.ndarray:
    """``tf.make_ndarray``: the NumPy value of a ``TensorProto``.

    Raises:
        TypeError: a dtype flowmesh does not have.
    """
    dtype = dtypes.as_dtype(tensor.dtype)
    shape = [int(d.size) for d in tensor.tensor_shape.dim]
    count = int(np.prod(shape)) if shape else 1
    if dtype == dtypes.string:
        values = np.array(list(tensor.string_val), dtype=object)
    elif tensor.tensor_content:
        return np.frombuffer(tensor.tensor_content, dtype=np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
                             ).astype(dtype.as_numpy_dtype).reshape(shape)
    else:
        raw = list(getattr(tensor, _VAL_FIELDS[dtype.name]))
        if dtype.name in ("float16", "bfloat16"):
            values = np.array(raw, np.uint16).view(dtype.as_numpy_dtype)
        elif dtype.is_complex:
            values = np.array(raw[0::2], dtype.as_numpy_dtype) + 1j * np.array(raw[1::2])
        else:
            values = np.array(raw, dtype.as_numpy_dtype)
    if values.size == count:
        return values.reshape(shape)
    if values.size == 0:
        return np.zeros(shape, values.dtype if dtype != dtypes.string else object)
    padded = np.concatenate([values, np.repeat(values[-1:], count - values.size)])  # TF repeats the last
    return padded.reshape(shape)


# --- attrs -----------------------------------------------------------------------------------------
def attr_to_proto(value: Any) -> Any | None:
    """An ``AttrValue`` for a flowmesh attr value, or None when it has no GraphDef form."""
    graph_pb, _ = _pb()
    attr = graph_pb.AttrValue()
    if isinstance(value, bool):
        attr.b = value
    elif isinstance(value, (int, np.integer)):
        attr.i = int(value)
    elif isinstance(value, (float, np.floating)):
        attr.f = float(value)
    elif isinstance(value, str):
        attr.s = value.encode()
    elif isinstance(value, bytes):
        attr.s = value
    elif isinstance(value, dtypes.DType):
        attr.type = value.as_datatype_enum
    elif isinstance(value, TensorShape):
        attr.shape.CopyFrom(shape_to_proto(value))
    elif isinstance(value, np.ndarray):
        attr.tensor.CopyFrom(make_tensor_proto(value))
    elif isinstance(value, (list, tuple)):
        return _list_attr(attr, value)
    else:
        return None
    return attr


def _list_attr(attr: Any, values: Sequence[Any]) -> Any | None:
    attr.list.SetInParent()
    for v in values:
        if isinstance(v, bool):
            attr.list.b.append(v)
        elif isinstance(v, (int, np.integer)):
            attr.list.i.append(int(v))
        elif isinstance(v, (float, np.floating)):
            attr.list.f.append(float(v))
        elif isinstance(v, (str, bytes)):
            attr.list.s.append(v.encode() if isinstance(v, str) else v)
        elif isinstance(v, dtypes.DType):
            attr.list.type.append(v.as_datatype_enum)
        elif isinstance(v, TensorShape):
            attr.list.shape.add().CopyFrom(shape_to_proto(v))
        else:
            return None
    return attr


def attr_from_proto(attr: Any, node: str = "", key: str = "") -> Any:
    """The flowmesh value of an ``AttrValue`` (strings as ``str`` when they are UTF-8).

    Raises:
        InvalidArgumentError: a function-valued attr (flowmesh imports no function library).
    """
    kind = attr.WhichOneof("value")
    if kind == "s":
        return _text(attr.s)
    if kind in ("i", "f", "b"):
        return getattr(attr, kind)
    if kind == "type":
        return dtypes.as_dtype(attr.type)
    if kind == "shape":
        return shape_from_proto(attr.shape)
    if kind == "tensor":
        return make_ndarray(attr.tensor)
    if kind == "list":
        lst = attr.list
        if lst.s:
            return [_text(s) for s in lst.s]
        if lst.type:
            return [dtypes.as_dtype(t) for t in lst.type]
        if lst.shape:
            return [shape_from_proto(s) for s in lst.shape]
        for field in ("i", "f", "b"):
            if getattr(lst, field):
                return list(getattr(lst, field))
        return []
    if kind is None:
        return None
    raise InvalidArgumentError(None, None, f"Node '{node}': attr '{key}' is a {kind}, which flowmesh cannot "
                               "import (function libraries are not supported).")


def _text(raw: bytes) -> Any:
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return raw


# --- export ----------------------------------------------------------------------------------------
def _input_name(t: Any) -> str:
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


def op_to_node_def(op: Any) -> Any:
    """The ``NodeDef`` of ``op`` (TensorFlow's type attrs added, unexportable attrs left out)."""
    graph_pb, _ = _pb()
    node = graph_pb.NodeDef(name=op.name, op=op.type, device=op.device or "")
    node.input.extend([_input_name(t) for t in op.inputs] + [f"^{c.name}" for c in op.control_inputs])
    for key, value in sorted(op.attrs.items()):
        attr = attr_to_proto(value)
        if attr is not None and key != "_gradient_op_type":
            node.attr[key].CopyFrom(attr)
    _add_type_attrs(op, node)
    groups = [g for g in op.colocation_groups() if g != f"loc:@{op.name}".encode()]
    if groups:
        node.attr["_class"].list.s.extend(groups)
    return node


def _add_type_attrs(op: Any, node: Any) -> None:
    inputs = op.inputs
    for key, index in _INPUT_TYPE_ATTRS.get(op.type, {}).items():
        if key not in node.attr and index < len(inputs):
            node.attr[key].type = inputs[index].dtype.as_datatype_enum
    if op.type in _COUNTED and _COUNTED[op.type] not in node.attr:
        count = len(inputs) - (1 if op.type == "ConcatV2" else 0)
        node.attr[_COUNTED[op.type]].i = count
    if inputs and op.type not in _NO_T and "T" not in node.attr and op.type not in _INPUT_TYPE_ATTRS:
        if inputs[0].dtype != dtypes.resource:
            node.attr["T"].type = inputs[0].dtype.as_datatype_enum


_CHECKPOINT_LIST_ATTRS = ("tensor_names", "shape_and_slices")
_CHECKPOINT_DROPPED = ("tensor_names", "shape_and_slices", "shapes", "reshape", "targets")


def _checkpoint_nodes(op: Any) -> list[Any]:
    """``SaveV2`` / ``RestoreV2`` in TensorFlow's form: the names and slice specs flowmesh
    keeps as attrs become string ``Const`` inputs."""
    node = op_to_node_def(op)
    consts = []
    for key in _CHECKPOINT_LIST_ATTRS:
        const = _pb()[0].NodeDef(name=f"{op.name}/{key}", op="Const", device=node.device)
        const.attr["dtype"].type = dtypes.string.as_datatype_enum
        const.attr["value"].tensor.CopyFrom(make_tensor_proto(np.array(op.attrs[key], dtype=object),
                                                              dtype=dtypes.string))
        consts.append(const)
    for key in _CHECKPOINT_DROPPED:
        if key in node.attr:
            del node.attr[key]
    inputs = list(node.input)
    del node.input[:]
    node.input.extend([inputs[0], consts[0].name, consts[1].name, *inputs[1:]])
    return [*consts, node]


def graph_to_graph_def(graph: Any, ops: Sequence[Any] | None = None) -> Any:
    """The ``GraphDef`` of ``graph`` (or of ``ops``, in creation order)."""
    graph_pb, _ = _pb()
    graph_def = graph_pb.GraphDef()
    graph_def.versions.producer = PRODUCER
    for op in ops if ops is not None else graph.get_operations():
        if op.type in ("SaveV2", "RestoreV2"):
            graph_def.node.extend(_checkpoint_nodes(op))
        else:
            graph_def.node.add().CopyFrom(op_to_node_def(op))
    return graph_def


def as_graph_def_message(graph_def: Any) -> Any:
    """``graph_def`` as flowmesh's ``GraphDef`` class (from bytes, TensorFlow's message or ours)."""
    graph_pb, _ = _pb()
    if isinstance(graph_def, graph_pb.GraphDef):
        return graph_def
    if isinstance(graph_def, (bytes, bytearray)):
        return graph_pb.GraphDef.FromString(bytes(graph_def))
    if hasattr(graph_def, "SerializeToString"):
        return graph_pb.GraphDef.FromString(graph_def.SerializeToString())
    raise TypeError(f"graph_def must be a GraphDef proto, got {type(graph_def).__name__}")

