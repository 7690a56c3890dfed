"""Image files and arrays (Pillow) and random affine augmentation in NumPy (bilinear,
``fill_mode`` ``nearest``/``constant``/``reflect``/``wrap``, Keras's transform conventions);
re-exported by :mod:`flowmesh.keras.preprocessing.image`."""

from __future__ import annotations

from typing import Any

import numpy as np

EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".tif", ".tiff", ".gif")
_PIL_RESAMPLE = {"nearest": 0, "bilinear": 2, "bicubic": 3, "hamming": 5, "box": 4, "lanczos": 1}


def _image_format(data_format: str | None) -> str:
    from flowmesh.keras import backend

    return data_format or backend.image_data_format()


def load_img(path: Any, grayscale: bool = False, color_mode: str = "rgb", target_size: Any = None,
             interpolation: str = "nearest", keep_aspect_ratio: bool = False) -> Any:
    """A Pillow image from a file (``color_mode`` ``rgb``, ``rgba`` or ``grayscale``),
    resized to ``target_size`` ``(height, width)`` (centre-cropped to its aspect ratio with
    ``keep_aspect_ratio``)."""
    from PIL import Image

    if grayscale:
        color_mode = "grayscale"
    with open(path, "rb") as f:
        img = Image.open(f)
        img.load()
    mode = {"grayscale": "L", "rgba": "RGBA", "rgb": "RGB"}.get(color_mode)
    if mode is None:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode != mode and not (mode == "L" and img.mode in ("L", "I;16", "I")):
        img = img.convert(mode)
    if target_size is not None:
        height, width = target_size
        if img.size != (width, height):
            if interpolation not in _PIL_RESAMPLE:
                raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported methods are "
                                 f"{', '.join(_PIL_RESAMPLE)}")
            if keep_aspect_ratio:
                w, h = img.size
                crop_h, crop_w = min(h, w * height // width), min(w, h * width // height)
                top, left = (h - crop_h) // 2, (w - crop_w) // 2
                img = img.crop((left, top, left + crop_w, top + crop_h))
            img = img.resize((width, height), _PIL_RESAMPLE[interpolation])
    return img


def img_to_array(img: Any, data_format: str | None = None, dtype: Any = None) -> np.ndarray:
    """A ``[h, w, c]`` (or ``[c, h, w]``) float array of a Pillow image."""
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 2:
        x = x[:, :, None]
    elif x.ndim != 3:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return x.transpose(2, 0, 1) if _image_format(data_format) == "channels_first" else x


def array_to_img(x: Any, data_format: str | None = None, scale: bool = True, dtype: Any = None) -> Any:
    """A Pillow image of a 3-D array (rescaled to 0..255 with ``scale``)."""
    from PIL import Image

    x = np.asarray(x, dtype=dtype or "float32")
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if _image_format(data_format) == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        peak = np.max(x)
        if peak != 0:
            x = x / peak
        x = x * 255
    channels = x.shape[2]
    if channels not in (1, 3, 4):
        raise ValueError(f"Unsupported channel number: {channels}")
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[channels]
    pixels = x.astype("uint8")
    return Image.fromarray(pixels[:, :, 0] if channels == 1 else pixels, mode)


def save_img(path: Any, x: Any, data_format: str | None = None, file_format: str | None = None, scale: bool = True,
             **kwargs: Any) -> None:
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and (file_format == "jpg" or file_format == "jpeg" or str(path).lower().endswith(
            (".jpg", ".jpeg"))):
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def smart_resize(x: Any, size: Any, interpolation: str = "bilinear") -> Any:
    """A centre crop to ``size``'s aspect ratio, then a resize (a graph tensor)."""
    from flowmesh.keras.layers.preprocessing import smart_resize as resize

    return resize(x, size, interpolation)


# --- affine transforms ----------------------------------------------------------------------
def _sample(channel: np.ndarray, rows: np.ndarray, cols: np.ndarray, fill_mode: str, cval: float) -> np.ndarray:
    """Bilinear interpolation of ``channel`` at (``rows``, ``cols``) with scipy.ndimage's
    boundary modes."""
    h, w = channel.shape

    def index(i: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        inside = (i >= 0) & (i < n)
        if fill_mode == "nearest":
            return np.clip(i, 0, n - 1), np.ones_like(inside)
        if fill_mode == "wrap":
            return np.mod(i, n), np.ones_like(inside)
        if fill_mode == "reflect":
            period = 2 * n
            j = np.mod(i, period)
            return np.where(j >= n, period - 1 - j, j), np.ones_like(inside)
        return np.clip(i, 0, n - 1), inside

    r0, c0 = np.floor(rows).astype(int), np.floor(cols).astype(int)
    fr, fc = rows - r0, cols - c0
    out = np.zeros(rows.shape, np.float64)
    valid = np.zeros(rows.shape, np.float64)
    for dr, wr in ((0, 1 - fr), (1, fr)):
        for dc, wc in ((0, 1 - fc), (1, fc)):
            ri, rok = index(r0 + dr, h)
            ci, cok = index(c0 + dc, w)
            weight = wr * wc
            ok = rok & cok
            out += np.where(ok, channel[ri, ci], cval) * weight
            valid += weight
    return out


def apply_affine_transform(x: np.ndarray, theta: float = 0, tx: float = 0, ty: float = 0, shear: float = 0,
                           zx: float = 1, zy: float = 1, row_axis: int = 1, col_axis: int = 2,
                           channel_axis: int = 0, fill_mode: str = "nearest", cval: float = 0.0,
                           order: int = 1) -> np.ndarray:
    """Rotation by ``theta`` degrees, shift by ``(tx, ty)`` pixels, shear by ``shear``
    degrees and zoom by ``(zx, zy)``, about the image centre (Keras's conventions)."""
    if order not in (0, 1):
        raise ValueError(f"flowmesh's apply_affine_transform interpolates with order 0 or 1, got {order}")
    if fill_mode not in ("constant", "nearest", "reflect", "wrap"):
        raise ValueError(f"Invalid fill_mode {fill_mode!r}")
    matrix = np.eye(3)
    if theta:
        t = np.deg2rad(theta)
        matrix = matrix @ np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    if tx or ty:
        matrix = matrix @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
    if shear:
        s = np.deg2rad(shear)
        matrix = matrix @ np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]])
    if zx != 1 or zy != 1:
        matrix = matrix @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
    if np.allclose(matrix, np.eye(3)):
        return x
    h, w = x.shape[row_axis], x.shape[col_axis]
    ox, oy = float(h) / 2 - 0.5, float(w) / 2 - 0.5
    centred = np.array([[1, 0, ox], [0, 1, oy], [0, 0, 1]]) @ matrix @ np.array([[1, 0, -ox], [0, 1, -oy],
                                                                                   [0, 0, 1]])
    moved = np.moveaxis(x, [channel_axis, row_axis, col_axis], [0, 1, 2])
    rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    src_r = centred[0, 0] * rows + centred[0, 1] * cols + centred[0, 2]
    src_c = centred[1, 0] * rows + centred[1, 1] * cols + centred[1, 2]
    if order == 0:
        src_r, src_c = np.round(src_r), np.round(src_c)
    out = np.stack([_sample(channel.astype(np.float64), src_r, src_c, fill_mode, cval) for channel in moved])
    return np.moveaxis(out, [0, 1, 2], [channel_axis, row_axis, col_axis]).astype(x.dtype)


