"""The per-job secret every launcher creates (see ``docs/security.md``).

A launcher makes a fresh random secret per job, writes it to a file only this user can
read (mode 0600 in a private 0700 directory) and passes the file's path to every task
as ``FLOWMESH_CLUSTER_SECRET_FILE``, so the secret itself never appears in a command line
or in the environment of processes the script starts. A secret the user already set
(``FLOWMESH_CLUSTER_SECRET`` or ``_FILE``, e.g. to connect a client started by hand) is
kept as is.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Mapping

from flowmesh import config as _config
from flowmesh.distributed.auth import ClusterAuth


class JobSecret:
    """A job's secret file; :attr:`env` is what every task's environment gets.

    Example:
        >>> secret = JobSecret.create(os.environ)
        >>> env = dict(os.environ, **secret.env)      # for every task
        >>> secret.remove()                           # when the job is over
    """

    def __init__(self, env: dict[str, str], directory: str | None):
        self.env = env
        self._directory = directory

    @classmethod
    def create(cls, environ: Mapping[str, str]) -> JobSecret:
        """A new secret file, unless ``environ`` already names a secret."""
        if _config.CLUSTER_SECRET.get(environ) or _config.CLUSTER_SECRET_FILE.get(environ):
            return cls({}, None)
        directory = tempfile.mkdtemp(prefix="flowmesh-job-")  # mode 0700
        path = os.path.join(directory, "secret")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
        return cls({_config.CLUSTER_SECRET_FILE.name: path}, directory)

    @staticmethod
    def auth(environ: Mapping[str, str]) -> ClusterAuth:
        """The proofs of the secret ``environ`` names (after ``environ.update(env)``)."""
        return ClusterAuth(_config.cluster_secret(environ))

    @property
    def path(self) -> str | None:
        return self.env.get(_config.CLUSTER_SECRET_FILE.name)

    def remove(self) -> None:
        """Deletes the secret file (the job is over)."""
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
