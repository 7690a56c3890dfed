"""What ``tf.test`` is made of: :class:`TestCase` (``test_case.py``), the TensorFlow 1.x
gradient checker (``gradient_checker.py``), ``Benchmark`` (``benchmark.py``),
``create_local_cluster`` and the small helpers (``helpers.py``). The public names are
``flowmesh.test``'s."""
