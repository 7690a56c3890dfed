"""What the runtime and a kernel share: the kernel registry (``@kernel``), the kernel cache
that instantiates kernels per (op, device), what a kernel sees of a step (``StepContext``,
the per-step ``Rendezvous``), the device's resource store (variables and other state), the
dtype conversions between flowmesh and torch, and the NaN/Inf check of instrumented graphs.

``runtime/``, ``distributed/`` and ``collective/`` import the kernels through this package;
the op kernels themselves (``flowmesh/kernels/<family>.py``) only register with it.
"""
