"""File I/O on local paths and fsspec URLs, with atomic writes (checkpoints, event files,
TFRecords, ``gfile``, the file ops).

Local paths (and ``file://`` URLs) use the operating system directly: writes go to a
temporary file in the destination directory, are flushed and ``fsync``-ed, then renamed
over the destination (``os.replace``) and the directory is ``fsync``-ed, so a reader sees
either the old file or the complete new one, even after a crash or a ``SIGKILL``.

Other URLs (``s3://``, ``gs://``, ``hdfs://``, ``memory://`` ...) go through fsspec when
the user has that filesystem installed. Object stores (S3, GCS, Azure) publish an object
only when its upload completes, so they are written in place (an upload that fails is
discarded); other remote filesystems use a temporary file and a rename.

With ``FLOWMESH_WRITE_ROOTS`` set (a server's confinement, ``docs/security.md``), every
function that creates, replaces or deletes files refuses paths outside those roots.

Every function raises flowmesh errors (``NotFoundError``, ``PermissionDeniedError``,
``ResourceExhaustedError``, ``UnavailableError``...) naming the path, never a bare
``OSError``.
"""

from __future__ import annotations

import contextlib
import errno
import glob as _glob
import os
import posixpath
import shutil
import uuid
from collections.abc import Iterator
from typing import IO, Any

from flowmesh import config as _config
from flowmesh.errors import (
    AlreadyExistsError,
    NotFoundError,
    OpError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnavailableError,
    UnknownError,
)

_OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl"})


# --- path helpers ----------------------------------------------------------------------------
def is_url(path: str) -> bool:
    """True for ``scheme://...`` paths other than ``file://``."""
    return "://" in path and not path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def is_absolute(path: str) -> bool:
    """URLs are absolute; local paths follow ``os.path.isabs``."""
    return is_url(path) or os.path.isabs(_local(path))


def join(*parts: str) -> str:
    """Joins path components (``posixpath`` rules for URLs)."""
    if is_url(parts[0]):
        return posixpath.join(*parts)
    return os.path.join(*parts)


def dirname(path: str) -> str:
    return posixpath.dirname(path) if is_url(path) else os.path.dirname(path)


def basename(path: str) -> str:
    return posixpath.basename(path) if is_url(path) else os.path.basename(path)


def relpath(path: str, start: str) -> str:
    """``path`` relative to ``start`` (URLs sharing the prefix are supported)."""
    if is_url(path) or is_url(start):
        prefix = start.rstrip("/") + "/"
        return path[len(prefix):] if path.startswith(prefix) else path
    return os.path.relpath(_local(path), _local(start))


def _fs(path: str) -> tuple[Any, str]:
    """The fsspec filesystem and the filesystem-local path of a URL."""
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec is a declared dependency
        raise UnavailableError(None, None, f"Cannot open {path}: install fsspec for URL paths") from None
    try:
        return fsspec.core.url_to_fs(path)
    except (ImportError, ValueError) as exc:
        scheme = path.split("://", 1)[0]
        raise UnavailableError(
            None, None,
            f"Cannot open {path}: no filesystem for '{scheme}://' is available ({exc}). Install "
            f"the fsspec implementation for it (e.g. s3fs for s3://, gcsfs for gs://).",
        ) from None


def _is_object_store(path: str) -> bool:
    return is_url(path) and path.split("://", 1)[0].lower() in _OBJECT_STORES


# --- errors ------------------------------------------------------------------------------------
def os_error(exc: BaseException, path: str, action: str) -> OpError:
    """Converts an ``OSError`` (or fsspec error) into the matching flowmesh error."""
    if isinstance(exc, OpError):
        return exc
    code = getattr(exc, "errno", None)
    detail = f"{action} {path}: {exc}"
    if isinstance(exc, FileNotFoundError) or code == errno.ENOENT:
        return NotFoundError(None, None, f"{detail}. Check that the path exists.")
    if code == errno.EROFS:  # TensorFlow's code for it too
        return PermissionDeniedError(None, None, f"{detail}. The file system is mounted read-only: "
                                     "write the checkpoint somewhere writable.")
    if isinstance(exc, PermissionError) or code in (errno.EACCES, errno.EPERM):
        return PermissionDeniedError(None, None, f"{detail}. Check the permissions of the path.")
    if isinstance(exc, FileExistsError):
        return AlreadyExistsError(None, None, detail)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return ResourceExhaustedError(None, None, f"{detail}. Free some disk space.")
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return UnavailableError(None, None, detail)
    return UnknownError(None, None, detail)


