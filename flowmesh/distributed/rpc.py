"""The control plane: unary gRPC calls carrying msgpack maps (no protoc, no pickle).

Every server exposes one gRPC service, ``flowmesh.Server``, whose methods take and return
raw bytes. A request is ``msgpack(args)``; a reply is ``msgpack({"r": result})`` or
``msgpack({"e": {"code", "message", "node"}})`` so that errors keep their TensorFlow status
code. Malformed requests get an error reply; requests over ``FLOWMESH_MAX_RPC_MB``
(graphs and control messages; tensors travel on the data plane) are refused by gRPC itself (``RESOURCE_EXHAUSTED``); the server keeps serving.

With a cluster secret (:mod:`flowmesh.distributed.auth`) every call carries the job's
token in its metadata and a server interceptor refuses calls without it
(``UNAUTHENTICATED``) before any handler runs. TLS (``FLOWMESH_TLS_CERT/_KEY/_CA``)
encrypts the channel; a CA on the server makes it mutual TLS.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent import futures
from typing import Any

import grpc

from flowmesh import config as _config
from flowmesh.distributed import protocol as wire
from flowmesh.distributed.auth import TOKEN_METADATA, ClusterAuth
from flowmesh.distributed.reach import likely_cause
from flowmesh.errors import (
    DeadlineExceededError,
    InternalError,
    OpError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    exception_type_from_error_code,
)

log = logging.getLogger("flowmesh.distributed")
SERVICE = "flowmesh.Server"
Handler = Callable[[Any], Any]


def _options(max_bytes: int) -> list[tuple[str, Any]]:
    max_bytes = min(max_bytes, 2**31 - 1)  # gRPC takes a signed 32-bit limit
    return [
        ("grpc.max_receive_message_length", max_bytes),
        ("grpc.max_send_message_length", max_bytes),
        ("grpc.so_reuseport", 0),
        ("grpc.enable_retries", 0),
        # Reconnect to a restarted task within ~0.1-0.5 s instead of gRPC's default 1 s
        # doubling up to 120 s backoff (a restarted ps was found only seconds later).
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 500),
    ]


class _TokenCheck(grpc.ServerInterceptor):
    """Refuses every call whose ``flowmesh-token`` is not the job's (constant time)."""

    def __init__(self, auth: ClusterAuth):
        self._auth = auth

        def refuse(request: bytes, context: Any) -> bytes:
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          "this server requires the job's cluster secret (FLOWMESH_CLUSTER_SECRET_FILE "
                          "or FLOWMESH_CLUSTER_SECRET)")
            return b""

        self._refuse = grpc.unary_unary_rpc_method_handler(refuse)

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        token = next((v for k, v in details.invocation_metadata or () if k == TOKEN_METADATA), None)
        if not self._auth.check_token(token):
            return self._refuse
        return continuation(details)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def server_credentials() -> Any:
    """TLS credentials from ``FLOWMESH_TLS_CERT/_KEY`` (and ``_CA``: clients must present a
    certificate it signed), or None for a plaintext server."""
    cert, key, ca = _config.TLS_CERT.get(), _config.TLS_KEY.get(), _config.TLS_CA.get()
    if not cert and not key:
        return None
    if not (cert and key):
        raise ValueError("TLS needs both FLOWMESH_TLS_CERT and FLOWMESH_TLS_KEY (--tls-cert, --tls-key)")
    return grpc.ssl_server_credentials([(_read(key), _read(cert))],
                                       root_certificates=_read(ca) if ca else None,
                                       require_client_auth=bool(ca))


def channel_credentials() -> Any:
    """Client TLS credentials (``FLOWMESH_TLS_CA`` to trust; cert/key for mutual TLS)."""
    cert, key, ca = _config.TLS_CERT.get(), _config.TLS_KEY.get(), _config.TLS_CA.get()
    if not ca:
        return None
    return grpc.ssl_channel_credentials(root_certificates=_read(ca),
                                        private_key=_read(key) if key else None,
                                        certificate_chain=_read(cert) if cert else None)


