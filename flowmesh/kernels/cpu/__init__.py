"""CPU tuning of the torch kernels, and how torch was built.

* ``gemm_choice``: per product shape, which fp32 GEMM (oneDNN or MKL) measures faster;
* ``onednn_matmul``: the fp32 CPU ``MatMul`` that routes by that choice;
* ``chunk_pool``: big MatMuls split into row chunks run by a pool of Python threads;
* ``probe_state``: whether the calling thread's step probes a mode the thread tuner has
  not chosen (self-tuning kernels do not measure there);
* ``onednn_lstm``: float32 CPU LSTMs run by oneDNN directly, without autograd;
* ``build_info``: the compiler, C++ standard and ABI torch was built with.

Op kernels (``kernels/linalg_ops.py``, ``kernels/rnn_ops.py``) and the session call into
these; the settings live in ``flowmesh/config.py``.
"""
