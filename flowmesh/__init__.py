"""flowmesh: TensorFlow 1.x graph-mode distributed training, in Python, on torch kernels.

``import flowmesh as tf`` runs ``tf.compat.v1`` graph-mode code.
"""

from __future__ import annotations

# First: sets OpenMP's wait policy before anything below loads torch (read once, at load).
import flowmesh.runtime.threading_policy  # noqa: F401, I001
import flowmesh.collective.kernels  # noqa: F401 - registers the collective kernels
import flowmesh.kernels  # noqa: F401 - registers kernels
import flowmesh.ops  # noqa: F401 - registers ops
from flowmesh import errors
from flowmesh.ops.gradients_impl import gradients, hessians
from flowmesh.core.convert import convert_to_tensor, register_tensor_conversion_function
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from flowmesh.core.graph import (
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    add_to_collection,
    add_to_collections,
    colocate_with,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    name_scope,
    reset_default_graph,
)
from flowmesh.core.indexed_slices import IndexedSlices, IndexedSlicesValue
from flowmesh.core.registry import NotDifferentiable, RegisterGradient, no_gradient
from flowmesh.core.shapes import Dimension, TensorShape
from flowmesh.ops.gather_ops import batch_gather, boolean_mask, gather
from flowmesh.ops.array_ops import (
    concat,
    expand_dims,
    fill,
    identity,
    newaxis,
    ones,
    ones_like,
    rank,
    reshape,
    shape,
    size,
    split,
    squeeze,
    stack,
    stop_gradient,
    transpose,
    unstack,
    zeros,
    zeros_like,
)
from flowmesh.ops.strided_slice_ops import strided_slice
from flowmesh.ops.constant_op import constant, placeholder, placeholder_with_default
from flowmesh.ops.data_flow_ops import (
    ConditionalAccumulator,
    ConditionalAccumulatorBase,
    FIFOQueue,
    QueueBase,
    SparseConditionalAccumulator,
)
from flowmesh.ops.queue_kinds import PaddingFIFOQueue, PriorityQueue, RandomShuffleQueue
from flowmesh.ops.reader_ops import (
    FixedLengthRecordReader,
    IdentityReader,
    ReaderBase,
    TFRecordReader,
    TextLineReader,
    WholeFileReader,
)
from flowmesh.ops.reader_ops import LMDBReader
from flowmesh.ops.cond import case, cond
from flowmesh.ops.control_flow_ops import group, no_op, tuple, with_dependencies
from flowmesh.ops.logging_ops import Assert, Print
from flowmesh.ops.while_loop import while_loop
from flowmesh.ops.tensor_array import TensorArray
from flowmesh.ops.critical_section_ops import CriticalSection
from flowmesh.ops.batch_ops import nondifferentiable_batch_function
from flowmesh.ops.random_index_shuffle_ops import random_index_shuffle
from flowmesh.ops.functional_ops import foldl, foldr, map_fn, scan
from flowmesh.ops.lookup_ops import tables_initializer
from flowmesh.ops.script_ops import numpy_function, py_func
from flowmesh.ops.init_ops import (
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    orthogonal_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from flowmesh.ops.math_ops import (
    abs,
    add,
    add_n,
    ceil,
    cos,
    div,
    div_no_nan,
    divide,
    equal,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    reciprocal,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    squared_difference,
    subtract,
    tanh,
    truediv,
)
from flowmesh.ops.cast_ops import cast, saturate_cast, to_float, to_int32, to_int64
from flowmesh.ops.clip_ops import clip_by_value
from flowmesh.ops.range_ops import invert_permutation, range
from flowmesh.ops.select_ops import where, where_v2
from flowmesh.ops.random_ops import (
    multinomial,
    random_normal,
    random_shuffle,
    random_uniform,
    set_random_seed,
    truncated_normal,
)
from flowmesh.ops.reduction_ops import (
    argmax,
    argmin,
    broadcast_to,
    cumprod,
    cumsum,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.segment_ops import unsorted_segment_sum
from flowmesh.ops.cast_ops import to_bfloat16, to_double
from flowmesh.ops.clip_ops import (
    clip_by_average_norm,
    clip_by_global_norm,
    clip_by_norm,
    global_norm,
)
from flowmesh.ops.einsum_ops import einsum
from flowmesh.ops.embedding_ops import dynamic_partition, dynamic_stitch
from flowmesh.ops.linalg_ops import (
    diag,
    diag_part,
    eye,
    matrix_band_part,
    matrix_diag,
    matrix_diag_part,
    matrix_set_diag,
    matrix_transpose,
    norm,
    tensordot,
    trace,
)
from flowmesh.ops.linalg_solve_ops import matrix_inverse, matrix_solve
from flowmesh.ops.manip_ops import (
    broadcast_dynamic_shape,
    broadcast_static_shape,
    ensure_shape,
    meshgrid,
    one_hot,
    pad,
    reverse,
    reverse_sequence,
    repeat,
    reverse_v2,
    roll,
    sequence_mask,
    shape_n,
    slice,
    tile,
    unique,
    unique_with_counts,
)
from flowmesh.ops.nd_index_ops import (
    gather_nd,
    scatter_nd,
    tensor_scatter_nd_add,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from flowmesh.ops.math_ops import (
    accumulate_n,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cosh,
    digamma,
    erf,
    erfc,
    lgamma,
    polygamma,
    realdiv,
    rint,
    scalar_mul,
    sinh,
    tan,
    truncatediv,
    truncatemod,
)
from flowmesh.ops.nd_index_ops import tensor_scatter_add, tensor_scatter_sub, tensor_scatter_update
from flowmesh.ops.range_ops import lin_space, linspace
from flowmesh.ops.sort_ops import argsort, sort
from flowmesh.ops.string_ops import (
    as_string,
    reduce_join,
    regex_replace,
    string_join,
    string_to_number,
    substr,
)
from flowmesh.ops.reduction_ops import count_nonzero, reduce_logsumexp
from flowmesh.ops.segment_ops import (
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
    unsorted_segment_max,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
)
from flowmesh.ops.state_ops import (
    assign,
    assign_add,
    assign_sub,
    scatter_add,
    scatter_sub,
    scatter_update,
)
from flowmesh.ops.variable_scope import (
    AUTO_REUSE,
    VariableScope,
    create_partitioned_variables,
    get_local_variable,
    get_variable,
    get_variable_scope,
    variable_scope,
)
from flowmesh.ops.partitioned_variables import (
    fixed_size_partitioner,
    min_max_variable_partitioner,
    variable_axis_size_partitioner,
)
from flowmesh.ops.variables import (
    Variable,
    all_variables,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    model_variables,
    moving_average_variables,
    report_uninitialized_variables,
    trainable_variables,
    variables_initializer,
)
from flowmesh.runtime.options import ConfigProto, GPUOptions, GraphOptions, RunMetadata, RunOptions
from flowmesh.runtime.session import (
    InteractiveSession,
    Session,
    get_default_session,
)
import flowmesh.distributed.client  # noqa: E402, F401 - registers the grpc:// session targets

__version__ = "0.1.0"
from flowmesh import train
from flowmesh import summary
from flowmesh.summary import Event, HistogramProto, SessionLog, Summary, SummaryMetadata
from flowmesh import linalg, math, strings
from flowmesh import nn
from flowmesh import losses
from flowmesh import metrics
from flowmesh import feature_column
from flowmesh import estimator
from flowmesh import saved_model
from flowmesh import test
from flowmesh import distribute
from flowmesh import app, flags, gfile
from flowmesh import tf_logging as logging
from flowmesh.execution_mode import (
    disable_eager_execution,
    disable_v2_behavior,
    enable_eager_execution,
    enable_v2_behavior,
    executing_eagerly,
)
from flowmesh import compat
from flowmesh import data, io, python_io, queue, sparse
from flowmesh.core.sparse_tensor import SparseTensor, SparseTensorValue
from flowmesh.ops.parsing_config import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
)
from flowmesh.ops.parsing_ops import (
    parse_example,
    parse_single_example,
    parse_single_sequence_example,
)
from flowmesh.ops.sparse_ops import sparse_tensor_to_dense, sparse_to_dense
from flowmesh.ops.sparse_top_level import (  # noqa: F401 - TF1's top-level sparse_* spellings
    convert_to_tensor_or_sparse_tensor,
    sparse_add, sparse_concat, sparse_fill_empty_rows, sparse_mask, sparse_matmul, sparse_maximum,
    sparse_merge, sparse_minimum, sparse_placeholder, sparse_reduce_max, sparse_reduce_max_sparse,
    sparse_reduce_sum, sparse_reduce_sum_sparse, sparse_reorder, sparse_reset_shape, sparse_reshape,
    sparse_retain, sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum, sparse_slice,
    sparse_softmax, sparse_split, sparse_tensor_dense_matmul, sparse_to_indicator, sparse_transpose)
from flowmesh.ops.decode_ops import decode_csv, decode_raw
from flowmesh.ops.byte_decode_ops import decode_compressed, decode_json_example
from flowmesh.ops.string_hash_ops import string_to_hash_bucket, string_to_hash_bucket_strong
from flowmesh.ops.sparse_serialize_ops import (
    deserialize_many_sparse,
    serialize_many_sparse,
    serialize_sparse,
)
from flowmesh import image
from flowmesh.image import random_crop
from flowmesh.core.type_spec import SparseTensorSpec, TensorSpec
from flowmesh.ops.variable_creator import variable_creator_scope
from flowmesh import graph_util
from flowmesh import bitwise, debugging, dtypes, ragged, random, sets, signal
from flowmesh import autograph, distributions, lite, lookup, manip, mixed_precision, mlir, nest, quantization, resource_loader, spectral, tpu, user_ops, version
from flowmesh import audio, experimental, profiler, sysconfig, types, xla
from flowmesh.ops.complex_ops import angle, complex, conj, imag, real
from flowmesh.ops.fft_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d
from flowmesh.ops.nn_impl import log_sigmoid
from flowmesh.ops.linalg_decomp_ops import (
    cholesky,
    cholesky_solve,
    cross,
    matrix_solve_ls,
    matrix_triangular_solve,
    self_adjoint_eig,
    self_adjoint_eigvals,
)
from flowmesh.ops.linalg_decomp_ops import det as matrix_determinant
from flowmesh.framework_flags import (
    GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER,
    AggregationMethod,
    UnconnectedGradients,
    control_flow_v2_enabled,
    disable_control_flow_v2,
    disable_resource_variables,
    enable_control_flow_v2,
    enable_resource_variables,
    no_regularizer,
    resource_variables_enabled,
)
from flowmesh.ops.random_ops import get_seed
from flowmesh.ops.string_split_ops import string_split
from flowmesh.ops.state_ops import (
    scatter_div,
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_nd_add,
    scatter_nd_sub,
    scatter_nd_update,
)
from flowmesh.ops.file_io_ops import (
    decode_base64,
    encode_base64,
    matching_files,
    parse_tensor,
    read_file,
    serialize_tensor,
    write_file,
)
from flowmesh.ops.string_ops import string_to_hash_bucket_fast
from flowmesh.ops.string_ops import strip as string_strip
from flowmesh.ops.random_dist_ops import random_gamma, random_poisson
from flowmesh.ops.search_ops import (
    bincount,
    confusion_matrix,
    searchsorted,
    setdiff1d,
    unravel_index,
)
from flowmesh.ops.segment_ops import unsorted_segment_mean
from flowmesh.ops.space_batch_ops import (
    batch_to_space,
    batch_to_space_nd,
    depth_to_space,
    space_to_batch,
    space_to_batch_nd,
    space_to_depth,
)
from flowmesh.ops.special_math_ops import (
    arg_max,
    arg_min,
    floor_div,
    lbeta,
    to_complex64,
    to_complex128,
)
from flowmesh.ops.tensor_util import (
    dimension_at_index,
    dimension_value,
    get_static_value,
    identity_n,
    initialize_all_tables,
    initialize_local_variables,
    initialize_variables,
    is_tensor,
)
from flowmesh.ops.check_ops import (
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_proper_iterable,
    assert_rank,
    assert_rank_at_least,
    assert_rank_in,
    assert_same_float_dtype,
    assert_scalar,
    assert_type,
    check_numerics,
    is_non_decreasing,
    is_numeric_tensor,
    is_strictly_increasing,
    verify_tensor_all_finite,
)
from flowmesh.core.graph_def import make_ndarray, make_tensor_proto
from flowmesh.core.importer import import_graph_def
from flowmesh.protos.graph import AttrValue, GraphDef, NameAttrList, NodeDef, VersionDef
from flowmesh.protos.meta_graph import MetaGraphDef
from flowmesh.protos.tensor import TensorProto, TensorShapeProto
# tf.linalg / tf.math / tf.signal names TensorFlow also puts at the top level
from flowmesh.ops.fftnd_ops import raw_fftnd as fftnd
from flowmesh.ops.fftnd_ops import raw_ifftnd as ifftnd
from flowmesh.ops.fftnd_ops import raw_irfftnd as irfftnd
from flowmesh.ops.fftnd_ops import raw_rfftnd as rfftnd
from flowmesh.ops.special_math_ops import betainc, igamma, igammac, zeta
from flowmesh.ops.matrix_function_ops import sqrtm as matrix_square_root
from flowmesh.ops.svd_qr_ops import qr, svd
from flowmesh import keras, layers
from flowmesh import config, config_api as _config_api
from flowmesh import initializers
# API breadth, top level (issue 20): framework names, scopes, small ops.
from flowmesh.build_info import (
    COMPILER_VERSION,
    CXX11_ABI_FLAG,
    CXX_VERSION,
    GIT_VERSION,
    MONOLITHIC_BUILD,
    VERSION,
)
from flowmesh.core.registry import no_gradient as NoGradient  # noqa: N812 - TensorFlow's spelling
from flowmesh.errors import OpError
from flowmesh.execution_mode import executing_eagerly_outside_functions
from flowmesh.framework_flags import (
    disable_tensor_equality,
    disable_v2_tensorshape,
    enable_tensor_equality,
    enable_v2_tensorshape,
)
from flowmesh.ops.bitcast_ops import bitcast
from flowmesh.ops.session_ops import delete_session_tensor, get_session_handle, get_session_tensor
from flowmesh.ops.edit_distance_ops import edit_distance
from flowmesh.ops.fingerprint_ops import fingerprint
from flowmesh.ops.patches_ops import extract_image_patches, extract_volume_patches
from flowmesh.ops.nn_compositions import (
    approx_top_k,
    conv,
    conv2d_backprop_filter_v2,
    conv2d_backprop_input_v2,
)
from flowmesh.core.type_spec import (
    IndexedSlicesSpec,
    NoneTensorSpec,
    OptionalSpec,
    TensorArraySpec,
    TypeSpec,
)
from flowmesh.type_specs import type_spec_from_value
from flowmesh.core.dtypes import QUANTIZED_DTYPES, qint8, qint16, qint32, quint8, quint16
from flowmesh.ops.fake_quant_ops import (
    fake_quant_with_min_max_args,
    fake_quant_with_min_max_args_gradient,
    fake_quant_with_min_max_vars,
    fake_quant_with_min_max_vars_gradient,
    fake_quant_with_min_max_vars_per_channel,
    fake_quant_with_min_max_vars_per_channel_gradient,
)
from flowmesh.ops.quantize_ops import dequantize, quantize, quantize_v2, quantized_concat
from flowmesh.ops.custom_gradient import custom_gradient, grad_pass_through, recompute_grad
from flowmesh.ops.gradient_tape import GradientTape
from flowmesh.ops.module import Module
from flowmesh.ops.print_ops import print_v2 as print  # noqa: A001 - TensorFlow's name
from flowmesh.ops.script_ops import py_function
from flowmesh.ops.template import make_template
from flowmesh.ops.check_ops import add_check_numerics_ops
from flowmesh.ops.functional_ops import vectorized_map
from flowmesh.ops.hint_ops import check_pinned, guarantee_const, parallel_stack
from flowmesh.ops.histogram_ops import histogram_fixed_width, histogram_fixed_width_bins
from flowmesh.ops.init_ops import uniform_unit_scaling_initializer
from flowmesh.ops.nd_index_ops import tensor_scatter_nd_max, tensor_scatter_nd_min
from flowmesh.ops.ragged_fill_empty_rows import ragged_fill_empty_rows, ragged_fill_empty_rows_grad
from flowmesh.ops.ragged_tensor import RaggedTensor
from flowmesh.ops.ragged_tensor_spec import RaggedTensorSpec
from flowmesh.ops.scopes import container, init_scope, op_scope, variable_op_scope
from flowmesh.ops.space_batch_ops import required_space_to_batch_paddings
from flowmesh.ops.state_ops import batch_scatter_update, count_up_to
from flowmesh.ops.switch_case import switch_case
from flowmesh.ops.tensor_util import convert_to_tensor_or_indexed_slices, is_symbolic_tensor
from flowmesh.ops.time_ops import timestamp
from flowmesh.ops.variable_policies import VariableAggregation, VariableSynchronization
from flowmesh.ops.variables import assert_variables_initialized
from flowmesh.protos.config import LogMessage, OptimizerOptions
from flowmesh.protos.meta_graph import TensorInfo
from flowmesh.tf_logging import get_logger
from flowmesh.unsupported import (
    EAGER as _EAGER,
    NATIVE_LIBRARIES as _NATIVE,
    unsupported as _unsupported,
)

load_file_system_library = _unsupported("load_file_system_library", _NATIVE)
load_library = _unsupported("load_library", _NATIVE)
load_op_library = _unsupported("load_op_library", _NATIVE)
wrap_function = _unsupported("wrap_function", _EAGER)
function = _unsupported("function", _EAGER)
_config_api.install()  # tf.config: the settings module carries tf.config's names too
