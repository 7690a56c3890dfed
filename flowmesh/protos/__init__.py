"""TensorFlow's protocol buffer messages, built in flowmesh's private descriptor pool.

See :mod:`flowmesh.protos.builder` for why the pool is private and how to add a schema
(one module per group of ``.proto`` files: ``tensor``, ``graph``, ``meta_graph``,
``tensor_bundle``).
"""
