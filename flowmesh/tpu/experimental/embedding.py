"""``tf.tpu.experimental.embedding``: not supported (TPU embedding tables need TPUs)."""

from __future__ import annotations

from flowmesh.unsupported import TPU, unsupported

Adagrad = unsupported("tpu.experimental.embedding.Adagrad", TPU)
AdagradMomentum = unsupported("tpu.experimental.embedding.AdagradMomentum", TPU)
Adam = unsupported("tpu.experimental.embedding.Adam", TPU)
CustomCombiner = unsupported("tpu.experimental.embedding.CustomCombiner", TPU)
CustomOptimizer = unsupported("tpu.experimental.embedding.CustomOptimizer", TPU)
FTRL = unsupported("tpu.experimental.embedding.FTRL", TPU)
FeatureConfig = unsupported("tpu.experimental.embedding.FeatureConfig", TPU)
QuantizationConfig = unsupported("tpu.experimental.embedding.QuantizationConfig", TPU)
RowIdInitializer = unsupported("tpu.experimental.embedding.RowIdInitializer", TPU)
SGD = unsupported("tpu.experimental.embedding.SGD", TPU)
SparseCoreEmbeddingConfig = unsupported("tpu.experimental.embedding.SparseCoreEmbeddingConfig", TPU)
TPUEmbedding = unsupported("tpu.experimental.embedding.TPUEmbedding", TPU)
TPUEmbeddingForServing = unsupported("tpu.experimental.embedding.TPUEmbeddingForServing", TPU)
TPUEmbeddingV0 = unsupported("tpu.experimental.embedding.TPUEmbeddingV0", TPU)
TPUEmbeddingV2 = unsupported("tpu.experimental.embedding.TPUEmbeddingV2", TPU)
TableConfig = unsupported("tpu.experimental.embedding.TableConfig", TPU)
serving_embedding_lookup = unsupported("tpu.experimental.embedding.serving_embedding_lookup", TPU)