def random_rotation(x: np.ndarray, rg: float, row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                    fill_mode: str = "nearest", cval: float = 0.0, interpolation_order: int = 1) -> np.ndarray:
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(x, theta=theta, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shift(x: np.ndarray, wrg: float, hrg: float, row_axis: int = 1, col_axis: int = 2,
                 channel_axis: int = 0, fill_mode: str = "nearest", cval: float = 0.0,
                 interpolation_order: int = 1) -> np.ndarray:
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx, ty = np.random.uniform(-hrg, hrg) * h, np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(x, tx=tx, ty=ty, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_shear(x: np.ndarray, intensity: float, row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                 fill_mode: str = "nearest", cval: float = 0.0, interpolation_order: int = 1) -> np.ndarray:
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(x, shear=shear, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def random_zoom(x: np.ndarray, zoom_range: Any, row_axis: int = 1, col_axis: int = 2, channel_axis: int = 0,
                fill_mode: str = "nearest", cval: float = 0.0, interpolation_order: int = 1) -> np.ndarray:
    if len(zoom_range) != 2:
        raise ValueError(f"`zoom_range` should be a tuple or list of two floats. Received: {zoom_range}")
    zx, zy = (1, 1) if zoom_range[0] == 1 and zoom_range[1] == 1 else np.random.uniform(zoom_range[0],
                                                                                       zoom_range[1], 2)
    return apply_affine_transform(x, zx=zx, zy=zy, row_axis=row_axis, col_axis=col_axis, channel_axis=channel_axis,
                                  fill_mode=fill_mode, cval=cval, order=interpolation_order)


def apply_channel_shift(x: np.ndarray, intensity: float, channel_axis: int = 0) -> np.ndarray:
    """Adds ``intensity`` to every channel, clipped to the image's range."""
    moved = np.rollaxis(x, channel_axis, 0)
    low, high = np.min(moved), np.max(moved)
    shifted = [np.clip(channel + intensity, low, high) for channel in moved]
    return np.rollaxis(np.stack(shifted, axis=0), 0, channel_axis + 1)


def random_channel_shift(x: np.ndarray, intensity_range: float, channel_axis: int = 0) -> np.ndarray:
    return apply_channel_shift(x, np.random.uniform(-intensity_range, intensity_range), channel_axis)


def apply_brightness_shift(x: np.ndarray, brightness: float, scale: bool = True) -> np.ndarray:
    """The image's brightness times ``brightness`` (through Pillow's ``ImageEnhance``)."""
    from PIL import ImageEnhance

    x_min, x_max = np.min(x), np.max(x)
    local_scale = (x_min < 0) or (x_max > 255)
    img = array_to_img(x, scale=local_scale or scale)
    out = img_to_array(ImageEnhance.Brightness(img).enhance(brightness))
    if not scale and local_scale:
        out = out / 255 * (x_max - x_min) + x_min
    return out


def random_brightness(x: np.ndarray, brightness_range: Any, scale: bool = True) -> np.ndarray:
    if len(brightness_range) != 2:
        raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
    return apply_brightness_shift(x, np.random.uniform(brightness_range[0], brightness_range[1]), scale)
