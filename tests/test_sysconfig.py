"""tf.sysconfig answers for flowmesh: its package, torch's headers and libraries, the build."""

from __future__ import annotations

import os

import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow


def test_paths_and_flags_point_at_real_files():
    assert tf.sysconfig.get_lib() == os.path.dirname(os.path.abspath(tf.__file__))
    include = tf.sysconfig.get_include()
    assert os.path.isfile(os.path.join(include, "torch", "extension.h"))
    compile_flags = tf.sysconfig.get_compile_flags()
    assert compile_flags[0] == f"-I{include}"
    assert f"-D_GLIBCXX_USE_CXX11_ABI={tf.sysconfig.CXX11_ABI_FLAG}" in compile_flags
    assert any(f.startswith("--std=c++") for f in compile_flags)
    link_flags = tf.sysconfig.get_link_flags()
    library_dir = link_flags[0][2:]
    assert link_flags[0].startswith("-L") and "-ltorch" in link_flags and "-lc10" in link_flags
    assert any(name.startswith("libc10.") for name in os.listdir(library_dir))
    assert tf.sysconfig.MONOLITHIC_BUILD == 0 and tf.sysconfig.CXX_VERSION == tf.CXX_VERSION


def test_build_info_has_tensorflows_keys():
    info = tf.sysconfig.get_build_info()
    assert {"cpu_compiler", "is_cuda_build", "is_rocm_build", "is_tensorrt_build"} <= set(info)
    assert info["is_tensorrt_build"] is False and isinstance(info["is_cuda_build"], bool)
    if info["is_cuda_build"]:
        assert {"cuda_version", "cuda_compute_capabilities"} <= set(info)
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    theirs = tf1.sysconfig.get_build_info()
    common = {"cpu_compiler", "is_cuda_build", "is_rocm_build", "is_tensorrt_build"}
    assert common <= set(theirs)
    assert {k: type(info[k]) for k in common} == {k: type(theirs[k]) for k in common}