@contextlib.contextmanager
def _converted(path: str, action: str) -> Iterator[None]:
    try:
        yield
    except OpError:
        raise
    except (OSError, ValueError) as exc:
        raise os_error(exc, path, action) from exc


# --- queries -----------------------------------------------------------------------------------
def exists(path: str) -> bool:
    if not is_url(path):
        return os.path.exists(_local(path))
    fs, p = _fs(path)
    with _converted(path, "Checking"):
        return bool(fs.exists(p))


def isdir(path: str) -> bool:
    if not is_url(path):
        return os.path.isdir(_local(path))
    fs, p = _fs(path)
    with _converted(path, "Checking"):
        return bool(fs.isdir(p))


def size(path: str) -> int:
    """Size of a file in bytes. Raises NotFoundError when it does not exist."""
    with _converted(path, "Reading the size of"):
        if not is_url(path):
            return os.stat(_local(path)).st_size
        fs, p = _fs(path)
        return int(fs.size(p))


def getmtime(path: str) -> float:
    """Modification time (seconds since the epoch)."""
    with _converted(path, "Reading the modification time of"):
        if not is_url(path):
            return os.stat(_local(path)).st_mtime
        fs, p = _fs(path)
        modified = fs.modified(p)
        return float(modified.timestamp())


def glob(pattern: str) -> list[str]:
    """Paths matching a glob pattern, sorted (URLs keep their scheme)."""
    if not is_url(pattern):
        return sorted(_glob.glob(_local(pattern)))
    fs, p = _fs(pattern)
    with _converted(pattern, "Listing"):
        found = fs.glob(p)
    return sorted(fs.unstrip_protocol(m) for m in found)


# --- confinement ---------------------------------------------------------------------------------
def check_writable(path: str) -> None:
    """Refuses ``path`` when ``FLOWMESH_WRITE_ROOTS`` is set and it lies outside every root
    (local paths are compared after resolving ``..`` and symbolic links).

    Raises:
        PermissionDeniedError: naming the path and the roots.
    """
    roots = [r for r in _config.WRITE_ROOTS.get().split(os.pathsep) if r]
    if not roots:
        return
    if is_url(path) and not path.startswith("file://"):
        allowed = any(path.rstrip("/").startswith(r.rstrip("/")) for r in roots if is_url(r))
    else:
        real = os.path.realpath(_local(path))
        allowed = any(os.path.commonpath([real, os.path.realpath(_local(r))])
                      == os.path.realpath(_local(r)) for r in roots if not is_url(r) or r.startswith("file://"))
    if not allowed:
        raise PermissionDeniedError(
            None, None, f"Writing {path} is not allowed on this server: files may only be written "
            f"under {os.pathsep.join(roots)} (FLOWMESH_WRITE_ROOTS)")


# --- mutations -----------------------------------------------------------------------------------
def makedirs(path: str) -> None:
    """Creates a directory and its parents (no error when it exists)."""
    if not path:
        return
    check_writable(path)
    with _converted(path, "Creating directory"):
        if not is_url(path):
            os.makedirs(_local(path), exist_ok=True)
        else:
            fs, p = _fs(path)
            fs.makedirs(p, exist_ok=True)


def remove(path: str) -> None:
    """Deletes a file; a missing file is not an error."""
    check_writable(path)
    try:
        if not is_url(path):
            os.remove(_local(path))
        else:
            fs, p = _fs(path)
            fs.rm(p)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise os_error(exc, path, "Deleting") from exc


