"""How the native kernels (torch) were built: the facts behind ``tf.COMPILER_VERSION``,
``tf.CXX_VERSION`` and ``tf.CXX11_ABI_FLAG``."""

from __future__ import annotations

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
