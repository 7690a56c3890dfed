"""Graph construction: dtypes, shapes, Graph/Operation/Tensor, registry (autodiff is ops/gradients_impl.py)."""
