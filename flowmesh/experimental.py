# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.experimental`` (``tf.compat.v1.experimental``): extension types, API dispatch and the
low-precision dtypes."""

from flowmesh import experimental_extension_type as extension_type
from flowmesh.core.deprecation import enable_strict_mode
from flowmesh.core.dtypes import (
    float4_e2m1fn,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    int2,
    int4,
    uint2,
    uint4,
)
from flowmesh.data.optional import Optional
from flowmesh.ops.control_flow_intermediates import set_output_all_intermediates as output_all_intermediates
from flowmesh.ops.dispatch import (
    dispatch_for_api,
    dispatch_for_binary_elementwise_apis,
    dispatch_for_binary_elementwise_assert_apis,
    dispatch_for_unary_elementwise_apis,
    unregister_dispatch_for,
)
from flowmesh.ops.dynamic_ragged_shape import DynamicRaggedShape
from flowmesh.ops.extension_type import (
    BatchableExtensionType,
    ExtensionType,
    ExtensionTypeBatchEncoder,
    ExtensionTypeSpec,
)
from flowmesh.ops.row_partition import RowPartition
from flowmesh.ops.structured_tensor import StructuredTensor
from flowmesh.unsupported import EAGER as _EAGER
from flowmesh.unsupported import NATIVE_LIBRARIES as _NATIVE
from flowmesh.unsupported import unsupported as _unsupported

async_scope = _unsupported("experimental.async_scope", _EAGER)
async_clear_error = _unsupported("experimental.async_clear_error", _EAGER)
function_executor_type = _unsupported("experimental.function_executor_type", _EAGER)
register_filesystem_plugin = _unsupported("experimental.register_filesystem_plugin", _NATIVE)