class RpcServer:
    """A gRPC server dispatching ``flowmesh.Server/<Method>`` to Python handlers.

    Args:
        target: where to listen, in gRPC's syntax: the Unix socket behind a task's port
            (:mod:`flowmesh.distributed.task_port`), or ``host:port``.
        handlers: ``{method: fn(args) -> result}``; ``fn`` raises OpError for failures.
        max_bytes: the largest request accepted.
        auth: the job's secret (every call must carry its token when it has one).
    """

    def __init__(self, target: str, handlers: dict[str, Handler], max_bytes: int,
                 auth: ClusterAuth | None = None):
        self._handlers = handlers
        auth = auth if auth is not None else ClusterAuth.from_config()
        interceptors = [_TokenCheck(auth)] if auth.enabled else []
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=16, thread_name_prefix="flowmesh-rpc"),
                                   options=_options(max_bytes), interceptors=interceptors)
        methods = {name: grpc.unary_unary_rpc_method_handler(self._wrap(name)) for name in handlers}
        self._server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, methods),))
        credentials = server_credentials()
        try:
            if credentials is not None:
                bound = self._server.add_secure_port(target, credentials)
            else:
                bound = self._server.add_insecure_port(target)
        except RuntimeError as exc:
            raise UnavailableError(None, None, f"Cannot listen on {target}: {exc}") from None
        if not bound:
            raise UnavailableError(
                None, None, f"Cannot listen on {target}: the address is in use or not local"
            )

    def _wrap(self, name: str) -> Callable[[bytes, Any], bytes]:
        handler = self._handlers[name]

        def serve(request: bytes, context: Any) -> bytes:
            try:
                result = handler(wire.unpack(request, f"{name} request"))
                return wire.pack({"r": result})
            except OpError as exc:
                return wire.pack({"e": wire.encode_error(exc)})
            except Exception as exc:  # noqa: BLE001 - reported to the caller, server keeps going
                log.exception("RPC %s failed", name)
                return wire.pack({"e": wire.encode_error(exc)})

        return serve

    def start(self) -> None:
        self._server.start()

    def stop(self, grace: float | None = None) -> threading.Event:
        return self._server.stop(grace)

    def wait(self, timeout: float | None = None) -> bool:
        return self._server.wait_for_termination(timeout)


_STATUS_TO_ERROR = {
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
}


class RpcClient:
    """Calls one task's ``flowmesh.Server`` service.

    Args:
        address: the task's ``host:port``.
        name: how errors name the task (``/job:ps/replica:0/task:0``).
    """

    def __init__(self, address: str, name: str, auth: ClusterAuth | None = None):
        self.address = address
        self.name = name
        max_bytes = _config.max_rpc_bytes()
        auth = auth if auth is not None else ClusterAuth.from_config()
        self._metadata = ((TOKEN_METADATA, auth.token),) if auth.token else None
        credentials = channel_credentials()
        if credentials is not None:
            self._channel = grpc.secure_channel(address, credentials, options=_options(max_bytes))
        else:
            self._channel = grpc.insecure_channel(address, options=_options(max_bytes))
        self._stubs: dict[str, Any] = {}
        self._ready = False

    def wait_ready(self, timeout: float | None = None) -> None:
        """Waits (bounded) until the task accepts connections.

        Raises:
            UnavailableError: naming the task, after ``timeout`` (default
                ``FLOWMESH_CONNECT_TIMEOUT_S``) seconds of retrying.
        """
        if self._ready:
            return
        timeout = _config.CONNECT_TIMEOUT_S.get() if timeout is None else timeout
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise UnavailableError(
                None, None,
                f"Task {self.name} at {self.address} is unreachable: no server answered within "
                f"{timeout:g} s (FLOWMESH_CONNECT_TIMEOUT_S); {likely_cause(self.address)}.",
            ) from None
        self._ready = True

    def call(self, method: str, args: Any = None, timeout: float | None = None) -> Any:
        """Calls ``method``; returns its result.

        Raises:
            UnavailableError / DeadlineExceededError: transport failures, naming the task.
            OpError: the error the handler raised, with its status code.
        """
        connect = _config.CONNECT_TIMEOUT_S.get()
        self.wait_ready(connect if timeout is None else min(timeout, connect))
        stub = self._stubs.get(method)
        if stub is None:
            stub = self._stubs[method] = self._channel.unary_unary(f"/{SERVICE}/{method}")
        deadline = _config.RPC_DEADLINE_S.get() if timeout is None else timeout
        try:
            reply = stub(wire.pack(args), timeout=deadline, metadata=self._metadata)
        except grpc.RpcError as exc:
            raise self._rpc_error(method, exc) from None
        data = wire.unpack(reply, f"{method} reply from {self.name}")
        if not isinstance(data, dict):
            raise InternalError(None, None, f"{method} reply from {self.name} is not a map")
        if data.get("e") is not None:
            raise wire.decode_error(data["e"])
        return data.get("r")

    def _rpc_error(self, method: str, exc: grpc.RpcError) -> OpError:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        cls = _STATUS_TO_ERROR.get(code)
        if cls is None:
            value = code.value[0] if code is not None else 2
            cls = exception_type_from_error_code(value)
        if cls is UnavailableError:
            self._ready = False
            details = f"{details or 'the connection failed'}; {likely_cause(self.address)}"
        elif not details:
            details = f"gRPC status {code.name if code is not None else 'UNKNOWN'} without a message"
        if cls is ResourceExhaustedError:
            details = f"{details} (the gRPC message limit is FLOWMESH_MAX_RPC_MB on both sides)"
        return cls(None, None, f"{method} on task {self.name} at {self.address} failed: {details}")

    def close(self) -> None:
        self._channel.close()
