"""Canned (premade) estimators: Linear, DNN, DNNLinearCombined and Baseline, each as a
Regressor and a Classifier, with TensorFlow's variable names, heads and defaults."""
