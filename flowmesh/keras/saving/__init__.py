"""Keras model files: HDF5 weights and whole models (Keras 2's layout), model configs."""
