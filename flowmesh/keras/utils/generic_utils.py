"""``tf.keras.utils`` helpers: custom objects and serialization registry, logging switches,
``TimedThread``, data packing, ``normalize``, ``to_ordinal``, ``set_random_seed``,
``get_source_inputs``, ``get_file`` (the Keras cache only: no network), and
``warmstart_embedding_matrix``."""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

_CUSTOM_OBJECTS: dict[str, Any] = {}
_REGISTERED_NAMES: dict[Any, str] = {}
_INTERACTIVE_LOGGING = [True]


def get_custom_objects() -> dict[str, Any]:
    """The global dict of custom objects (names -> classes/functions) that loading models,
    layers and losses looks names up in (after ``custom_objects`` arguments)."""
    return _CUSTOM_OBJECTS


class CustomObjectScope:
    """``with CustomObjectScope({"MyLayer": MyLayer}):`` makes the objects known inside."""

    def __init__(self, *args: dict[str, Any]):
        self.custom_objects = args
        self.backup: dict[str, Any] | None = None

    def __enter__(self) -> CustomObjectScope:
        self.backup = dict(_CUSTOM_OBJECTS)
        for objects in self.custom_objects:
            _CUSTOM_OBJECTS.update(objects or {})
        return self

    def __exit__(self, *exc: Any) -> None:
        _CUSTOM_OBJECTS.clear()
        _CUSTOM_OBJECTS.update(self.backup or {})


def custom_object_scope(*args: dict[str, Any]) -> CustomObjectScope:
    return CustomObjectScope(*args)


def register_keras_serializable(package: str = "Custom", name: str | None = None) -> Any:
    """A class decorator registering ``package>name`` as a custom object."""

    def decorator(obj: Any) -> Any:
        key = f"{package}>{name or obj.__name__}"
        if isinstance(obj, type) and not hasattr(obj, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _CUSTOM_OBJECTS[key] = obj
        _REGISTERED_NAMES[obj] = key
        return obj

    return decorator


def get_registered_name(obj: Any) -> str:
    """The name ``obj`` was registered under, else its ``__name__``."""
    return _REGISTERED_NAMES.get(obj, getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name: str, custom_objects: dict | None = None, module_objects: dict | None = None) -> Any:
    """The object registered (or given) under ``name``, else None."""
    for table in (_CUSTOM_OBJECTS, custom_objects or {}, module_objects or {}):
        if name in table:
            return table[name]
    return None


def serialize_keras_object(instance: Any) -> Any:
    """``{"class_name", "config"}`` of an object with ``get_config``; a function's name."""
    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        return {"class_name": get_registered_name(type(instance)), "config": instance.get_config()}
    if hasattr(instance, "__name__"):
        return get_registered_name(instance)
    raise ValueError(f"Cannot serialize {instance!r} since it doesn't implement `get_config()`.")


def deserialize_keras_object(identifier: Any, module_objects: dict | None = None, custom_objects: dict | None = None,
                             printable_module_name: str = "object") -> Any:
    """The object for a name or ``{"class_name", "config"}`` dict (classes are rebuilt with
    ``from_config``), looked up in ``custom_objects``, the registered objects and
    ``module_objects``.

    Raises:
        ValueError: an unknown name (saying what kind of object it should be).
    """
    if identifier is None:
        return None
    name, config = (identifier["class_name"], identifier.get("config", {})) if isinstance(identifier, dict) \
        else (identifier, None)
    obj = get_registered_object(name, custom_objects, module_objects)
    if obj is None:
        raise ValueError(f"Unknown {printable_module_name}: '{name}'. Please ensure you are using a "
                         "`keras.utils.custom_object_scope` and that this object is included in the scope.")
    if config is None:
        return obj
    return obj.from_config(config) if hasattr(obj, "from_config") else obj(**config)


def enable_interactive_logging() -> None:
    _INTERACTIVE_LOGGING[0] = True


def disable_interactive_logging() -> None:
    """Progress output goes to the ``logging`` module instead of stdout."""
    _INTERACTIVE_LOGGING[0] = False


def is_interactive_logging_enabled() -> bool:
    return _INTERACTIVE_LOGGING[0]


class TimedThread:
    """Calls ``on_interval()`` every ``interval`` seconds in a daemon thread between
    ``start()`` and ``stop()`` (subclass it or pass ``on_interval=``)."""

    def __init__(self, interval: float, **kwargs: Any):
        self.interval = interval
        self._on_interval = kwargs.pop("on_interval", None)
        self._stop = threading.Event()
        self.thread: threading.Thread | None = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.on_interval()

    def on_interval(self) -> None:
        if self._on_interval is None:
            raise NotImplementedError("TimedThread: override on_interval() or pass on_interval=")
        self._on_interval()

    def start(self) -> None:
        self._stop.clear()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self.thread is not None:
            self.thread.join()

    def is_alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def __enter__(self) -> TimedThread:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """``x``, ``(x, y)`` or ``(x, y, sample_weight)`` (a lone tuple ``x`` is wrapped)."""
    if y is None:
        return (x,) if isinstance(x, (list, tuple)) else x
    return (x, y) if sample_weight is None else (x, y, sample_weight)


def unpack_x_y_sample_weight(data: Any) -> tuple[Any, Any, Any]:
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: "
                     f"{data}")


