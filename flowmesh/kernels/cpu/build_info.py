"""How the native kernels (torch) were built: the facts behind ``tf.COMPILER_VERSION``,
``tf.CXX_VERSION`` and ``tf.CXX11_ABI_FLAG``."""

from __future__ import annotations

import os
import re

import torch


def _config_line(pattern: str) -> str | None:
    match = re.search(pattern, torch.__config__.show())
    return match.group(1).strip() if match else None


def compiler_version() -> str:
    """The compiler torch was built with, e.g. ``"GCC 13.3"``."""
    return _config_line(r"-\s*((?:GCC|Clang|MSVC)[^\n]*)") or "unknown"


def cxx_version() -> int:
    """The ``__cplusplus`` value torch was built with, e.g. ``202002``."""
    value = _config_line(r"C\+\+ Version:\s*(\d+)")
    return int(value) if value else 0


def cxx11_abi_flag() -> int:
    """1 when torch uses the C++11 ``std::string`` ABI (``_GLIBCXX_USE_CXX11_ABI``)."""
    return int(bool(torch._C._GLIBCXX_USE_CXX11_ABI))


def include_dirs() -> list[str]:
    """torch's C++ header directories: its ``include`` folder and the C++ API's under it
    (what ``torch.utils.cpp_extension.include_paths()`` gives a CPU build)."""
    include = os.path.join(os.path.dirname(torch.__file__), "include")
    return [include, os.path.join(include, "torch", "csrc", "api", "include")]


def library_dir() -> str:
    """The folder holding torch's shared libraries (``libc10``, ``libtorch_cpu``, ...)."""
    return os.path.join(os.path.dirname(torch.__file__), "lib")


def libraries() -> list[str]:
    """The torch libraries a native extension links: ``c10``, ``torch``, ``torch_cpu`` and,
    in a CUDA build, ``c10_cuda`` and ``torch_cuda``."""
    names = ["c10", "torch", "torch_cpu"]
    if torch.version.cuda is not None:
        names += ["c10_cuda", "torch_cuda"]
    return names


def accelerator_build() -> dict[str, object]:
    """Which accelerator toolkits torch was built for: ``is_cuda_build``, ``is_rocm_build``
    and, in a CUDA build, ``cuda_version``, ``cudnn_version`` (major, as TensorFlow writes
    it) and ``cuda_compute_capabilities`` (``sm_80``, ``compute_90`` ...)."""
    info: dict[str, object] = {"is_cuda_build": torch.version.cuda is not None,
                               "is_rocm_build": getattr(torch.version, "hip", None) is not None}
    if torch.version.cuda is not None:
        info["cuda_version"] = torch.version.cuda
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        if cudnn:
            info["cudnn_version"] = str(cudnn // 10000 if cudnn >= 10000 else cudnn // 1000)
        info["cuda_compute_capabilities"] = list(torch.cuda.get_arch_list())
    return info
