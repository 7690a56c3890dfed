"""TensorFlow's protocol buffer messages, built in flowmesh's private descriptor pool.

See :mod:`flowmesh.protos.builder` for why the pool is private and how to add a schema
(one module per group of ``.proto`` files: ``tensor``, ``graph``, ``meta_graph``,
``tensor_bundle``). ``summary`` (TensorBoard's ``Event``/``Summary`` messages) is the one
exception: a small declarative encoder of its own, whose classes behave like TensorFlow's
generated ones where user code touches them; ops, kernels and writers import it from here,
below them all.
"""
