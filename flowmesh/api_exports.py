"""The public API: each name of each ``tf.*`` namespace, declared once.

``EXPORTS`` maps a namespace (``""`` is the top level, ``"io.gfile"`` is ``tf.io.gfile``) to
its sources in import order: ``(module, names)``, where ``names`` is a space-separated list.
A name ``alias=name`` exports the source's ``name`` as ``alias``; a name that is not an
attribute of the module is its submodule (as in ``from module import name``). The source
``unsupported:REASON`` lists stand-ins from :func:`flowmesh.unsupported.unsupported` with the
reason constant ``flowmesh.unsupported.REASON``.

The namespace module itself (``flowmesh/math.py`` for ``tf.math``) calls
:func:`flowmesh.api_builder.fill_namespace` to take these names, and defines what it defines
(a namespace without sources here defines all its names); a name it imports for its own use
stays an import there unless TensorFlow has it in that namespace. The order of the sources is
the order in which the namespace imported them, which keeps start-up free of import circles.
``tf.keras`` and its namespaces are here too (``"keras.layers"``).
"""

from __future__ import annotations

EXPORTS: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("flowmesh", "errors"),
        ("flowmesh.ops.gradients_impl", "gradients hessians"),
        ("flowmesh.core.convert", "convert_to_tensor register_tensor_conversion_function"),
        ("flowmesh.core.device_spec", "DeviceSpec"),
        ("flowmesh.core.dtypes",
         "DType as_dtype bfloat16 bool complex64 complex128 double float16 float32 float64 half int8"
         " int16 int32 int64 resource string uint8 uint16 uint32 uint64 variant"),
        ("flowmesh.core.graph",
         "Graph GraphKeys Operation Tensor add_to_collection add_to_collections colocate_with"
         " control_dependencies device get_collection get_collection_ref get_default_graph name_scope"
         " reset_default_graph"),
        ("flowmesh.core.indexed_slices", "IndexedSlices IndexedSlicesValue"),
        ("flowmesh.core.registry", "NotDifferentiable RegisterGradient no_gradient"),
        ("flowmesh.core.shapes", "Dimension TensorShape"),
        ("flowmesh.ops.gather_ops", "batch_gather boolean_mask gather"),
        ("flowmesh.ops.array_ops",
         "concat expand_dims fill identity newaxis ones ones_like rank reshape shape size split squeeze"
         " stack stop_gradient transpose unstack zeros zeros_like"),
        ("flowmesh.ops.strided_slice_ops", "strided_slice"),
        ("flowmesh.ops.constant_op", "constant placeholder placeholder_with_default"),
        ("flowmesh.ops.data_flow_ops",
         "ConditionalAccumulator ConditionalAccumulatorBase FIFOQueue QueueBase"
         " SparseConditionalAccumulator"),
        ("flowmesh.ops.queue_kinds", "PaddingFIFOQueue PriorityQueue RandomShuffleQueue"),
        ("flowmesh.ops.reader_ops",
         "FixedLengthRecordReader IdentityReader ReaderBase TFRecordReader TextLineReader WholeFileReader"
         " LMDBReader"),
        ("flowmesh.ops.cond", "case cond"),
        ("flowmesh.ops.control_flow_ops", "group no_op tuple with_dependencies"),
        ("flowmesh.ops.logging_ops", "Assert Print"),
        ("flowmesh.ops.while_loop", "while_loop"),
        ("flowmesh.ops.tensor_array", "TensorArray"),
        ("flowmesh.ops.critical_section_ops", "CriticalSection"),
        ("flowmesh.ops.batch_ops", "nondifferentiable_batch_function"),
        ("flowmesh.ops.random_index_shuffle_ops", "random_index_shuffle"),
        ("flowmesh.ops.functional_ops", "foldl foldr map_fn scan"),
        ("flowmesh.ops.lookup_ops", "tables_initializer"),
        ("flowmesh.ops.script_ops", "numpy_function py_func"),
        ("flowmesh.ops.init_ops",
         "constant_initializer glorot_normal_initializer glorot_uniform_initializer ones_initializer"
         " orthogonal_initializer random_normal_initializer random_uniform_initializer"
         " truncated_normal_initializer variance_scaling_initializer zeros_initializer"),
        ("flowmesh.ops.math_ops",
         "abs add add_n ceil cos div div_no_nan divide equal exp expm1 floor floordiv floormod greater"
         " greater_equal is_finite is_inf is_nan less less_equal log log1p logical_and logical_not"
         " logical_or logical_xor maximum minimum mod multiply negative not_equal pow reciprocal round"
         " rsqrt sigmoid sign sin sqrt square squared_difference subtract tanh truediv"),
        ("flowmesh.ops.cast_ops", "cast saturate_cast to_float to_int32 to_int64"),
        ("flowmesh.ops.clip_ops", "clip_by_value"),
        ("flowmesh.ops.range_ops", "invert_permutation range"),
        ("flowmesh.ops.select_ops", "where where_v2"),
        ("flowmesh.ops.random_ops",
         "multinomial random_normal random_shuffle random_uniform set_random_seed truncated_normal"),
        ("flowmesh.ops.reduction_ops",
         "argmax argmin broadcast_to cumprod cumsum reduce_all reduce_any reduce_max reduce_mean"
         " reduce_min reduce_prod reduce_sum"),
        ("flowmesh.ops.linalg_ops", "matmul"),
        ("flowmesh.ops.segment_ops", "unsorted_segment_sum"),
        ("flowmesh.ops.cast_ops", "to_bfloat16 to_double"),
        ("flowmesh.ops.clip_ops", "clip_by_average_norm clip_by_global_norm clip_by_norm global_norm"),
        ("flowmesh.ops.einsum_ops", "einsum"),
        ("flowmesh.ops.embedding_ops", "dynamic_partition dynamic_stitch"),
        ("flowmesh.ops.linalg_ops",
         "diag diag_part eye matrix_band_part matrix_diag matrix_diag_part matrix_set_diag"
         " matrix_transpose norm tensordot trace"),
        ("flowmesh.ops.linalg_solve_ops", "matrix_inverse matrix_solve"),
        ("flowmesh.ops.manip_ops",
         "broadcast_dynamic_shape broadcast_static_shape ensure_shape meshgrid one_hot pad reverse"
         " reverse_sequence repeat reverse_v2 roll sequence_mask shape_n slice tile unique"
         " unique_with_counts"),
        ("flowmesh.ops.nd_index_ops",
         "gather_nd scatter_nd tensor_scatter_nd_add tensor_scatter_nd_sub tensor_scatter_nd_update"),
        ("flowmesh.ops.math_ops",
         "accumulate_n acos acosh asin asinh atan atan2 atanh cosh digamma erf erfc lgamma polygamma"
         " realdiv rint scalar_mul sinh tan truncatediv truncatemod"),
        ("flowmesh.ops.nd_index_ops", "tensor_scatter_add tensor_scatter_sub tensor_scatter_update"),
        ("flowmesh.ops.range_ops", "lin_space linspace"),
        ("flowmesh.ops.sort_ops", "argsort sort"),
        ("flowmesh.ops.string_ops",
         "as_string reduce_join regex_replace string_join string_to_number substr"),
        ("flowmesh.ops.reduction_ops", "count_nonzero reduce_logsumexp"),
        ("flowmesh.ops.segment_ops",
         "segment_max segment_mean segment_min segment_prod segment_sum unsorted_segment_max"
         " unsorted_segment_min unsorted_segment_prod unsorted_segment_sqrt_n"),
        ("flowmesh.ops.state_ops", "assign assign_add assign_sub scatter_add scatter_sub scatter_update"),
        ("flowmesh.ops.variable_scope",
         "AUTO_REUSE VariableScope create_partitioned_variables get_local_variable get_variable"
         " get_variable_scope variable_scope"),
        ("flowmesh.ops.partitioned_variables",
         "fixed_size_partitioner min_max_variable_partitioner variable_axis_size_partitioner"),
        ("flowmesh.ops.variables",
         "Variable all_variables global_variables global_variables_initializer initialize_all_variables"
         " is_variable_initialized local_variables local_variables_initializer model_variables"
         " moving_average_variables report_uninitialized_variables trainable_variables"
         " variables_initializer"),
        ("flowmesh.runtime.options", "ConfigProto GPUOptions GraphOptions RunMetadata RunOptions"),
        ("flowmesh.runtime.session", "InteractiveSession Session get_default_session"),
        ("flowmesh", "train summary"),
        ("flowmesh.summary", "Event HistogramProto SessionLog Summary SummaryMetadata"),
        ("flowmesh",
         "linalg math strings nn losses metrics feature_column estimator saved_model test distribute app"
         " flags gfile logging=tf_logging"),
        ("flowmesh.execution_mode",
         "disable_eager_execution disable_v2_behavior enable_eager_execution enable_v2_behavior"
         " executing_eagerly"),
        ("flowmesh", "compat data io python_io queue sparse"),
        ("flowmesh.core.sparse_tensor", "SparseTensor SparseTensorValue"),
        ("flowmesh.ops.parsing_config",
         "FixedLenFeature FixedLenSequenceFeature SparseFeature VarLenFeature"),
        ("flowmesh.ops.parsing_ops", "parse_example parse_single_example parse_single_sequence_example"),
        ("flowmesh.ops.sparse_ops", "sparse_tensor_to_dense sparse_to_dense"),
        ("flowmesh.ops.sparse_top_level",
         "convert_to_tensor_or_sparse_tensor sparse_add sparse_concat sparse_fill_empty_rows sparse_mask"
         " sparse_matmul sparse_maximum sparse_merge sparse_minimum sparse_placeholder sparse_reduce_max"
         " sparse_reduce_max_sparse sparse_reduce_sum sparse_reduce_sum_sparse sparse_reorder"
         " sparse_reset_shape sparse_reshape sparse_retain sparse_segment_mean sparse_segment_sqrt_n"
         " sparse_segment_sum sparse_slice sparse_softmax sparse_split sparse_tensor_dense_matmul"
         " sparse_to_indicator sparse_transpose"),
        ("flowmesh.ops.decode_ops", "decode_csv decode_raw"),
        ("flowmesh.ops.byte_decode_ops", "decode_compressed decode_json_example"),
        ("flowmesh.ops.string_hash_ops", "string_to_hash_bucket string_to_hash_bucket_strong"),
        ("flowmesh.ops.sparse_serialize_ops",
         "deserialize_many_sparse serialize_many_sparse serialize_sparse"),
        ("flowmesh", "image"),
        ("flowmesh.image", "random_crop"),
        ("flowmesh.core.type_spec", "SparseTensorSpec TensorSpec"),
        ("flowmesh.ops.variable_creator", "variable_creator_scope"),
        ("flowmesh",
         "graph_util bitwise debugging dtypes ragged random sets signal autograph distributions lite"
         " lookup manip mixed_precision mlir nest quantization resource_loader spectral tpu user_ops"
         " version audio experimental profiler sysconfig types xla"),
        ("flowmesh.ops.complex_ops", "angle complex conj imag real"),
        ("flowmesh.ops.fft_ops", "fft fft2d fft3d ifft ifft2d ifft3d"),
        ("flowmesh.ops.nn_impl", "log_sigmoid"),
        ("flowmesh.ops.linalg_decomp_ops",
         "cholesky cholesky_solve cross matrix_solve_ls matrix_triangular_solve self_adjoint_eig"
         " self_adjoint_eigvals matrix_determinant=det"),
        ("flowmesh.framework_flags",
         "GRAPH_DEF_VERSION GRAPH_DEF_VERSION_MIN_CONSUMER GRAPH_DEF_VERSION_MIN_PRODUCER"
         " AggregationMethod UnconnectedGradients control_flow_v2_enabled disable_control_flow_v2"
         " disable_resource_variables enable_control_flow_v2 enable_resource_variables no_regularizer"
         " resource_variables_enabled"),
        ("flowmesh.ops.random_ops", "get_seed"),
        ("flowmesh.ops.string_split_ops", "string_split"),
        ("flowmesh.ops.state_ops",
         "scatter_div scatter_max scatter_min scatter_mul scatter_nd_add scatter_nd_sub scatter_nd_update"),
        ("flowmesh.ops.file_io_ops",
         "decode_base64 encode_base64 matching_files parse_tensor read_file serialize_tensor write_file"),
        ("flowmesh.ops.string_ops", "string_to_hash_bucket_fast string_strip=strip"),
        ("flowmesh.ops.random_dist_ops", "random_gamma random_poisson"),
        ("flowmesh.ops.search_ops", "bincount confusion_matrix searchsorted setdiff1d unravel_index"),
        ("flowmesh.ops.segment_ops", "unsorted_segment_mean"),
        ("flowmesh.ops.space_batch_ops",
         "batch_to_space batch_to_space_nd depth_to_space space_to_batch space_to_batch_nd space_to_depth"),
        ("flowmesh.ops.special_math_ops", "arg_max arg_min floor_div lbeta to_complex64 to_complex128"),
        ("flowmesh.ops.tensor_util",
         "dimension_at_index dimension_value get_static_value identity_n initialize_all_tables"
         " initialize_local_variables initialize_variables is_tensor"),
        ("flowmesh.ops.check_ops",
         "assert_equal assert_greater assert_greater_equal assert_integer assert_less assert_less_equal"
         " assert_near assert_negative assert_non_negative assert_non_positive assert_none_equal"
         " assert_positive assert_proper_iterable assert_rank assert_rank_at_least assert_rank_in"
         " assert_same_float_dtype assert_scalar assert_type check_numerics is_non_decreasing"
         " is_numeric_tensor is_strictly_increasing verify_tensor_all_finite"),
        ("flowmesh.core.graph_def", "make_ndarray make_tensor_proto"),
        ("flowmesh.core.importer", "import_graph_def"),
        ("flowmesh.protos.graph", "AttrValue GraphDef NameAttrList NodeDef VersionDef"),
        ("flowmesh.protos.meta_graph", "MetaGraphDef"),
        ("flowmesh.protos.tensor", "TensorProto TensorShapeProto"),
        ("flowmesh.ops.fftnd_ops", "fftnd=raw_fftnd ifftnd=raw_ifftnd irfftnd=raw_irfftnd rfftnd=raw_rfftnd"),
        ("flowmesh.ops.special_math_ops", "betainc igamma igammac zeta"),
        ("flowmesh.ops.matrix_function_ops", "matrix_square_root=sqrtm"),
        ("flowmesh.ops.svd_qr_ops", "qr svd"),
        ("flowmesh", "keras layers config initializers"),
        ("flowmesh.build_info",
         "COMPILER_VERSION CXX11_ABI_FLAG CXX_VERSION GIT_VERSION MONOLITHIC_BUILD VERSION"),
        ("flowmesh.core.registry", "NoGradient=no_gradient"),
        ("flowmesh.errors", "OpError"),
        ("flowmesh.execution_mode", "executing_eagerly_outside_functions"),
        ("flowmesh.framework_flags",
         "disable_tensor_equality disable_v2_tensorshape enable_tensor_equality enable_v2_tensorshape"),
        ("flowmesh.ops.bitcast_ops", "bitcast"),
        ("flowmesh.ops.session_ops", "delete_session_tensor get_session_handle get_session_tensor"),
        ("flowmesh.ops.edit_distance_ops", "edit_distance"),
        ("flowmesh.ops.fingerprint_ops", "fingerprint"),
        ("flowmesh.ops.patches_ops", "extract_image_patches extract_volume_patches"),
        ("flowmesh.ops.nn_compositions",
         "approx_top_k conv conv2d_backprop_filter_v2 conv2d_backprop_input_v2"),
        ("flowmesh.core.type_spec", "IndexedSlicesSpec NoneTensorSpec OptionalSpec TensorArraySpec TypeSpec"),
        ("flowmesh.type_specs", "type_spec_from_value"),
        ("flowmesh.core.dtypes", "QUANTIZED_DTYPES qint8 qint16 qint32 quint8 quint16"),
        ("flowmesh.ops.fake_quant_ops",
         "fake_quant_with_min_max_args fake_quant_with_min_max_args_gradient fake_quant_with_min_max_vars"
         " fake_quant_with_min_max_vars_gradient fake_quant_with_min_max_vars_per_channel"
         " fake_quant_with_min_max_vars_per_channel_gradient"),
        ("flowmesh.ops.quantize_ops", "dequantize quantize quantize_v2 quantized_concat"),
        ("flowmesh.ops.custom_gradient", "custom_gradient grad_pass_through recompute_grad"),
        ("flowmesh.ops.gradient_tape", "GradientTape"),
        ("flowmesh.ops.module", "Module"),
        ("flowmesh.ops.print_ops", "print=print_v2"),
        ("flowmesh.ops.script_ops", "py_function"),
        ("flowmesh.ops.template", "make_template"),
        ("flowmesh.ops.check_ops", "add_check_numerics_ops"),
        ("flowmesh.ops.functional_ops", "vectorized_map"),
        ("flowmesh.ops.hint_ops", "check_pinned guarantee_const parallel_stack"),
        ("flowmesh.ops.histogram_ops", "histogram_fixed_width histogram_fixed_width_bins"),
        ("flowmesh.ops.init_ops", "uniform_unit_scaling_initializer"),
        ("flowmesh.ops.nd_index_ops", "tensor_scatter_nd_max tensor_scatter_nd_min"),
        ("flowmesh.ops.ragged_fill_empty_rows", "ragged_fill_empty_rows ragged_fill_empty_rows_grad"),
        ("flowmesh.ops.ragged_tensor", "RaggedTensor"),
        ("flowmesh.ops.ragged_tensor_spec", "RaggedTensorSpec"),
        ("flowmesh.ops.scopes", "container init_scope op_scope variable_op_scope"),
        ("flowmesh.ops.space_batch_ops", "required_space_to_batch_paddings"),
        ("flowmesh.ops.state_ops", "batch_scatter_update count_up_to"),
        ("flowmesh.ops.switch_case", "switch_case"),
        ("flowmesh.ops.tensor_util", "convert_to_tensor_or_indexed_slices is_symbolic_tensor"),
        ("flowmesh.ops.time_ops", "timestamp"),
        ("flowmesh.ops.variable_policies", "VariableAggregation VariableSynchronization"),
        ("flowmesh.ops.variables", "assert_variables_initialized"),
        ("flowmesh.protos.config", "LogMessage OptimizerOptions"),
        ("flowmesh.protos.meta_graph", "TensorInfo"),
        ("flowmesh.tf_logging", "get_logger"),
        ("unsupported:NATIVE_LIBRARIES", "load_file_system_library load_library load_op_library"),
        ("unsupported:EAGER", "wrap_function function"),
    ),
    "app": (),  # flowmesh.app defines its names
    "audio": (
        ("flowmesh.ops.audio_ops", "decode_wav encode_wav"),
    ),
    "autograph": (
        ("flowmesh.autograph", "experimental"),
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "AUTOGRAPH unsupported"),
        ("unsupported:AUTOGRAPH", "to_code to_graph"),
    ),
    "autograph.experimental": (),  # flowmesh.autograph.experimental defines its names
    "bitwise": (
        ("flowmesh.ops.bitwise_ops", "bitwise_and bitwise_or bitwise_xor invert left_shift right_shift"),
    ),
    "config": (
        ("flowmesh.config_api",
         "LogicalDevice LogicalDeviceConfiguration PhysicalDevice experimental_connect_to_cluster"
         " experimental_connect_to_host experimental_functions_run_eagerly"
         " experimental_run_functions_eagerly functions_run_eagerly get_logical_device_configuration"
         " get_soft_device_placement get_visible_devices list_logical_devices list_physical_devices"
         " run_functions_eagerly set_logical_device_configuration set_soft_device_placement"
         " set_visible_devices experimental optimizer threading"),
    ),
    "data": (
        ("flowmesh.core.type_spec", "SparseTensorSpec TensorSpec"),
        ("flowmesh.data", "experimental"),
        ("flowmesh.data.dataset", "AUTOTUNE Dataset DatasetV1 DatasetV2"),
        ("flowmesh.data.experimental", "INFINITE_CARDINALITY UNKNOWN_CARDINALITY"),
        ("flowmesh.data.iterator",
         "Iterator get_output_classes get_output_shapes get_output_types make_initializable_iterator"
         " make_one_shot_iterator"),
        ("flowmesh.data.numpy_iterator", "NumpyIterator"),
        ("flowmesh.data.option_groups", "ThreadingOptions"),
        ("flowmesh.data.options", "Options"),
        ("flowmesh.data.readers", "FixedLengthRecordDataset TextLineDataset TFRecordDataset"),
        ("flowmesh.data.structure", "DatasetSpec"),
    ),
    "data.experimental": (
        ("flowmesh.core.type_spec",
         "OptionalStructure=OptionalSpec SparseTensorStructure=SparseTensorSpec"
         " TensorArrayStructure=TensorArraySpec TensorStructure=TensorSpec Structure=TypeSpec"),
        ("flowmesh.data.cardinality_padding", "pad_to_cardinality"),
        ("flowmesh.data.csv_datasets", "CsvDataset make_csv_dataset"),
        ("flowmesh.data.dataset",
         "AUTOTUNE INFINITE UNKNOWN INFINITE_CARDINALITY=INFINITE UNKNOWN_CARDINALITY=UNKNOWN"),
        ("flowmesh.data.dataset_tables", "DatasetInitializer index_table_from_dataset table_from_dataset"),
        ("flowmesh.data.dataset_variant", "from_variant get_single_element get_structure to_variant"),
        ("flowmesh.data.dataset_writer", "TFRecordWriter"),
        ("flowmesh.data.debug_mode", "enable_debug_mode"),
        ("flowmesh.data.device_transfer", "copy_to_device prefetch_to_device"),
        ("flowmesh.data.error_dropping", "ignore_errors"),
        ("flowmesh.data.experimental_transforms",
         "Counter enumerate_dataset map_and_batch parallel_interleave shuffle_and_repeat unbatch"
         " map_and_batch_with_legacy_function=map_and_batch"),
        ("flowmesh.data.feature_datasets", "make_batched_features_dataset parse_example_dataset"),
        ("flowmesh.data.generated_sources", "RandomDataset SqlDataset from_list"),
        ("flowmesh.data.grouping", "Reducer bucket_by_sequence_length group_by_reducer group_by_window"),
        ("flowmesh.data.option_groups",
         "AutotuneAlgorithm AutotuneOptions DistributeOptions ExternalStatePolicy OptimizationOptions"
         " ServiceOptions ThreadingOptions"),
        ("flowmesh.data.optional", "Optional get_next_as_optional"),
        ("flowmesh.data.options", "AutoShardPolicy Options"),
        ("flowmesh.data.ragged_batching", "RaggedTensorStructure dense_to_ragged_batch"),
        ("flowmesh.data.resampling", "rejection_resample"),
        ("flowmesh.data.selection", "choose_from_datasets sample_from_datasets"),
        ("flowmesh.data.sharding", "SHARD_HINT auto_shard"),
        ("flowmesh.data.snapshot", "snapshot"),
        ("flowmesh.data.sparse_batching", "dense_to_sparse_batch"),
        ("flowmesh.data.stateful_transforms", "assert_cardinality cardinality scan take_while unique"),
        ("flowmesh.data.structure", "DatasetStructure=DatasetSpec"),
    ),
    "debugging": (
        ("flowmesh", "experimental=debugging_experimental"),
        ("flowmesh.errors",
         "disable_traceback_filtering enable_traceback_filtering is_traceback_filtering_enabled"),
        ("flowmesh.ops.assert_shapes", "assert_shapes"),
        ("flowmesh.ops.check_ops",
         "assert_all_finite assert_equal assert_greater assert_greater_equal assert_integer assert_less"
         " assert_less_equal assert_near assert_negative assert_non_negative assert_non_positive"
         " assert_none_equal assert_positive assert_proper_iterable assert_rank assert_rank_at_least"
         " assert_rank_in assert_same_float_dtype assert_scalar assert_type check_numerics"
         " is_non_decreasing is_numeric_tensor is_strictly_increasing"),
        ("flowmesh.ops.logging_ops", "Assert"),
        ("flowmesh.ops.math_ops", "is_finite is_inf is_nan"),
        ("flowmesh.runtime.options", "get_log_device_placement set_log_device_placement"),
    ),
    "debugging.experimental": (
        ("flowmesh.debug_dump", "disable_dump_debug_info enable_dump_debug_info"),
    ),
    "distribute": (
        ("flowmesh.distribute", "cluster_resolver experimental"),
        ("flowmesh.distribute.collective_all_reduce_strategy",
         "CollectiveCommunication MultiWorkerMirroredStrategy"),
        ("flowmesh.distribute.cross_device_ops",
         "CrossDeviceOps HierarchicalCopyAllReduce NcclAllReduce ReductionToOneDevice"),
        ("flowmesh.distribute.distribute_lib",
         "ReplicaContext Strategy StrategyExtended experimental_set_strategy get_cross_replica_context"
         " get_loss_reduction get_replica_context get_strategy has_strategy in_cross_replica_context"),
        ("flowmesh.distribute.input_context", "InputContext"),
        ("flowmesh.distribute.mirrored_strategy", "MirroredStrategy"),
        ("flowmesh.distribute.one_device_strategy", "OneDeviceStrategy"),
        ("flowmesh.distribute.options", "InputReplicationMode RunOptions"),
        ("flowmesh.distribute.parameter_server_strategy", "ParameterServerStrategy"),
        ("flowmesh.distribute.reduce_op", "ReduceOp"),
        ("flowmesh.distribute.values", "MirroredVariable PerReplica"),
        ("flowmesh.distributed.server", "Server"),
    ),
    "distribute.cluster_resolver": (
        ("flowmesh.distribute.cluster_resolver.base",
         "ClusterResolver SimpleClusterResolver TFConfigClusterResolver UnionResolver"),
        ("flowmesh.distribute.cluster_resolver.kubernetes",
         "KubernetesExecutableLocation=ExecutableLocation KubernetesClusterResolver"),
        ("flowmesh.distribute.cluster_resolver.slurm", "SlurmClusterResolver"),
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "TPU"),
        ("unsupported:TPU", "TPUClusterResolver"),
    ),
    "distribute.experimental": (
        ("flowmesh.distribute.central_storage_strategy", "CentralStorageStrategy"),
        ("flowmesh.distribute.collective_all_reduce_strategy",
         "CollectiveCommunication CommunicationImplementation MultiWorkerMirroredStrategy"),
        ("flowmesh.distribute.options", "CollectiveHints CommunicationOptions"),
        ("flowmesh.distribute.parameter_server_strategy", "ParameterServerStrategy"),
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "TPU unsupported"),
        ("unsupported:TPU", "TPUStrategy"),
    ),
    "distributions": (
        ("flowmesh.distributions.base",
         "FULLY_REPARAMETERIZED NOT_REPARAMETERIZED Distribution RegisterKL ReparameterizationType"
         " kl_divergence"),
        ("flowmesh.distributions.continuous", "Beta Exponential Gamma Laplace Normal StudentT Uniform"),
        ("flowmesh.distributions.discrete",
         "Bernoulli Categorical Dirichlet DirichletMultinomial Multinomial"),
    ),
    "dtypes": (
        ("flowmesh", "experimental=dtypes_experimental"),
        ("flowmesh.core.dtypes",
         "QUANTIZED_DTYPES DType as_dtype bfloat16 bool complex64 complex128 double float16 float32"
         " float64 half int8 int16 int32 int64 qint8 qint16 qint32 quint8 quint16 resource string uint8"
         " uint16 uint32 uint64 variant"),
        ("flowmesh.ops.cast_ops", "cast saturate_cast"),
        ("flowmesh.ops.complex_ops", "complex"),
        ("flowmesh.ops.string_ops", "as_string"),
    ),
    "dtypes.experimental": (
        ("flowmesh.core.dtypes",
         "float4_e2m1fn float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz int2"
         " int4 uint2 uint4"),
    ),
    "errors": (),  # flowmesh.errors defines its names
    "experimental": (
        ("flowmesh", "extension_type=experimental_extension_type"),
        ("flowmesh.core.deprecation", "enable_strict_mode"),
        ("flowmesh.core.dtypes",
         "float4_e2m1fn float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz int2"
         " int4 uint2 uint4"),
        ("flowmesh.data.optional", "Optional"),
        ("flowmesh.ops.control_flow_intermediates", "output_all_intermediates=set_output_all_intermediates"),
        ("flowmesh.ops.dispatch",
         "dispatch_for_api dispatch_for_binary_elementwise_apis"
         " dispatch_for_binary_elementwise_assert_apis dispatch_for_unary_elementwise_apis"
         " unregister_dispatch_for"),
        ("flowmesh.ops.dynamic_ragged_shape", "DynamicRaggedShape"),
        ("flowmesh.ops.extension_type",
         "BatchableExtensionType ExtensionType ExtensionTypeBatchEncoder ExtensionTypeSpec"),
        ("flowmesh.ops.row_partition", "RowPartition"),
        ("flowmesh.ops.structured_tensor", "StructuredTensor"),
        ("unsupported:EAGER", "async_scope async_clear_error function_executor_type"),
        ("unsupported:NATIVE_LIBRARIES", "register_filesystem_plugin"),
    ),
    "experimental.extension_type": (
        ("flowmesh.ops.extension_type", "as_dict"),
    ),
    "feature_column": (
        ("flowmesh.feature_column._base", "CategoricalColumn DenseColumn FeatureColumn"),
        ("flowmesh.feature_column.categorical",
         "categorical_column_with_hash_bucket categorical_column_with_identity"
         " categorical_column_with_vocabulary_file categorical_column_with_vocabulary_list"
         " weighted_categorical_column"),
        ("flowmesh.feature_column.crossed", "crossed_column"),
        ("flowmesh.feature_column.dense_columns", "embedding_column indicator_column"),
        ("flowmesh.feature_column.input_layer", "input_layer linear_model make_parse_example_spec"),
        ("flowmesh.feature_column.numeric", "bucketized_column numeric_column"),
        ("flowmesh.feature_column.sequence",
         "sequence_categorical_column_with_hash_bucket sequence_categorical_column_with_identity"
         " sequence_categorical_column_with_vocabulary_file"
         " sequence_categorical_column_with_vocabulary_list sequence_input_layer sequence_numeric_column"
         " shared_embedding_columns"),
    ),
    "flags": (
        ("absl.flags",
         "DEFINE ArgumentParser ArgumentSerializer BaseListParser BooleanFlag BooleanParser"
         " CantOpenFlagFileError CsvListSerializer DEFINE_alias DEFINE_enum DEFINE_enum_class DEFINE_flag"
         " DEFINE_list DEFINE_multi DEFINE_multi_enum DEFINE_multi_enum_class DEFINE_multi_float"
         " DEFINE_multi_integer DEFINE_multi_string DEFINE_spaceseplist DuplicateFlagError EnumClassFlag"
         " EnumClassListSerializer EnumClassParser EnumClassSerializer EnumFlag EnumParser Error Flag"
         " FlagHolder FlagNameConflictsWithMethodError FlagValues FloatParser IllegalFlagValueError"
         " IntegerParser ListParser ListSerializer MultiEnumClassFlag MultiFlag UnparsedFlagAccessError"
         " UnrecognizedFlagError ValidationError WhitespaceSeparatedListParser adopt_module_key_flags"
         " declare_key_flag disclaim_key_flags doc_to_help flag_dict_to_args get_help_width"
         " mark_bool_flags_as_mutual_exclusive mark_flag_as_required mark_flags_as_mutual_exclusive"
         " mark_flags_as_required multi_flags_validator override_value register_multi_flags_validator"
         " register_validator set_default text_wrap validator"),
        ("flowmesh.flags", "tf_decorator"),
        ("flowmesh.flags.tf1_flags",
         "FLAGS DEFINE_bool DEFINE_boolean DEFINE_float DEFINE_integer DEFINE_string"),
    ),
    "flags.tf_decorator": (),  # flowmesh.flags.tf_decorator defines its names
    "gfile": (),  # flowmesh.gfile defines its names
    "graph_util": (
        ("flowmesh.core.importer", "import_graph_def"),
    ),
    "image": (
        ("flowmesh.image.adjust", "adjust_brightness adjust_contrast per_image_standardization"),
        ("flowmesh.image.colorspace",
         "adjust_hue adjust_saturation hsv_to_rgb random_hue random_saturation rgb_to_hsv"),
        ("flowmesh.image.convert", "convert_image_dtype decode_image grayscale_to_rgb rgb_to_grayscale"),
        ("flowmesh.image.geometry",
         "ResizeMethod central_crop crop_to_bounding_box flip_left_right flip_up_down pad_to_bounding_box"
         " resize_image_with_crop_or_pad resize_images resize=resize_images"
         " resize_with_crop_or_pad=resize_image_with_crop_or_pad"),
        ("flowmesh.image.proposals", "generate_bounding_box_proposals non_max_suppression_padded"),
        ("flowmesh.image.quality", "image_gradients psnr sobel_edges ssim ssim_multiscale total_variation"),
        ("flowmesh.image.random_ops",
         "random_brightness random_contrast random_crop random_flip_left_right random_flip_up_down"),
        ("flowmesh.image.transforms",
         "adjust_gamma adjust_jpeg_quality random_jpeg_quality resize_image_with_pad rgb_to_yiq"
         " rgb_to_yuv rot90 transpose yiq_to_rgb yuv_to_rgb transpose_image=transpose"),
        ("flowmesh.ops.image_box_ops",
         "combined_non_max_suppression crop_and_resize draw_bounding_boxes extract_glimpse"
         " non_max_suppression non_max_suppression_overlaps non_max_suppression_with_scores"
         " sample_distorted_bounding_box"),
        ("flowmesh.ops.image_decode_ops",
         "decode_and_crop_jpeg decode_bmp decode_gif decode_webp extract_jpeg_shape is_jpeg"),
        ("flowmesh.ops.image_ops",
         "decode_jpeg decode_png encode_jpeg encode_png resize_area resize_bicubic resize_bilinear"
         " resize_nearest_neighbor"),
        ("flowmesh.ops.patches_ops", "extract_image_patches"),
        ("unsupported:JPEG_XL", "decode_jxl"),
    ),
    "initializers": (
        ("flowmesh.ops.init_ops", "he_normal he_uniform lecun_normal lecun_uniform"),
        ("flowmesh.ops.lookup_ops", "tables_initializer"),
    ),
    "io": (
        ("flowmesh", "gfile=io_gfile"),
        ("flowmesh.data.tfrecord",
         "TFRecordCompressionType TFRecordOptions TFRecordWriter tf_record_iterator"),
        ("flowmesh.image.convert", "decode_image"),
        ("flowmesh.ops.byte_decode_ops", "decode_compressed decode_json_example"),
        ("flowmesh.ops.data_flow_ops", "QueueBase"),
        ("flowmesh.ops.decode_ops", "decode_csv decode_raw"),
        ("flowmesh.ops.file_io_ops",
         "decode_base64 encode_base64 matching_files parse_tensor read_file serialize_tensor write_file"),
        ("flowmesh.ops.image_decode_ops",
         "decode_and_crop_jpeg decode_bmp decode_gif decode_webp extract_jpeg_shape is_jpeg"),
        ("flowmesh.ops.image_ops", "decode_jpeg decode_png encode_jpeg encode_png"),
        ("flowmesh.ops.parse_sequence_batch_ops", "parse_sequence_example"),
        ("flowmesh.ops.parsing_config",
         "FixedLenFeature FixedLenSequenceFeature RaggedFeature SparseFeature VarLenFeature"),
        ("flowmesh.ops.parsing_ops", "parse_example parse_single_example parse_single_sequence_example"),
        ("flowmesh.ops.proto_codec_ops", "decode_proto encode_proto"),
        ("flowmesh.ops.queue_kinds", "PaddingFIFOQueue PriorityQueue RandomShuffleQueue"),
        ("flowmesh.ops.sparse_serialize_ops",
         "deserialize_many_sparse serialize_many_sparse serialize_sparse"),
        ("flowmesh.train.graph_io", "write_graph"),
        ("flowmesh.train.input_producers", "match_filenames_once"),
        ("unsupported:JPEG_XL", "decode_jxl"),
    ),
    "io.gfile": (
        ("flowmesh.gfile", "GFile"),
    ),
    "keras": (
        ("flowmesh.keras",
         "activations applications backend callbacks constraints datasets initializers layers losses"
         " metrics models optimizers preprocessing regularizers utils"),
        ("flowmesh.keras.engine.input_layer", "Input"),
        ("flowmesh.keras.engine.sequential", "Sequential"),
        ("flowmesh.keras.engine.training", "Model"),
        ("flowmesh.estimator", "estimator=keras_estimator"),
    ),
    "keras.activations": (),  # flowmesh.keras.activations defines its names
    "keras.applications": (
        ("flowmesh.keras.applications",
         "densenet efficientnet imagenet_utils inception_v3 mobilenet mobilenet_v2 regnet resnet resnet50"
         " resnet_v2 vgg16 vgg19 xception"),
        ("flowmesh.keras.applications.densenet", "DenseNet121 DenseNet169 DenseNet201"),
        ("flowmesh.keras.applications.efficientnet",
         "EfficientNetB0 EfficientNetB1 EfficientNetB2 EfficientNetB3 EfficientNetB4 EfficientNetB5"
         " EfficientNetB6 EfficientNetB7"),
        ("flowmesh.keras.applications.inception_v3", "InceptionV3"),
        ("flowmesh.keras.applications.mobilenet", "MobileNet MobileNetV2"),
        ("flowmesh.keras.applications.regnet",
         "RegNetX002 RegNetX004 RegNetX006 RegNetX008 RegNetX016 RegNetX032 RegNetX040 RegNetX064"
         " RegNetX080 RegNetX120 RegNetX160 RegNetX320 RegNetY002 RegNetY004 RegNetY006 RegNetY008"
         " RegNetY016 RegNetY032 RegNetY040 RegNetY064 RegNetY080 RegNetY120 RegNetY160 RegNetY320"),
        ("flowmesh.keras.applications.resnet",
         "ResNet50 ResNet50V2 ResNet101 ResNet101V2 ResNet152 ResNet152V2"),
        ("flowmesh.keras.applications.vgg", "VGG16 VGG19"),
        ("flowmesh.keras.applications.xception", "Xception"),
    ),
    "keras.backend": (
        ("flowmesh.keras", "backend_math"),
        ("flowmesh.keras.backend_state",
         "backend batch_get_value batch_set_value clear_session constant epsilon eval floatx function get_session"
         " get_uid get_value image_data_format int_shape learning_phase manual_variable_initialization"
         " name_scope placeholder require_devices reset_uids set_epsilon set_floatx set_image_data_format"
         " set_learning_phase set_session set_value smart_cond training_value unique_object_name variable"),
        ("flowmesh.keras.backend_math",
         "abs all any arange argmax argmin batch_dot batch_flatten cast cast_to_floatx clip concatenate"
         " cos count_params cumprod cumsum dot dtype equal exp expand_dims eye flatten gather gradients"
         " greater greater_equal is_keras_tensor is_sparse less less_equal log max maximum mean min"
         " minimum moving_average_update ndim not_equal one_hot ones ones_like permute_dimensions pow"
         " print_tensor prod repeat repeat_elements reshape reverse round shape sign sin sqrt square"
         " squeeze stack std stop_gradient sum tile to_dense transpose update update_add update_sub var"
         " zeros zeros_like"),
        ("flowmesh.keras.backend_activations",
         "batch_normalization bias_add dropout elu hard_sigmoid in_top_k l2_normalize"
         " normalize_batch_in_training relu sigmoid softmax softplus softsign tanh"),
        ("flowmesh.keras.backend_losses",
         "binary_crossentropy binary_focal_crossentropy categorical_crossentropy"
         " categorical_focal_crossentropy ctc_batch_cost ctc_decode ctc_label_dense_to_sparse"
         " sparse_categorical_crossentropy"),
        ("flowmesh.keras.backend_conv",
         "conv1d conv2d conv2d_transpose conv3d depthwise_conv2d local_conv1d local_conv2d pool2d pool3d"
         " resize_images resize_volumes separable_conv2d spatial_2d_padding spatial_3d_padding"
         " temporal_padding"),
        ("flowmesh.keras.backend_random",
         "random_bernoulli random_binomial random_normal random_normal_variable random_uniform"
         " random_uniform_variable truncated_normal"),
        ("flowmesh.keras.backend_control",
         "foldl foldr in_test_phase in_train_phase learning_phase_scope map_fn rnn switch"),
    ),
    "keras.callbacks": (
        ("flowmesh.keras.callbacks.backup_and_restore", "BackupAndRestore"),
        ("flowmesh.keras.callbacks.base", "Callback CallbackList"),
        ("flowmesh.keras.callbacks.early_stopping", "EarlyStopping"),
        ("flowmesh.keras.callbacks.history", "History ProgbarLogger"),
        ("flowmesh.keras.callbacks.learning_rate", "LearningRateScheduler ReduceLROnPlateau"),
        ("flowmesh.keras.callbacks.loggers",
         "BaseLogger CSVLogger LambdaCallback RemoteMonitor TensorBoard TerminateOnNaN"),
        ("flowmesh.keras.callbacks.model_checkpoint", "ModelCheckpoint"),
    ),
    "keras.constraints": (),  # flowmesh.keras.constraints defines its names
    "keras.datasets.boston_housing": (),  # flowmesh.keras.datasets.boston_housing defines its names
    "keras.datasets.cifar10": (),  # flowmesh.keras.datasets.cifar10 defines its names
    "keras.datasets.cifar100": (),  # flowmesh.keras.datasets.cifar100 defines its names
    "keras.datasets.fashion_mnist": (),  # flowmesh.keras.datasets.fashion_mnist defines its names
    "keras.datasets.imdb": (),  # flowmesh.keras.datasets.imdb defines its names
    "keras.datasets.mnist": (),  # flowmesh.keras.datasets.mnist defines its names
    "keras.datasets.reuters": (),  # flowmesh.keras.datasets.reuters defines its names
    "keras.estimator": (),  # flowmesh.estimator.keras_estimator defines its names
    "keras.initializers": (
        ("flowmesh.ops.init_ops",
         "Constant GlorotNormal GlorotUniform Initializer Ones Orthogonal VarianceScaling Zeros he_normal"
         " he_uniform lecun_normal lecun_uniform"),
    ),
    "keras.layers": (
        ("flowmesh.keras.engine.base_layer", "Layer"),
        ("flowmesh.keras.engine.input_layer", "Input InputLayer"),
        ("flowmesh.keras.engine.input_spec", "InputSpec"),
        ("flowmesh.keras.layers.activation", "ELU LeakyReLU PReLU ReLU Softmax ThresholdedReLU"),
        ("flowmesh.keras.layers.attention", "AdditiveAttention Attention"),
        ("flowmesh.keras.layers.convolutional", "Conv1D Conv2D Conv2DTranspose Conv3D"),
        ("flowmesh.keras.layers.convolutional_transpose", "Conv1DTranspose Conv3DTranspose"),
        ("flowmesh.keras.layers.core", "Activation Dense Dropout Flatten Identity Lambda Reshape"),
        ("flowmesh.keras.layers.depthwise",
         "DepthwiseConv1D DepthwiseConv2D SeparableConv1D SeparableConv2D"),
        ("flowmesh.keras.layers.einsum_dense", "EinsumDense"),
        ("flowmesh.keras.layers.embedding", "Embedding"),
        ("flowmesh.keras.layers.locally_connected", "LocallyConnected1D LocallyConnected2D"),
        ("flowmesh.keras.layers.masking", "Masking"),
        ("flowmesh.keras.layers.merge",
         "Add Average Concatenate Dot Maximum Minimum Multiply Subtract add average concatenate dot"
         " maximum minimum multiply subtract"),
        ("flowmesh.keras.layers.multi_head_attention", "MultiHeadAttention"),
        ("flowmesh.keras.layers.noise",
         "ActivityRegularization AlphaDropout GaussianDropout GaussianNoise SpatialDropout1D"
         " SpatialDropout2D SpatialDropout3D"),
        ("flowmesh.keras.layers.normalization",
         "BatchNormalization GroupNormalization LayerNormalization UnitNormalization"),
        ("flowmesh.keras.layers.padding",
         "Cropping1D Cropping2D Cropping3D ZeroPadding1D ZeroPadding2D ZeroPadding3D"),
        ("flowmesh.keras.layers.pooling",
         "AveragePooling1D AveragePooling2D AveragePooling3D GlobalAveragePooling1D"
         " GlobalAveragePooling2D GlobalAveragePooling3D GlobalMaxPooling1D GlobalMaxPooling2D"
         " GlobalMaxPooling3D MaxPooling1D MaxPooling2D MaxPooling3D"),
        ("flowmesh.keras.layers.preprocessing",
         "CategoryEncoding CenterCrop Discretization Hashing Normalization Rescaling Resizing"),
        ("flowmesh.keras.layers.random_image",
         "RandomBrightness RandomContrast RandomCrop RandomFlip RandomHeight RandomWidth"),
        ("flowmesh.keras.layers.random_warp", "RandomRotation RandomTranslation RandomZoom"),
        ("flowmesh.keras.layers.recurrent", "GRU LSTM RNN Bidirectional SimpleRNN"),
        ("flowmesh.keras.layers.recurrent_cells", "GRUCell LSTMCell SimpleRNNCell"),
        ("flowmesh.keras.layers.recurrent_stacked", "AbstractRNNCell StackedRNNCells"),
        ("flowmesh.keras.layers.reshaping",
         "Permute RepeatVector TimeDistributed UpSampling1D UpSampling2D UpSampling3D Wrapper"),
    ),
    "keras.losses": (),  # flowmesh.keras.losses defines its names
    "keras.metrics": (
        ("flowmesh.keras.metrics_base", "Mean MeanMetricWrapper MeanTensor Metric Sum"),
        ("flowmesh.keras.metrics_confusion",
         "AUC FalseNegatives FalsePositives Precision PrecisionAtRecall Recall RecallAtPrecision"
         " SensitivityAtSpecificity SpecificityAtSensitivity TrueNegatives TruePositives"),
        ("flowmesh.keras.metrics_more",
         "BinaryIoU F1Score FBetaScore IoU MeanIoU MeanRelativeError OneHotIoU OneHotMeanIoU R2Score"
         " RootMeanSquaredError"),
    ),
    "keras.models": (
        ("flowmesh.keras.engine.sequential", "Sequential"),
        ("flowmesh.keras.engine.training", "Model"),
    ),
    "keras.optimizers": (
        ("flowmesh.keras", "schedules=optimizers_schedules"),
    ),
    "keras.optimizers.schedules": (),  # flowmesh.keras.optimizers_schedules defines its names
    "keras.preprocessing": (
        ("flowmesh.keras.preprocessing", "image sequence text"),
        ("flowmesh.keras.preprocessing.datasets",
         "image_dataset_from_directory text_dataset_from_directory timeseries_dataset_from_array"),
    ),
    "keras.preprocessing.image": (
        ("flowmesh.keras.preprocessing.image_generator",
         "DirectoryIterator ImageDataGenerator Iterator NumpyArrayIterator"),
        ("flowmesh.keras.preprocessing.image_utils",
         "apply_affine_transform apply_brightness_shift apply_channel_shift array_to_img img_to_array"
         " load_img random_brightness random_channel_shift random_rotation random_shear random_shift"
         " random_zoom save_img smart_resize"),
    ),
    "keras.preprocessing.sequence": (),  # flowmesh.keras.preprocessing.sequence defines its names
    "keras.preprocessing.text": (),  # flowmesh.keras.preprocessing.text defines its names
    "keras.regularizers": (),  # flowmesh.keras.regularizers defines its names
    "keras.utils": (
        ("flowmesh.keras.utils.data_utils", "GeneratorEnqueuer OrderedEnqueuer Sequence SequenceEnqueuer"),
        ("flowmesh.keras.utils.generic_utils",
         "CustomObjectScope TimedThread custom_object_scope deserialize_keras_object"
         " disable_interactive_logging enable_interactive_logging get_custom_objects get_file"
         " get_registered_name get_registered_object get_source_inputs is_interactive_logging_enabled"
         " normalize pack_x_y_sample_weight register_keras_serializable serialize_keras_object"
         " set_random_seed split_dataset to_ordinal unpack_x_y_sample_weight warmstart_embedding_matrix"),
        ("flowmesh.keras.utils.np_utils", "to_categorical"),
        ("flowmesh.keras.utils.progbar", "Progbar"),
    ),
    "linalg": (
        ("flowmesh.ops.clip_ops", "global_norm"),
        ("flowmesh.ops.einsum_ops", "einsum"),
        ("flowmesh.ops.linalg_compositions", "matrix_rank normalize pinv"),
        ("flowmesh.ops.linalg_decomp_ops",
         "adjoint cholesky cholesky_solve cross det logdet matvec slogdet lstsq=matrix_solve_ls"
         " triangular_solve=matrix_triangular_solve eigh=self_adjoint_eig eigvalsh=self_adjoint_eigvals"),
        ("flowmesh.ops.linalg_ops",
         "tensor_diag=diag tensor_diag_part=diag_part eye matmul matrix_band_part matrix_diag"
         " matrix_diag_part matrix_set_diag matrix_transpose norm tensordot trace"
         " band_part=matrix_band_part diag=matrix_diag diag_part=matrix_diag_part set_diag=matrix_set_diag"
         " transpose=matrix_transpose"),
        ("flowmesh.ops.linalg_solve_ops",
         "matrix_inverse matrix_solve inv=matrix_inverse solve=matrix_solve"),
        ("flowmesh.ops.linear_operator",
         "LinearOperator LinearOperatorAdjoint LinearOperatorBlockDiag LinearOperatorBlockLowerTriangular"
         " LinearOperatorCirculant LinearOperatorCirculant2D LinearOperatorCirculant3D"
         " LinearOperatorComposition LinearOperatorDiag LinearOperatorFullMatrix LinearOperatorHouseholder"
         " LinearOperatorIdentity LinearOperatorInversion LinearOperatorKronecker"
         " LinearOperatorLowRankUpdate LinearOperatorLowerTriangular LinearOperatorPermutation"
         " LinearOperatorScaledIdentity LinearOperatorToeplitz LinearOperatorTridiag LinearOperatorZeros"),
        ("flowmesh.ops.lu_ops", "lu lu_matrix_inverse lu_reconstruct lu_solve"),
        ("flowmesh.ops.matrix_function_ops", "expm logm sqrtm"),
        ("flowmesh.ops.nn_norm_ops", "l2_normalize"),
        ("flowmesh.ops.svd_qr_ops", "qr svd"),
        ("flowmesh.ops.tridiagonal_ops", "eigh_tridiagonal tridiagonal_matmul tridiagonal_solve"),
        ("flowmesh", "experimental=linalg_experimental"),
    ),
    "linalg.experimental": (
        ("flowmesh.ops.linalg_conjugate_gradient", "conjugate_gradient"),
    ),
    "lite": (
        ("flowmesh.lite", "constants experimental"),
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "LITE unsupported"),
        ("unsupported:LITE",
         "Interpreter OpHint OpsSet Optimize RepresentativeDataset TFLiteConverter TargetSpec"
         " TocoConverter toco_convert"),
    ),
    "lite.constants": (),  # flowmesh.lite.constants defines its names
    "lite.experimental": (
        ("flowmesh.lite.experimental", "authoring"),
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "LITE unsupported"),
        ("unsupported:LITE",
         "Analyzer OpResolverType QuantizationDebugOptions QuantizationDebugger convert_op_hints_to_stubs"
         " load_delegate"),
    ),
    "lite.experimental.authoring": (
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "LITE unsupported"),
        ("unsupported:LITE", "compatible"),
    ),
    "logging": (),  # flowmesh.tf_logging defines its names
    "lookup": (
        ("flowmesh.lookup", "experimental"),
    ),
    "lookup.experimental": (
        ("flowmesh.lookup.mutable_tables", "DenseHashTable MutableHashTable"),
    ),
    "losses": (
        ("flowmesh.ops.losses",
         "Reduction absolute_difference add_loss compute_weighted_loss cosine_distance get_losses"
         " get_regularization_loss get_regularization_losses get_total_loss hinge_loss huber_loss log_loss"
         " mean_pairwise_squared_error mean_squared_error sigmoid_cross_entropy softmax_cross_entropy"
         " sparse_softmax_cross_entropy"),
    ),
    "manip": (
        ("flowmesh.ops.array_ops", "reshape"),
        ("flowmesh.ops.manip_ops", "reverse roll tile"),
        ("flowmesh.ops.nd_index_ops", "gather_nd scatter_nd"),
        ("flowmesh.ops.space_batch_ops", "batch_to_space_nd space_to_batch_nd"),
    ),
    "math": (
        ("flowmesh.ops.cast_ops", "saturate_cast"),
        ("flowmesh.ops.clip_ops", "clip_by_value"),
        ("flowmesh.ops.linalg_ops", "matmul"),
        ("flowmesh.ops.math_ops",
         "abs accumulate_n acos acosh add add_n asin asinh atan atan2 atanh ceil cos cosh digamma"
         " div_no_nan divide divide_no_nan equal erf erfc exp expm1 floor floordiv floormod greater"
         " greater_equal is_finite is_inf is_nan less less_equal lgamma log log1p logical_and logical_not"
         " logical_or logical_xor maximum minimum mod multiply multiply_no_nan negative not_equal"
         " polygamma pow realdiv reciprocal rint round rsqrt scalar_mul sigmoid sign sin sinh sqrt square"
         " squared_difference subtract tan tanh truediv truncatediv truncatemod xdivy xlogy"),
        ("flowmesh.ops.nn_impl", "in_top_k log_sigmoid softplus softsign top_k zero_fraction"),
        ("flowmesh.ops.nn_norm_ops", "l2_normalize"),
        ("flowmesh.ops.nn_ops", "log_softmax softmax"),
        ("flowmesh.ops.range_ops", "invert_permutation"),
        ("flowmesh.ops.reduction_ops",
         "argmax argmin count_nonzero cumprod cumsum reduce_all reduce_any reduce_euclidean_norm"
         " reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod reduce_std reduce_sum"
         " reduce_variance"),
        ("flowmesh.ops.segment_ops",
         "segment_max segment_mean segment_min segment_prod segment_sum unsorted_segment_max"
         " unsorted_segment_mean unsorted_segment_min unsorted_segment_prod unsorted_segment_sqrt_n"
         " unsorted_segment_sum"),
        ("flowmesh", "special=math_special"),
        ("flowmesh.ops.bessel_ops", "bessel_i0 bessel_i0e bessel_i1 bessel_i1e"),
        ("flowmesh.ops.check_ops", "is_non_decreasing is_strictly_increasing"),
        ("flowmesh.ops.complex_ops", "angle conj imag real"),
        ("flowmesh.ops.nn_compositions", "approx_max_k approx_min_k"),
        ("flowmesh.ops.search_ops", "bincount confusion_matrix"),
        ("flowmesh.ops.sobol_ops", "sobol_sample"),
        ("flowmesh.ops.special_math_ops",
         "betainc cumulative_logsumexp erfcinv erfinv igamma igammac lbeta ndtri nextafter polyval"
         " reciprocal_no_nan xlog1py zeta"),
    ),
    "math.special": (
        ("flowmesh.ops.bessel_more_ops",
         "bessel_j0 bessel_j1 bessel_k0 bessel_k0e bessel_k1 bessel_k1e bessel_y0 bessel_y1"),
        ("flowmesh.ops.bessel_ops", "bessel_i0 bessel_i0e bessel_i1 bessel_i1e"),
        ("flowmesh.ops.special_integral_ops", "dawsn expint fresnel_cos fresnel_sin spence"),
    ),
    "metrics": (
        ("flowmesh.metrics._core", "metric_variable"),
        ("flowmesh.metrics.at_k",
         "average_precision_at_k precision_at_k precision_at_top_k recall_at_k recall_at_top_k"
         " sparse_average_precision_at_k sparse_precision_at_k"),
        ("flowmesh.metrics.auc", "auc"),
        ("flowmesh.metrics.counts",
         "false_negatives false_positives precision recall true_negatives true_positives"),
        ("flowmesh.metrics.mean",
         "accuracy mean mean_absolute_error mean_per_class_accuracy mean_squared_error"
         " root_mean_squared_error"),
        ("flowmesh.metrics.more",
         "mean_cosine_distance mean_iou mean_relative_error mean_tensor percentage_below"),
        ("flowmesh.metrics.thresholds",
         "false_negatives_at_thresholds false_positives_at_thresholds precision_at_thresholds"
         " recall_at_thresholds sensitivity_at_specificity specificity_at_sensitivity"
         " true_negatives_at_thresholds true_positives_at_thresholds"),
    ),
    "mixed_precision": (
        ("flowmesh.mixed_precision", "experimental"),
        ("flowmesh.train.loss_scale",
         "DynamicLossScale FixedLossScale LossScale MixedPrecisionLossScaleOptimizer"
         " disable_mixed_precision_graph_rewrite enable_mixed_precision_graph_rewrite"),
    ),
    "mixed_precision.experimental": (
        ("flowmesh.train.loss_scale", "DynamicLossScale FixedLossScale LossScale"),
    ),
    "mlir": (
        ("flowmesh.mlir", "experimental"),
    ),
    "mlir.experimental": (
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "MLIR unsupported"),
        ("unsupported:MLIR",
         "convert_function convert_graph_def convert_saved_model convert_saved_model_v1 run_pass_pipeline"
         " tflite_to_tosa_bytecode write_bytecode"),
    ),
    "nest": (),  # flowmesh.nest defines its names
    "nn": (
        ("flowmesh", "experimental=nn_experimental"),
        ("flowmesh.ops.candidate_sampling_ops",
         "all_candidate_sampler compute_accidental_hits log_uniform_candidate_sampler"
         " uniform_candidate_sampler"),
        ("flowmesh.ops.ctc_decode_ops",
         "collapse_repeated ctc_beam_search_decoder ctc_beam_search_decoder_v2 ctc_greedy_decoder"
         " ctc_unique_labels"),
        ("flowmesh.ops.ctc_ops", "ctc_loss ctc_loss_v2"),
        ("flowmesh.ops.depthwise_conv_ops", "depthwise_conv2d depthwise_conv2d_native separable_conv2d"),
        ("flowmesh.ops.embedding_ops", "embedding_lookup"),
        ("flowmesh.ops.embedding_sparse_ops", "embedding_lookup_sparse safe_embedding_lookup_sparse"),
        ("flowmesh.ops.fractional_pool_ops", "fractional_avg_pool fractional_max_pool"),
        ("flowmesh.ops.math_ops", "sigmoid tanh"),
        ("flowmesh.ops.nn_atrous_ops", "atrous_conv2d_transpose with_space_to_batch"),
        ("flowmesh.ops.nn_compositions",
         "approx_max_k approx_min_k avg_pool1d avg_pool_v2 batch_norm_with_global_normalization"
         " conv1d_transpose conv_transpose convolution depthwise_conv2d_native_backprop_filter"
         " depthwise_conv2d_native_backprop_input log_poisson_loss max_pool1d max_pool_v2 pool"
         " sufficient_statistics depthwise_conv2d_backprop_filter=depthwise_conv2d_native_backprop_filter"
         " depthwise_conv2d_backprop_input=depthwise_conv2d_native_backprop_input"),
        ("flowmesh.ops.nn_conv3d_ops",
         "conv3d conv3d_backprop_filter conv3d_transpose conv3d_backprop_filter_v2=conv3d_backprop_filter"),
        ("flowmesh.ops.nn_conv_ops",
         "atrous_conv2d avg_pool avg_pool2d conv1d conv2d conv2d_backprop_filter conv2d_backprop_input"
         " conv2d_transpose max_pool max_pool2d"),
        ("flowmesh.ops.nn_impl",
         "crelu dropout elu gelu in_top_k leaky_relu log_sigmoid relu6 relu_layer selu silu softplus"
         " softsign swish top_k xw_plus_b zero_fraction"),
        ("flowmesh.ops.nn_morphology_ops", "dilation2d erosion2d max_pool_with_argmax"),
        ("flowmesh.ops.nn_norm_ops",
         "batch_normalization fused_batch_norm l2_loss l2_normalize local_response_normalization lrn"
         " moments normalize_moments weighted_moments"),
        ("flowmesh.ops.nn_ops",
         "bias_add log_softmax relu sigmoid_cross_entropy_with_logits softmax"
         " softmax_cross_entropy_with_logits softmax_cross_entropy_with_logits_v2"
         " sparse_softmax_cross_entropy_with_logits weighted_cross_entropy_with_logits"),
        ("flowmesh.ops.nn_pool3d_ops", "avg_pool3d max_pool3d"),
        ("flowmesh.ops.quantized_nn_ops",
         "quantized_avg_pool quantized_conv2d quantized_max_pool quantized_relu_x"),
        ("flowmesh.ops.sampled_losses", "nce_loss sampled_softmax_loss"),
        ("flowmesh.ops.space_batch_ops", "depth_to_space space_to_batch space_to_depth"),
        ("flowmesh.ops.unigram_sampling_ops",
         "fixed_unigram_candidate_sampler learned_unigram_candidate_sampler"),
        ("flowmesh.rnn",
         "bidirectional_dynamic_rnn dynamic_rnn raw_rnn rnn_cell static_bidirectional_rnn static_rnn"
         " static_state_saving_rnn"),
    ),
    "nn.experimental": (
        ("flowmesh.ops.dropout_experimental", "general_dropout stateless_dropout"),
    ),
    "profiler": (
        ("flowmesh.profiler.model_analyzer", "Profiler advise profile"),
        ("flowmesh.profiler.op_log", "write_op_log"),
        ("flowmesh.profiler.option_builder", "ProfileOptionBuilder"),
        ("flowmesh.protos.tfprof", "AdviceProto GraphNodeProto MultiGraphNodeProto OpLogProto"),
    ),
    "python_io": (
        ("flowmesh.data.tfrecord",
         "TFRecordCompressionType TFRecordOptions TFRecordWriter tf_record_iterator"),
    ),
    "quantization": (
        ("flowmesh", "experimental=quantization_experimental"),
        ("flowmesh.ops.fake_quant_ops",
         "fake_quant_with_min_max_args fake_quant_with_min_max_args_gradient fake_quant_with_min_max_vars"
         " fake_quant_with_min_max_vars_gradient fake_quant_with_min_max_vars_per_channel"
         " fake_quant_with_min_max_vars_per_channel_gradient"),
        ("flowmesh.ops.quantize_dequantize_ops", "quantize_and_dequantize quantize_and_dequantize_v2"),
        ("flowmesh.ops.quantize_ops", "dequantize quantize quantized_concat"),
    ),
    "quantization.experimental": (
        ("flowmesh.protos.quantization_options",
         "QuantizationComponentSpec QuantizationMethod QuantizationOptions UnitWiseQuantizationSpec"),
    ),
    "queue": (
        ("flowmesh.ops.data_flow_ops", "FIFOQueue QueueBase"),
        ("flowmesh.ops.queue_kinds", "PaddingFIFOQueue PriorityQueue RandomShuffleQueue"),
    ),
    "ragged": (
        ("flowmesh.core.ragged_tensor_value", "RaggedTensorValue"),
        ("flowmesh.ops.ragged_array_ops", "boolean_mask stack_dynamic_partitions"),
        ("flowmesh.ops.ragged_concat_ops", "stack"),
        ("flowmesh.ops.ragged_cross_ops", "cross cross_hashed"),
        ("flowmesh.ops.ragged_factory_ops", "constant constant_value placeholder"),
        ("flowmesh.ops.ragged_functional_ops", "map_flat_values"),
        ("flowmesh.ops.ragged_math_ops", "range"),
        ("flowmesh.ops.ragged_segment_ids", "row_splits_to_segment_ids segment_ids_to_row_splits"),
    ),
    "random": (
        ("flowmesh", "experimental=random_experimental"),
        ("flowmesh.ops.candidate_sampling_ops",
         "all_candidate_sampler log_uniform_candidate_sampler uniform_candidate_sampler"),
        ("flowmesh.ops.random_dist_ops",
         "fold_in gamma poisson split stateless_categorical stateless_multinomial"
         " stateless_parameterized_truncated_normal stateless_truncated_normal"
         " stateless_binomial=stateless_random_binomial stateless_gamma=stateless_random_gamma"
         " stateless_normal=stateless_random_normal stateless_poisson=stateless_random_poisson"
         " stateless_uniform=stateless_random_uniform"),
        ("flowmesh.ops.random_generator",
         "Algorithm Generator create_rng_state get_global_generator set_global_generator"),
        ("flowmesh.ops.random_ops",
         "categorical get_seed multinomial set_random_seed truncated_normal normal=random_normal"
         " shuffle=random_shuffle uniform=random_uniform"),
        ("flowmesh.ops.unigram_sampling_ops",
         "fixed_unigram_candidate_sampler learned_unigram_candidate_sampler"),
    ),
    "random.experimental": (
        ("flowmesh.ops.random_dist_ops", "stateless_fold_in=fold_in stateless_split=split"),
        ("flowmesh.ops.random_generator",
         "Algorithm Generator create_rng_state get_global_generator set_global_generator"),
        ("flowmesh.ops.random_index_shuffle_ops", "index_shuffle"),
        ("flowmesh.ops.stateless_shuffle_ops", "stateless_shuffle"),
    ),
    "resource_loader": (),  # flowmesh.resource_loader defines its names
    "saved_model": (
        ("flowmesh.saved_model", "experimental signature_def_utils"),
        ("flowmesh.saved_model.builder", "SavedModelBuilder Builder=SavedModelBuilder"),
        ("flowmesh.saved_model.constants",
         "ASSETS_DIRECTORY ASSETS_KEY DEBUG_DIRECTORY DEBUG_INFO_FILENAME_PB LEGACY_INIT_OP_KEY"
         " MAIN_OP_KEY SAVED_MODEL_FILENAME_PB SAVED_MODEL_FILENAME_PBTXT SAVED_MODEL_SCHEMA_VERSION"
         " VARIABLES_DIRECTORY VARIABLES_FILENAME signature_constants tag_constants"),
        ("flowmesh.saved_model.loader",
         "load maybe_saved_model_directory contains_saved_model=maybe_saved_model_directory"),
        ("flowmesh.saved_model.main_op", "main_op_with_restore"),
        ("flowmesh.saved_model.save_options", "Asset SaveOptions"),
        ("flowmesh.saved_model.signature_def_utils",
         "build_signature_def build_tensor_info classification_signature_def get_tensor_from_tensor_info"
         " is_valid_signature predict_signature_def regression_signature_def"),
        ("flowmesh.saved_model.simple_save", "simple_save"),
    ),
    "saved_model.constants": (),  # flowmesh.saved_model.constants defines its names
    "saved_model.experimental": (
        ("flowmesh.saved_model.trackable_resource", "TrackableResource"),
        ("flowmesh.saved_model.variable_policy", "VariablePolicy"),
    ),
    "saved_model.signature_def_utils": (
        ("flowmesh.saved_model.method_name_updater", "MethodNameUpdater"),
    ),
    "sets": (
        ("flowmesh.ops.set_ops",
         "set_difference set_intersection set_size set_union difference=set_difference"
         " intersection=set_intersection size=set_size union=set_union"),
    ),
    "signal": (
        ("flowmesh.ops.fft_ops",
         "fft fft2d fft3d fftshift hamming_window hann_window ifft ifft2d ifft3d ifftshift irfft irfft2d"
         " irfft3d rfft rfft2d rfft3d"),
        ("flowmesh.ops.fftnd_ops", "fftnd ifftnd irfftnd rfftnd"),
        ("flowmesh.ops.mdct_ops", "inverse_mdct kaiser_bessel_derived_window kaiser_window mdct"),
        ("flowmesh.ops.spectral_ops",
         "dct frame idct inverse_stft inverse_stft_window_fn linear_to_mel_weight_matrix"
         " mfccs_from_log_mel_spectrograms overlap_and_add stft vorbis_window"),
    ),
    "sparse": (
        ("flowmesh.core.sparse_tensor", "SparseTensor SparseTensorValue"),
        ("flowmesh.ops.conditional_accumulator", "SparseConditionalAccumulator"),
        ("flowmesh.ops.cross_ops", "cross=sparse_cross cross_hashed=sparse_cross_hashed"),
        ("flowmesh.ops.sparse_count_ops", "bincount"),
        ("flowmesh.ops.sparse_manip_ops",
         "concat expand_dims eye fill_empty_rows from_dense mask merge reorder reset_shape reshape retain"
         " slice split to_indicator transpose"),
        ("flowmesh.ops.sparse_math_ops",
         "add maximum minimum reduce_max reduce_max_sparse reduce_sum reduce_sum_sparse segment_mean"
         " segment_sqrt_n segment_sum softmax sparse_dense_matmul matmul=sparse_dense_matmul"),
        ("flowmesh.ops.sparse_ops", "sparse_to_dense to_dense"),
        ("flowmesh.ops.sparse_placeholder", "placeholder"),
    ),
    "spectral": (
        ("flowmesh.ops.fft_ops",
         "fft fft2d fft3d ifft ifft2d ifft3d irfft irfft2d irfft3d rfft rfft2d rfft3d"),
        ("flowmesh.ops.spectral_ops", "dct idct"),
    ),
    "strings": (
        ("flowmesh.ops.print_ops", "format=string_format"),
        ("flowmesh.ops.string_hash_ops", "to_hash_bucket to_hash_bucket_strong"),
        ("flowmesh.ops.string_ngrams_ops", "ngrams"),
        ("flowmesh.ops.string_ops",
         "as_string join length lower reduce_join regex_full_match regex_replace strip substr"
         " to_hash_bucket_fast to_number upper"),
        ("flowmesh.ops.string_split_ops", "split unsorted_segment_join"),
        ("flowmesh.ops.unicode_ops",
         "bytes_split unicode_decode unicode_decode_with_offsets unicode_encode unicode_split"
         " unicode_split_with_offsets unicode_transcode"),
    ),
    "summary": (
        ("flowmesh.ops.summary_media_ops", "audio image"),
        ("flowmesh.ops.summary_ops", "histogram merge merge_all scalar"),
        ("flowmesh.ops.summary_tensor_ops", "all_v2_summary_ops get_summary_description tensor_summary text"),
        ("flowmesh.protos.summary",
         "Event HistogramProto SessionLog Summary SummaryDescription SummaryMetadata TaggedRunMetadata"),
        ("flowmesh.summary.reader", "summary_iterator"),
        ("flowmesh.summary.writer", "FileWriter FileWriterCache"),
    ),
    "sysconfig": (
        ("flowmesh.build_info", "CXX11_ABI_FLAG CXX_VERSION MONOLITHIC_BUILD"),
        ("flowmesh.extension_build", "get_build_info get_compile_flags get_include get_lib get_link_flags"),
    ),
    "test": (
        ("flowmesh.test_util.benchmark", "Benchmark benchmark_config"),
        ("flowmesh.test_util.gradient_checker", "compute_gradient compute_gradient_error"),
        ("flowmesh.test_util.helpers",
         "StubOutForTesting assert_equal_graph_def create_local_cluster disable_with_predicate"
         " is_built_with_rocm is_built_with_xla is_cpu_target_available main test_src_dir_path"
         " with_eager_op_as_function"),
        ("flowmesh.test_util.test_case", "TestCase get_temp_dir"),
    ),
    "tpu": (
        ("flowmesh.tpu", "experimental"),
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "TPU unsupported"),
        ("unsupported:TPU",
         "CrossShardOptimizer PaddingSpec XLAOptions batch_parallel bfloat16_scope core cross_replica_sum"
         " initialize_system outside_compilation replicate rewrite shard shutdown_system"),
    ),
    "tpu.experimental": (
        ("flowmesh.tpu.experimental", "embedding"),
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "TPU unsupported"),
        ("unsupported:TPU",
         "DeviceAssignment DeviceOrderMode HardwareFeature TPUSystemMetadata Topology embedding_column"
         " initialize_tpu_system shared_embedding_columns shutdown_tpu_system"),
    ),
    "tpu.experimental.embedding": (
        # the stand-in helper and its reason, public here since before the table (not TF's)
        ("flowmesh.unsupported", "TPU unsupported"),
        ("unsupported:TPU",
         "Adagrad AdagradMomentum Adam CustomCombiner CustomOptimizer FTRL FeatureConfig"
         " QuantizationConfig RowIdInitializer SGD SparseCoreEmbeddingConfig TPUEmbedding"
         " TPUEmbeddingForServing TPUEmbeddingV0 TPUEmbeddingV2 TableConfig serving_embedding_lookup"),
    ),
    "train": (
        ("flowmesh.checkpoint",
         "CheckpointState NewCheckpointReader checkpoint_exists generate_checkpoint_state_proto"
         " get_checkpoint_mtimes get_checkpoint_state latest_checkpoint list_variables load_checkpoint"
         " load_variable remove_checkpoint update_checkpoint_state"),
        ("flowmesh.distributed.cluster_spec", "ClusterDef ClusterSpec JobDef"),
        ("flowmesh.distributed.server", "Server ServerDef"),
        ("flowmesh.protos.example",
         "BytesList Example Feature FeatureList FeatureLists Features FloatList Int64List SequenceExample"),
        ("flowmesh.summary.reader", "summary_iterator"),
        ("flowmesh.train.adadelta", "AdadeltaOptimizer"),
        ("flowmesh.train.adagrad", "AdagradOptimizer"),
        ("flowmesh.train.adagrad_da", "AdagradDAOptimizer"),
        ("flowmesh.train.adam", "AdamOptimizer"),
        ("flowmesh.train.basic_session_run_hooks",
         "CheckpointSaverHook CheckpointSaverListener FeedFnHook FinalOpsHook GlobalStepWaiterHook"
         " LoggingTensorHook NanLossDuringTrainingError NanTensorHook SecondOrStepTimer StepCounterHook"
         " StopAtStepHook SummarySaverHook"),
        ("flowmesh.train.batching",
         "batch batch_join maybe_batch maybe_batch_join maybe_shuffle_batch maybe_shuffle_batch_join"
         " shuffle_batch shuffle_batch_join"),
        ("flowmesh.train.checkpoint_utils", "init_from_checkpoint"),
        ("flowmesh.train.coordinator", "Coordinator LooperThread"),
        ("flowmesh.train.device_setter",
         "GreedyLoadBalancingStrategy byte_size_load_fn replica_device_setter"),
        ("flowmesh.train.ftrl", "FtrlOptimizer"),
        ("flowmesh.train.gradient_descent", "GradientDescentOptimizer"),
        ("flowmesh.train.graph_io", "write_graph"),
        ("flowmesh.train.input_producers",
         "input_producer limit_epochs match_filenames_once range_input_producer slice_input_producer"
         " string_input_producer"),
        ("flowmesh.train.learning_rate_decay",
         "cosine_decay cosine_decay_restarts exponential_decay inverse_time_decay linear_cosine_decay"
         " linear_scaling_warmup natural_exp_decay noisy_linear_cosine_decay piecewise_constant"
         " polynomial_decay piecewise_constant_decay=piecewise_constant"),
        ("flowmesh.train.meta_graph", "export_meta_graph"),
        ("flowmesh.train.momentum", "MomentumOptimizer"),
        ("flowmesh.train.monitored_session",
         "MonitoredSession MonitoredTrainingSession SingularMonitoredSession"),
        ("flowmesh.train.moving_averages", "ExponentialMovingAverage"),
        ("flowmesh.train.optimizer", "Optimizer"),
        ("flowmesh.train.profiler_hook", "ProfilerHook"),
        ("flowmesh.train.proximal", "ProximalAdagradOptimizer ProximalGradientDescentOptimizer"),
        ("flowmesh.train.queue_runner", "QueueRunner add_queue_runner start_queue_runners"),
        ("flowmesh.train.rmsprop", "RMSPropOptimizer"),
        ("flowmesh.train.saver", "Saver SaverDef import_meta_graph"),
        ("flowmesh.train.scaffold", "ChiefSessionCreator Scaffold SessionCreator WorkerSessionCreator"),
        ("flowmesh.train.session_manager", "SessionManager"),
        ("flowmesh.train.session_run_hook",
         "SessionRunArgs SessionRunContext SessionRunHook SessionRunValues"),
        ("flowmesh.train.supervisor", "Supervisor"),
        ("flowmesh.train.sync_replicas_optimizer", "SyncReplicasOptimizer"),
        ("flowmesh.train.training_loops",
         "Checkpoint CheckpointManager CheckpointOptions assert_global_step basic_train_loop"
         " checkpoints_iterator do_quantize_training_on_graphdef sdca_fprint sdca_optimizer sdca_shrink_l1"),
        ("flowmesh.train.training_util",
         "create_global_step get_global_step get_or_create_global_step global_step"),
        ("flowmesh.train.warm_starting_util", "VocabInfo warm_start"),
        ("flowmesh.train", "experimental"),
    ),
    "train.experimental": (
        ("flowmesh.train.checkpoint_sharding",
         "MaxShardSizePolicy ShardableTensor ShardByTaskPolicy ShardingCallback"),
        ("flowmesh.train.loss_scale",
         "DynamicLossScale FixedLossScale LossScale MixedPrecisionLossScaleOptimizer"
         " disable_mixed_precision_graph_rewrite enable_mixed_precision_graph_rewrite"),
        ("flowmesh.train.python_state", "PythonState"),
    ),
    "train.queue_runner": (),  # flowmesh.train.queue_runner defines its names
    "types": (
        ("flowmesh.types", "experimental"),
    ),
    "types.experimental": (
        ("flowmesh.core.type_protocols", "FunctionType TensorLike"),
    ),
    "user_ops": (),  # flowmesh.user_ops defines its names
    "version": (
        ("flowmesh.build_info", "COMPILER_VERSION GIT_VERSION VERSION"),
        ("flowmesh.framework_flags",
         "GRAPH_DEF_VERSION GRAPH_DEF_VERSION_MIN_CONSUMER GRAPH_DEF_VERSION_MIN_PRODUCER"),
    ),
    "xla": (
        ("flowmesh.xla", "experimental"),
    ),
    "xla.experimental": (
        ("flowmesh.ops.xla_compile", "compile jit_scope"),
    ),
}
