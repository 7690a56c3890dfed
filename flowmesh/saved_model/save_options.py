"""``tf.saved_model.SaveOptions`` and ``tf.saved_model.Asset``: value objects of TensorFlow's
SavedModel API (flowmesh's TF1 builder takes assets as a collection of file-name tensors)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowmesh.saved_model.variable_policy import VariablePolicy


@dataclass
class SaveOptions:
    """Options of a SavedModel save, with TensorFlow's fields and defaults.

    Raises:
        ValueError: an unknown ``experimental_variable_policy`` (stored as a
            :class:`VariablePolicy`, as TensorFlow does).
    """

    namespace_whitelist: Any = None
    save_debug_info: bool = False
    function_aliases: Any = None
    experimental_debug_stripper: bool = False
    experimental_io_device: str | None = None
    experimental_variable_policy: Any = None
    experimental_custom_gradients: bool = True
    experimental_image_format: bool = False
    experimental_skip_saver: bool = False
    experimental_sharding_callback: Any = None
    extra_tags: Any = None

    def __post_init__(self) -> None:
        self.experimental_variable_policy = VariablePolicy.from_obj(self.experimental_variable_policy)
        self.namespace_whitelist = list(self.namespace_whitelist or [])
        self.function_aliases = dict(self.function_aliases or {})


class Asset:
    """A file the SavedModel carries (``tf.saved_model.Asset(path)``): ``asset_path`` is a
    string tensor holding the path, added to the ``ASSET_FILEPATHS`` collection as TF1's
    builder expects of assets."""

    def __init__(self, path: Any) -> None:
        from flowmesh.core.graph import Tensor, add_to_collection
        from flowmesh.ops.constant_op import constant

        self.asset_path = path if isinstance(path, Tensor) else constant(path, name="asset_path")
        if self.asset_path.dtype.name != "string":
            raise TypeError(f"tf.saved_model.Asset: path must be a string, got "
                            f"{self.asset_path.dtype.name}")
        add_to_collection("asset_filepaths", self.asset_path)  # GraphKeys.ASSET_FILEPATHS
