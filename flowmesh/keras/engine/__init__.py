"""The Keras engine: the ``Layer`` base, input specs, the functional graph of nodes,
``Sequential``/functional/subclassed ``Model`` and the training loop."""
