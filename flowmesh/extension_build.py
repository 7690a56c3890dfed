"""``tf.sysconfig``'s functions, answered for flowmesh: where its files are and how a native
extension is compiled and linked against the kernels it runs on.

flowmesh has no C++ library of its own: its kernels are torch's, so a native extension that
works on flowmesh's tensors builds against torch. Hence:

=====================  ==================================================================
``get_lib()``          flowmesh's package directory (TensorFlow: its package directory)
``get_include()``      torch's C++ header directory
``get_compile_flags``  ``-I`` torch's header directories, ``-D_GLIBCXX_USE_CXX11_ABI=N`` and
                       ``--std=c++NN`` as torch was built
``get_link_flags``     ``-L`` torch's library directory and ``-l`` its libraries
``get_build_info()``   the compiler and accelerator toolkits torch was built with
=====================  ==================================================================
"""

from __future__ import annotations

import os

from flowmesh.build_info import COMPILER_VERSION, CXX11_ABI_FLAG, CXX_VERSION
from flowmesh.kernels.cpu import build_info as _torch_build

_CXX_STANDARDS = {201103: "c++11", 201402: "c++14", 201703: "c++17", 202002: "c++20", 202302: "c++23"}


def get_lib() -> str:
    """The directory of the flowmesh package."""
    return os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The directory holding the C++ headers native extensions compile against (torch's)."""
    return _torch_build.include_dirs()[0]


def get_compile_flags() -> list[str]:
    """Compiler flags for a native extension: the header directories, the C++11 ABI and the
    C++ standard torch was built with, e.g. ``['-I.../torch/include', ...,
    '-D_GLIBCXX_USE_CXX11_ABI=1', '--std=c++17']``."""
    flags = [f"-I{path}" for path in _torch_build.include_dirs()]
    flags.append(f"-D_GLIBCXX_USE_CXX11_ABI={CXX11_ABI_FLAG}")
    standard = _CXX_STANDARDS.get(CXX_VERSION)
    if standard:
        flags.append(f"--std={standard}")
    return flags


def get_link_flags() -> list[str]:
    """Linker flags for a native extension: ``-L`` torch's library directory and ``-l``
    each torch library it needs (``c10``, ``torch``, ``torch_cpu`` ...)."""
    return [f"-L{_torch_build.library_dir()}"] + [f"-l{name}" for name in _torch_build.libraries()]


def get_build_info() -> dict[str, object]:
    """The build environment, with TensorFlow's keys: ``cpu_compiler`` (``gcc``/``clang``),
    ``is_cuda_build``, ``is_rocm_build``, ``is_tensorrt_build`` (False: flowmesh has no
    TensorRT path) and, in a CUDA build, ``cuda_version``, ``cudnn_version`` and
    ``cuda_compute_capabilities``."""
    info: dict[str, object] = {"cpu_compiler": COMPILER_VERSION.split(" ")[0].lower()}
    info.update(_torch_build.accelerator_build())
    info["is_tensorrt_build"] = False
    return dict(sorted(info.items()))
