"""``ImageDataGenerator``: real-time image augmentation (Keras's options), ``flow`` over
arrays and ``flow_from_directory`` over one subdirectory per class; the iterators are
``keras.utils.Sequence``s that ``fit`` takes directly."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from flowmesh.keras.preprocessing import image_utils
from flowmesh.keras.utils.data_utils import Sequence


class Iterator(Sequence):
    """Batches of ``n`` samples' indices (shuffled each epoch with ``shuffle``); subclasses
    build a batch in ``_get_batches_of_transformed_samples``."""

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")

    def __init__(self, n: int, batch_size: int, shuffle: bool, seed: int | None):
        super().__init__()
        self.n, self.batch_size, self.shuffle, self.seed = n, batch_size, shuffle, seed
        self.batch_index, self.total_batches_seen = 0, 0
        self.lock = threading.Lock()
        self.index_array: np.ndarray | None = None

    def _set_index_array(self) -> None:
        self.index_array = np.arange(self.n)
        if self.shuffle:
            self.index_array = np.random.permutation(self.n)

    def __getitem__(self, idx: int) -> Any:
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length {len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        return self._get_batches_of_transformed_samples(self.index_array[self.batch_size * idx:
                                                                          self.batch_size * (idx + 1)])

    def __len__(self) -> int:
        return (self.n + self.batch_size - 1) // self.batch_size

    def on_epoch_end(self) -> None:
        self._set_index_array()

    def reset(self) -> None:
        self.batch_index = 0

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        with self.lock:
            if self.batch_index == 0 or self.index_array is None:
                self._set_index_array()
            start = self.batch_index * self.batch_size
            self.batch_index = (self.batch_index + 1) % len(self)
            self.total_batches_seen += 1
            index = self.index_array[start:start + self.batch_size]
        return self._get_batches_of_transformed_samples(index)

    next = __next__

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        raise NotImplementedError


class NumpyArrayIterator(Iterator):
    """Augmented batches of arrays ``x`` (``[n, h, w, c]``) with ``y`` and ``sample_weight``."""

    def __init__(self, x: Any, y: Any, image_data_generator: Any, batch_size: int = 32, shuffle: bool = False,
                 sample_weight: Any = None, seed: int | None = None, data_format: str | None = None,
                 save_to_dir: str | None = None, save_prefix: str = "", save_format: str = "png",
                 subset: str | None = None, ignore_class_split: bool = False, dtype: Any = None):
        self.dtype = dtype or "float32"
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input data in `NumpyArrayIterator` should have rank 4. You passed an array with "
                             f"shape {x.shape}")
        if y is not None and len(x) != len(y):
            raise ValueError(f"`x` (images tensor) and `y` (labels) should have the same length. Found: "
                             f"x.shape = {x.shape}, y.shape = {np.asarray(y).shape}")
        if subset is not None:
            split = image_data_generator._validation_split
            at = int(len(x) * split)
            part = slice(None, at) if subset == "validation" else slice(at, None)
            x = x[part]
            y = None if y is None else np.asarray(y)[part]
            sample_weight = None if sample_weight is None else np.asarray(sample_weight)[part]
        self.x, self.y = x, None if y is None else np.asarray(y)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.image_data_generator = image_data_generator
        self.data_format = image_utils._image_format(data_format)
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        super().__init__(len(x), batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        batch = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        for i, j in enumerate(index_array):
            params = self.image_data_generator.get_random_transform(self.x[j].shape)
            sample = self.image_data_generator.apply_transform(self.x[j].astype(self.dtype), params)
            batch[i] = self.image_data_generator.standardize(sample)
        if self.save_to_dir:
            for i, j in enumerate(index_array):
                name = f"{self.save_prefix}_{j}_{np.random.randint(10000)}.{self.save_format}"
                image_utils.save_img(os.path.join(self.save_to_dir, name), batch[i], self.data_format)
        output: tuple = (batch,)
        if self.y is None:
            return batch
        output += (self.y[index_array],)
        if self.sample_weight is not None:
            output += (self.sample_weight[index_array],)
        return output


class DirectoryIterator(Iterator):
    """Augmented batches of the images under ``directory/<class>/`` (``class_mode``:
    ``categorical``, ``binary``, ``sparse``, ``input`` or None)."""

    def __init__(self, directory: str, image_data_generator: Any, target_size: Any = (256, 256),
                 color_mode: str = "rgb", classes: Any = None, class_mode: str | None = "categorical",
                 batch_size: int = 32, shuffle: bool = True, seed: int | None = None, data_format: str | None = None,
                 save_to_dir: str | None = None, save_prefix: str = "", save_format: str = "png",
                 follow_links: bool = False, subset: str | None = None, interpolation: str = "nearest",
                 keep_aspect_ratio: bool = False, dtype: Any = None):
        if class_mode not in ("categorical", "binary", "sparse", "input", None):
            raise ValueError(f'Invalid class_mode: {class_mode}; expected one of "categorical", "binary", '
                             '"sparse", "input" or None.')
        self.directory, self.image_data_generator = directory, image_data_generator
        self.target_size, self.color_mode, self.class_mode = tuple(target_size), color_mode, class_mode
        self.data_format, self.dtype = image_utils._image_format(data_format), dtype or "float32"
        self.interpolation, self.keep_aspect_ratio = interpolation, keep_aspect_ratio
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        channels = {"rgb": 3, "rgba": 4, "grayscale": 1}[color_mode]
        self.image_shape = self.target_size + (channels,) if self.data_format == "channels_last" else \
            (channels,) + self.target_size
        classes = classes or sorted(d for d in os.listdir(directory) if os.path.isdir(os.path.join(directory, d)))
        self.class_indices = {name: i for i, name in enumerate(classes)}
        self.num_classes = len(classes)
        self.filenames, labels = [], []
        for name in classes:
            files = _image_files(os.path.join(directory, name), follow_links)
            files = _subset(files, subset, image_data_generator._validation_split)
            self.filenames += [os.path.relpath(f, directory) for f in files]
            labels += [self.class_indices[name]] * len(files)
        self.classes = np.asarray(labels, dtype="int32")
        self.filepaths = [os.path.join(directory, f) for f in self.filenames]
        self.samples = len(self.filenames)
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        batch = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        for i, j in enumerate(index_array):
            img = image_utils.load_img(self.filepaths[j], color_mode=self.color_mode, target_size=self.target_size,
                                       interpolation=self.interpolation, keep_aspect_ratio=self.keep_aspect_ratio)
            x = image_utils.img_to_array(img, data_format=self.data_format)
            params = self.image_data_generator.get_random_transform(x.shape)
            batch[i] = self.image_data_generator.standardize(self.image_data_generator.apply_transform(x, params))
        if self.class_mode == "input":
            return batch, batch.copy()
        if self.class_mode == "sparse":
            return batch, self.classes[index_array].astype(self.dtype)
        if self.class_mode == "binary":
            return batch, self.classes[index_array].astype(self.dtype)
        if self.class_mode == "categorical":
            return batch, np.eye(self.num_classes, dtype=self.dtype)[self.classes[index_array]]
        return batch


def _image_files(directory: str, follow_links: bool) -> list[str]:
    found = []
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links)):
        found += [os.path.join(root, f) for f in sorted(files) if f.lower().endswith(image_utils.EXTENSIONS)]
    return found


def _subset(files: list[str], subset: str | None, split: float) -> list[str]:
    if subset is None or not split:
        return files
    at = int(split * len(files))
    return files[:at] if subset == "validation" else files[at:]


class ImageDataGenerator:
    """Random augmentation and normalization of image batches (Keras's arguments; transforms
    run in NumPy, see :func:`image_utils.apply_affine_transform`)."""

    def __init__(self, featurewise_center: bool = False, samplewise_center: bool = False,
                 featurewise_std_normalization: bool = False, samplewise_std_normalization: bool = False,
                 zca_whitening: bool = False, zca_epsilon: float = 1e-6, rotation_range: float = 0,
                 width_shift_range: Any = 0.0, height_shift_range: Any = 0.0, brightness_range: Any = None,
                 shear_range: float = 0.0, zoom_range: Any = 0.0, channel_shift_range: float = 0.0,
                 fill_mode: str = "nearest", cval: float = 0.0, horizontal_flip: bool = False,
                 vertical_flip: bool = False, rescale: float | None = None, preprocessing_function: Any = None,
                 data_format: str | None = None, validation_split: float = 0.0, interpolation_order: int = 1,
                 dtype: Any = None):
        self.featurewise_center, self.samplewise_center = featurewise_center, samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening, self.zca_epsilon = zca_whitening, zca_epsilon
        self.rotation_range, self.shear_range = rotation_range, shear_range
        self.width_shift_range, self.height_shift_range = width_shift_range, height_shift_range
        self.brightness_range, self.channel_shift_range = brightness_range, channel_shift_range
        self.fill_mode, self.cval = fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale, self.preprocessing_function = rescale, preprocessing_function
        self.interpolation_order, self.dtype = interpolation_order, dtype or "float32"
        self.data_format = image_utils._image_format(data_format)
        first = self.data_format == "channels_first"
        self.channel_axis, self.row_axis, self.col_axis = (1, 2, 3) if first else (3, 1, 2)
        if not 0 <= validation_split < 1:
            raise ValueError(f"`validation_split` must be strictly between 0 and 1. Received: {validation_split}")
        self._validation_split = validation_split
        self.zoom_range = [1 - zoom_range, 1 + zoom_range] if np.isscalar(zoom_range) else list(zoom_range)
        if len(self.zoom_range) != 2:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two floats. Received: {zoom_range}")
        self.mean = self.std = self.zca_whitening_matrix = None

    def flow(self, x: Any, y: Any = None, batch_size: int = 32, shuffle: bool = True, sample_weight: Any = None,
             seed: int | None = None, save_to_dir: str | None = None, save_prefix: str = "",
             save_format: str = "png", ignore_class_split: bool = False, subset: str | None = None) -> Any:
        return NumpyArrayIterator(x, y, self, batch_size, shuffle, sample_weight, seed, self.data_format,
                                  save_to_dir, save_prefix, save_format, subset, ignore_class_split, self.dtype)

    def flow_from_directory(self, directory: str, target_size: Any = (256, 256), color_mode: str = "rgb",
                            classes: Any = None, class_mode: str | None = "categorical", batch_size: int = 32,
                            shuffle: bool = True, seed: int | None = None, save_to_dir: str | None = None,
                            save_prefix: str = "", save_format: str = "png", follow_links: bool = False,
                            subset: str | None = None, interpolation: str = "nearest",
                            keep_aspect_ratio: bool = False) -> Any:
        return DirectoryIterator(directory, self, target_size, color_mode, classes, class_mode, batch_size, shuffle,
                                 seed, self.data_format, save_to_dir, save_prefix, save_format, follow_links, subset,
                                 interpolation, keep_aspect_ratio, self.dtype)

    def standardize(self, x: np.ndarray) -> np.ndarray:
        """``preprocessing_function``, ``rescale``, then the sample- and feature-wise
        normalizations (the latter need :meth:`fit`)."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x = x * self.rescale
        if self.samplewise_center:
            x = x - np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x = x / (np.std(x, keepdims=True) + 1e-6)
        if self.featurewise_center and self.mean is not None:
            x = x - self.mean
        if self.featurewise_std_normalization and self.std is not None:
            x = x / (self.std + 1e-6)
        if self.zca_whitening and self.zca_whitening_matrix is not None:
            flat = x.reshape(-1, np.prod(x.shape[-3:]))
            x = (flat @ self.zca_whitening_matrix).reshape(x.shape)
        return x

    def get_random_transform(self, img_shape: Any, seed: int | None = None) -> dict[str, Any]:
        """The random parameters of one sample's transform."""
        if seed is not None:
            np.random.seed(seed)
        rows, cols = img_shape[self.row_axis - 1], img_shape[self.col_axis - 1]
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) if self.rotation_range else 0

        def shift(value: Any, size: int) -> float:
            if not value:
                return 0
            if isinstance(value, (list, tuple, np.ndarray)):
                return float(np.random.choice(value))
            offset = np.random.uniform(-value, value)
            return offset * size if np.max(np.abs(value)) < 1 else offset

        tx, ty = shift(self.height_shift_range, rows), shift(self.width_shift_range, cols)
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        zx, zy = (1, 1) if self.zoom_range == [1, 1] else np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": self.horizontal_flip and np.random.random() < 0.5,
                "flip_vertical": self.vertical_flip and np.random.random() < 0.5,
                "channel_shift_intensity": np.random.uniform(-self.channel_shift_range, self.channel_shift_range)
                if self.channel_shift_range else None,
                "brightness": np.random.uniform(*self.brightness_range) if self.brightness_range else None}

    def apply_transform(self, x: np.ndarray, transform_parameters: dict[str, Any]) -> np.ndarray:
        """One sample (``[h, w, c]``) transformed by ``transform_parameters``."""
        p = transform_parameters
        row, col, channel = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        x = image_utils.apply_affine_transform(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0),
                                               p.get("shear", 0), p.get("zx", 1), p.get("zy", 1), row_axis=row,
                                               col_axis=col, channel_axis=channel, fill_mode=self.fill_mode,
                                               cval=self.cval, order=self.interpolation_order)
        if p.get("channel_shift_intensity") is not None:
            x = image_utils.apply_channel_shift(x, p["channel_shift_intensity"], channel)
        if p.get("flip_horizontal", False):
            x = np.flip(x, col)
        if p.get("flip_vertical", False):
            x = np.flip(x, row)
        if p.get("brightness") is not None:
            x = image_utils.apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x: np.ndarray, seed: int | None = None) -> np.ndarray:
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x: Any, augment: bool = False, rounds: int = 1, seed: int | None = None) -> None:
        """Feature-wise mean, standard deviation and ZCA matrix of ``x`` (``[n, h, w, c]``)."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError(f"Input to `.fit()` should have rank 4. Got array with shape: {x.shape}")
        if seed is not None:
            np.random.seed(seed)
        if augment:
            x = np.concatenate([np.stack([self.random_transform(s) for s in x]) for _ in range(rounds)])
        axes = (0, self.row_axis, self.col_axis)
        shape = [1, 1, 1]
        shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.mean(x, axis=axes).reshape(shape)
            x = x - self.mean
        if self.featurewise_std_normalization:
            self.std = np.std(x, axis=axes).reshape(shape)
            x = x / (self.std + 1e-6)
        if self.zca_whitening:
            flat = x.reshape(len(x), -1)
            sigma = flat.T @ flat / flat.shape[0]
            u, s, _ = np.linalg.svd(sigma)
            self.zca_whitening_matrix = (u * (1.0 / np.sqrt(s[np.newaxis] + self.zca_epsilon))) @ u.T