def remove_tree(path: str) -> None:
    """Deletes a directory tree; a missing directory is not an error."""
    check_writable(path)
    try:
        if not is_url(path):
            shutil.rmtree(_local(path))
        else:
            fs, p = _fs(path)
            fs.rm(p, recursive=True)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise os_error(exc, path, "Deleting") from exc


def rename(src: str, dst: str) -> None:
    """Moves ``src`` to ``dst``, replacing it (atomic for local paths)."""
    check_writable(src)
    check_writable(dst)
    with _converted(src, f"Renaming to {dst}:"):
        if not is_url(src):
            os.replace(_local(src), _local(dst))
            _fsync_dir(dirname(_local(dst)))
        else:
            fs, p = _fs(src)
            _, q = _fs(dst)
            fs.mv(p, q)


def _fsync_dir(directory: str) -> None:
    """Makes a rename in ``directory`` durable (POSIX; a no-op where unsupported)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --- reading -------------------------------------------------------------------------------------
def open_read(path: str) -> IO[bytes]:
    """Opens a file for binary reading. Raises NotFoundError when it is missing."""
    with _converted(path, "Opening"):
        if not is_url(path):
            return open(_local(path), "rb", buffering=0)  # noqa: SIM115 - caller closes
        fs, p = _fs(path)
        return fs.open(p, "rb")


def read_bytes(path: str) -> bytes:
    with open_read(path) as f, _converted(path, "Reading"):
        return f.read()


# --- atomic writing -----------------------------------------------------------------------------
@contextlib.contextmanager
def atomic_write(path: str) -> Iterator[IO[bytes]]:
    """Opens ``path`` for writing so that it appears complete or not at all.

    Yields a binary file. On success the data is flushed, fsync-ed and moved into place;
    on an exception the partial file is deleted and ``path`` is left untouched.

    Raises:
        PermissionDeniedError, ResourceExhaustedError, NotFoundError...: naming the path.
    """
    check_writable(path)
    if not is_url(path):
        with _atomic_local(_local(path)) as f:
            yield f
    elif _is_object_store(path):
        with _direct_remote(path) as f:
            yield f
    else:
        with _renamed_remote(path) as f:
            yield f


def temp_name(path: str) -> str:
    """The temporary file ``atomic_write`` uses for ``path`` (same directory)."""
    return f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:12]}"


@contextlib.contextmanager
def _atomic_local(path: str) -> Iterator[IO[bytes]]:
    tmp = temp_name(path)
    with _converted(path, "Writing"):
        f = open(tmp, "wb", buffering=0)  # noqa: SIM115 - closed below
    try:
        with _converted(path, "Writing"):
            yield f
            os.fsync(f.fileno())
            f.close()
            os.replace(tmp, path)
        _fsync_dir(os.path.dirname(path))
    except BaseException:
        f.close()
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


@contextlib.contextmanager
def _direct_remote(path: str) -> Iterator[IO[bytes]]:
    fs, p = _fs(path)
    with _converted(path, "Writing"):
        f = fs.open(p, "wb")
    try:
        with _converted(path, "Writing"):
            yield f
            f.close()
    except BaseException:
        discard = getattr(f, "discard", None)
        with contextlib.suppress(Exception):
            if discard is not None:
                discard()
            else:
                f.close()
        raise


@contextlib.contextmanager
def _renamed_remote(path: str) -> Iterator[IO[bytes]]:
    fs, p = _fs(path)
    tmp = temp_name(p)
    with _converted(path, "Writing"):
        f = fs.open(tmp, "wb")
    try:
        with _converted(path, "Writing"):
            yield f
            f.close()
            fs.mv(tmp, p)
    except BaseException:
        with contextlib.suppress(Exception):
            f.close()
        with contextlib.suppress(Exception):
            fs.rm(tmp)
        raise


def write_bytes_atomic(path: str, data: bytes) -> None:
    """Writes ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    with atomic_write(path) as f:
        f.write(data)
