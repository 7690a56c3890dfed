# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.sysconfig``: build constants and the flags for building native extensions."""

from flowmesh.build_info import CXX11_ABI_FLAG, CXX_VERSION, MONOLITHIC_BUILD
from flowmesh.extension_build import get_build_info, get_compile_flags, get_include, get_lib, get_link_flags