def normalize(x: Any, axis: int = -1, order: int = 2) -> np.ndarray:
    """``x`` divided by its ``order``-norm along ``axis`` (zero norms left as 1)."""
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def to_ordinal(x: Any, num_classes: int | None = None, dtype: str = "float32") -> np.ndarray:
    """Ordinal encoding: class ``k`` -> ``k`` ones then zeros, ``num_classes - 1`` entries."""
    y = np.asarray(x, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.ravel()
    num_classes = int(num_classes or y.max() + 1)
    ordinal = (np.arange(num_classes - 1)[None, :] < y[:, None]).astype(dtype)
    return ordinal.reshape(shape + (num_classes - 1,))


def set_random_seed(seed: int) -> None:
    """Seeds Python's ``random``, NumPy and the default graph's TensorFlow seed."""
    import random

    from flowmesh.ops.random_ops import set_random_seed as set_graph_seed

    if not isinstance(seed, int):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    random.seed(seed)
    np.random.seed(seed)
    set_graph_seed(seed)


def get_source_inputs(tensor: Any, layer: Any = None, node_index: int | None = None) -> list[Any]:
    """The ``Input`` tensors a Keras tensor was computed from."""
    from flowmesh.keras.engine import node as node_lib

    found = node_lib.history(tensor)
    if found is None:
        return [tensor]
    owner, index, _ = found
    node = owner._inbound_nodes[index]
    if not node.input_tensors:
        return [tensor]
    sources: list[Any] = []
    for parent in node.input_tensors:
        for source in get_source_inputs(parent):
            if all(source is not s for s in sources):
                sources.append(source)
    return sources


def get_file(fname: str | None = None, origin: str | None = None, untar: bool = False, md5_hash: str | None = None,
             file_hash: str | None = None, cache_subdir: str = "datasets", hash_algorithm: str = "auto",
             extract: bool = False, archive_format: str = "auto", cache_dir: str | None = None) -> str:
    """The path of ``fname`` in the Keras cache (``~/.keras/<cache_subdir>``, or
    ``cache_dir``), extracted with ``extract``/``untar``. flowmesh does not download: a
    missing file raises an error saying where to place it (``origin`` is where to get it).

    Raises:
        FileNotFoundError: the file is not in the cache.
    """
    if fname is None:
        if origin is None:
            raise ValueError('Please specify the "origin" argument (URL of the file to download).')
        fname = os.path.basename(origin.split("?")[0])
    base = os.path.expanduser(cache_dir or os.path.join("~", ".keras"))
    directory = os.path.join(base, cache_subdir)
    path = os.path.join(directory, fname + (".tar.gz" if untar else ""))
    if untar and os.path.isdir(os.path.join(directory, fname)):
        return os.path.join(directory, fname)  # already extracted
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is not in the Keras cache and flowmesh does not download files: fetch "
                                f"{origin or fname} yourself and place it at {path}")
    if untar or extract:
        import shutil

        target = os.path.join(directory, fname) if untar else directory
        if untar and not os.path.exists(target) or extract:
            shutil.unpack_archive(path, directory)
        return target if untar else path
    return path


def warmstart_embedding_matrix(base_vocabulary: Any, new_vocabulary: Any, base_embeddings: Any,
                               new_embeddings_initializer: Any = "uniform") -> Any:
    """An embedding matrix for ``new_vocabulary``: rows of words in ``base_vocabulary`` taken
    from ``base_embeddings``, the others drawn by ``new_embeddings_initializer``."""
    from flowmesh.core.convert import convert_to_tensor
    from flowmesh.keras import backend, initializers

    base = np.asarray(backend.get_value(base_embeddings) if hasattr(base_embeddings, "op")
                      else base_embeddings, np.float32)
    base_index = {word: i for i, word in enumerate(_as_list(base_vocabulary))}
    new_words = _as_list(new_vocabulary)
    init = initializers.get(new_embeddings_initializer)
    fresh = np.asarray(backend.get_value(init([len(new_words), base.shape[1]], dtype="float32")))
    for row, word in enumerate(new_words):
        if word in base_index:
            fresh[row] = base[base_index[word]]
    return convert_to_tensor(fresh)


def _as_list(vocabulary: Any) -> list[Any]:
    values = np.asarray(vocabulary).ravel().tolist()
    return [v.decode() if isinstance(v, bytes) else v for v in values]


def split_dataset(dataset: Any, left_size: Any = None, right_size: Any = None, shuffle: bool = False,
                  seed: int | None = None) -> tuple[Any, Any]:
    """Two ``tf.data`` datasets of NumPy data (an array or a tuple/list of arrays of one
    length) split at ``left_size``/``right_size`` (a count or a fraction; default half)."""
    from flowmesh.data.dataset import Dataset

    arrays = [np.asarray(a) for a in dataset] if isinstance(dataset, (list, tuple)) else [np.asarray(dataset)]
    total = len(arrays[0])
    if left_size is None and right_size is None:
        left_size = 0.5

    def count(size: Any) -> int | None:
        return None if size is None else int(round(size * total)) if isinstance(size, float) else int(size)

    left, right = count(left_size), count(right_size)
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left < 0 or right < 0 or left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the total number of "
                         f"samples {total}, got {left} and {right}")
    order = np.arange(total)
    if shuffle:
        np.random.RandomState(seed).shuffle(order)
    parts = [[a[order[:left]] for a in arrays], [a[order[left:left + right]] for a in arrays]]
    made = [Dataset.from_tensor_slices(tuple(p) if len(p) > 1 else p[0]) for p in parts]
    return made[0], made[1]
