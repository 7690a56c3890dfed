"""``tf.VERSION``, ``tf.GIT_VERSION`` and the build constants, answered for flowmesh.

flowmesh is pure Python on torch's kernels, so the compiler, C++ standard and C++11 ABI are
those torch was built with (read from torch by :mod:`flowmesh.kernels.cpu.build_info`);
``VERSION`` is flowmesh's own version (``tf.__version__`` is the same string).
"""

from __future__ import annotations

from flowmesh.kernels.cpu import build_info as _torch_build

VERSION: str = "0.1.0"
GIT_VERSION: str = f"v{VERSION}"
COMPILER_VERSION: str = _torch_build.compiler_version()
CXX_VERSION: int = _torch_build.cxx_version()
CXX11_ABI_FLAG: int = _torch_build.cxx11_abi_flag()
MONOLITHIC_BUILD: int = 0
