"""Every ``FLOWMESH_*`` setting, typed, with its default, in one place.

Nothing else in flowmesh reads ``os.environ`` (TF_CONFIG parsing lives in
``flowmesh.distributed.tf_config``). Settings are read when asked for, so a test or a
launcher can change the environment before the value is needed.

==============================  =======  ==================================================
Variable                        Default  Meaning
==============================  =======  ==================================================
FLOWMESH_DEBUG                  0        1 prints placement/partition/plan decisions,
                                         2 also prints every compiled step program.
FLOWMESH_SIMULATED_GPUS         0        Expose N ``GPU:i`` devices backed by the CPU when
                                         torch sees no CUDA device (for testing placement).
FLOWMESH_INTRA_OP_THREADS       0        Intra-op threads of sessions whose ConfigProto
                                         leaves ``intra_op_parallelism_threads`` at 0 (0:
                                         the thread tuner picks per step).
FLOWMESH_ADAPTIVE_THREADS       1        Steps of sessions without
                                         ``intra_op_parallelism_threads`` time the full
                                         intra-op team against one thread now and then and
                                         keep the faster (``runtime/thread_tuner.py``).
FLOWMESH_ADAPTIVE_PREFETCH      1        A ``prefetch`` in threads times running its input
                                         ahead on its thread against producing in the
                                         consumer's thread now and then and keeps the
                                         faster (``kernels/pipeline/prefetch_mode.py``).
FLOWMESH_TUNER_MAX_LOAD         2.0      From this 1-minute load average per CPU on, the
                                         tuner keeps the team without probing (there one
                                         thread probes faster but runs slower: the
                                         scheduler shares the cores per thread). 0: always
                                         probe.
FLOWMESH_CHUNK_HELPERS          0        N > 0 adds a third candidate to the tuner, the
                                         dynamic mode: one intra-op thread, big MatMuls
                                         split into chunks that the caller and N helper
                                         threads take from one counter
                                         (``kernels/cpu/chunk_pool.py``). Off by default: it
                                         measured slower than one thread on a loaded
                                         machine (benchmarks/RESULTS.md, issue 13 sched13).
FLOWMESH_ONEDNN_MATMUL          auto     Kernel of float32 CPU MatMuls: ``auto`` times
                                         oneDNN against MKL once per kind of product
                                         (sizes, layouts, thread count) and keeps the
                                         faster (``kernels/cpu/gemm_choice.py``; which wins
                                         depends on the CPU); 1: oneDNN where it applies;
                                         0: MKL (torch.matmul).
FLOWMESH_LANES                  1        Runs of the same small ops repeated once per
                                         variable compute as one op over stacked values
                                         (``runtime/lanes.py``). 0: op by op.
FLOWMESH_OMP_WAIT_POLICY        AUTO     OpenMP wait policy ``import flowmesh`` sets before
                                         torch loads, unless the user set OMP_WAIT_POLICY
                                         or GOMP_SPINCOUNT: AUTO is PASSIVE (idle threads
                                         sleep at once instead of spinning against other
                                         processes) when the load average already reaches
                                         the CPUs, else OpenMP's default
                                         (``runtime/threading_policy.py``). NONE: leave
                                         OpenMP's default. Too late (a warning says so)
                                         when torch was imported before flowmesh.
FLOWMESH_KEEP_FREED_MB          1024     Freed host memory glibc's malloc keeps for reuse
                                         instead of returning it to the OS (saves the page
                                         faults of re-allocating every step's tensors; see
                                         ``runtime/host_memory.py``). 0: malloc's defaults.
FLOWMESH_RPC_DEADLINE_S         30.0     Default deadline for control RPCs between tasks.
FLOWMESH_CONNECT_TIMEOUT_S      20.0     How long a session waits for an unreachable task.
FLOWMESH_BIND_ADDRESS           ""       Interface a server listens on. Unset: loopback for
                                         a task listed at localhost/127.x/::1, every
                                         interface (0.0.0.0) otherwise, as TensorFlow's
                                         servers. Either way a task has one port, the one
                                         its cluster spec lists (gRPC and tensors share it).
FLOWMESH_MAX_MESSAGE_MB         2048     Largest data-plane frame (tensors) a server accepts
                                         from an authenticated peer.
FLOWMESH_MAX_RPC_MB             256      Largest gRPC message (graphs, control calls; also
                                         capped by FLOWMESH_MAX_MESSAGE_MB).
FLOWMESH_SHM_TRANSPORT          1        1: tensors >= 1 MB to a peer on the same host go
                                         through /dev/shm; 0: always over the socket.
FLOWMESH_HEARTBEAT_S            5.0      While a step waits on a task, ping it this often; a
                                         ping unanswered for FLOWMESH_RPC_DEADLINE_S fails
                                         the step with UnavailableError (0 disables).
FLOWMESH_COLLECTIVE_TIMEOUT_S   60.0     Timeout for a collective before stalled ranks
                                         are reported.
FLOWMESH_FUSION_THRESHOLD_MB    64       Largest fused all-reduce transfer (MB, fractions
                                         allowed; 0 disables fusion).
FLOWMESH_BUCKET_MB              4        Gradient bucket size of DistributedOptimizer and
                                         the strategies: each bucket's all-reduce starts
                                         when its gradients exist (overlap); buckets ready
                                         together are still fused up to the threshold.
FLOWMESH_RANK                   (unset)  This process's rank, set by ``flowmesh run``.
FLOWMESH_SIZE                   (unset)  Number of ranks, set by ``flowmesh run``.
FLOWMESH_LOCAL_RANK             (unset)  Rank among the processes on this host.
FLOWMESH_LOCAL_SIZE             (unset)  Number of ranks on this host.
FLOWMESH_RENDEZVOUS             (unset)  ``host:port`` of the collective rendezvous store
                                         (set by ``flowmesh run``; else from TF_CONFIG).
FLOWMESH_COLLECTIVE_BACKEND     auto     ``gloo``, ``nccl`` or ``auto`` (NCCL for CUDA
                                         tensors, gloo for CPU tensors).
FLOWMESH_COLLECTIVE_TIMELINE    (unset)  Path of a Chrome-trace JSON file recording every
                                         negotiation and collective of this rank.
FLOWMESH_RECOVERY_TIMEOUT_S     600.0    How long a MonitoredSession keeps re-creating its
                                         session after Unavailable/Aborted errors before
                                         giving up (seconds of consecutive failures).
FLOWMESH_RESTART_COUNT          0        How many times ``flowmesh launch --max-restarts``
                                         restarted this task (set by the launcher).
FLOWMESH_ELASTIC                0        1: this rank belongs to an elastic all-reduce job
                                         (``flowmesh run --min-np/--max-np``, set by it).
FLOWMESH_MIN_NP / _MAX_NP       (unset)  Elastic bounds on the number of ranks (set by
                                         ``flowmesh run``; shown in error messages).
FLOWMESH_ELASTIC_ID             (unset)  This process's member id in an elastic job (set
                                         by the launcher; else one is drawn from the store).
FLOWMESH_ELASTIC_TIMEOUT_S      120.0    Longest wait of a rank in an elastic rendezvous
                                         (re-forming the group after a rank was lost).
FLOWMESH_EVAL_CHECKPOINTS       model_dir  ``chief``: the evaluator of ``train_and_evaluate``
                                         reads each checkpoint through the chief's server
                                         (no shared file system; ``estimator/_remote.py``).
FLOWMESH_DATA_WORKER_PROCESS    0        1: a dataset iterator whose outermost stage is
                                         ``prefetch`` runs the stages below it in a forked
                                         worker process (no ``py_func``, generators or
                                         stateful ops; ``kernels/pipeline/worker_process.py``),
                                         so the input's Python work leaves the training
                                         process's interpreter lock. 0 (default): threads,
                                         unless a dataset's options ask for the worker (a
                                         forked child crashed once in a full test-suite
                                         process, see the module).
                                         ``options.experimental_worker_process`` overrides.
FLOWMESH_FUSED_RNN              1        1: ``dynamic_rnn`` of an LSTM whose math equals
                                         torch's (tanh, no peepholes/clip/projection) runs
                                         one fused op; 0: always the ``While`` loop.
FLOWMESH_ONEDNN_LSTM            1        1: the fused LSTM (float32 CPU, no sequence
                                         lengths) calls oneDNN's LSTM forward/backward ops
                                         directly (``kernels/cpu/onednn_lstm.py``); 0: torch's
                                         LSTM under autograd (the same numbers).
FLOWMESH_MAX_CONNECTIONS        256      Most data-plane connections a server accepts at
                                         once (one thread each; unauthenticated ones close
                                         after the handshake deadline). Also the rendezvous
                                         store's limit.
FLOWMESH_HANDSHAKE_TIMEOUT_S    10.0     Seconds a data-plane or rendezvous-store
                                         connection has to complete its handshake.
FLOWMESH_ORPHAN_TENSOR_S        30.0     Tensors pushed for a step this task never runs are
                                         dropped after this many seconds.
FLOWMESH_SESSION_GC_S           0        A master closes sessions unused this long (seconds;
                                         0: never, TensorFlow's default). Checked when a
                                         session is created.
FLOWMESH_FANOUT_TIMEOUT_S       2.0      How long a call that asks every task (ListDevices)
                                         waits for them all; silent tasks are left out.
FLOWMESH_FANOUT_CALLS           4        Most such calls a server runs at once (the others
                                         are refused at once: session calls keep threads).
FLOWMESH_CLUSTER_SECRET         (unset)  The job's shared secret (set by the launchers, or
                                         by hand on every task); see docs/security.md.
FLOWMESH_CLUSTER_SECRET_FILE    (unset)  A file holding the secret (mode 0600, owned by
                                         this user); the launchers pass this one.
FLOWMESH_WRITE_ROOTS            (unset)  Directories (``:``-separated) under which this
                                         process's checkpoint ops may create, replace or
                                         delete files; unset: anywhere.
FLOWMESH_TLS_CERT / _KEY / _CA  (unset)  PEM files: this task's certificate and key, and
                                         the CA that signs the cluster's certificates
                                         (gRPC over TLS; with a CA on the server, clients
                                         must present a certificate: mutual TLS).
==============================  =======  ==================================================

Variables of other libraries that flowmesh reads (it never sets them for the user's
process unless a row says so):

==============================  =======  ==================================================
OMP_WAIT_POLICY                 (unset)  Set by ``import flowmesh`` to
                                         FLOWMESH_OMP_WAIT_POLICY when unset (and neither
                                         is GOMP_SPINCOUNT) and torch is not loaded yet.
GOMP_SPINCOUNT                  (unset)  libgomp's spin count; when the user sets it,
                                         flowmesh leaves the wait policy alone.
GLOO_SOCKET_IFNAME              (unset)  torch's gloo interface. Unset, flowmesh's gloo
                                         groups use the address each member reaches the
                                         rendezvous store from (gloo's own default, the
                                         hostname's address or loopback, fails between
                                         hosts whose names do not resolve).
ONEDNN_MAX_CPU_ISA              (unset)  oneDNN's instruction-set cap. The TensorFlow test
                                         oracle's bfloat16 kernels crash under a cap below
                                         the CPU's own ISA, so oracle checks of bfloat16
                                         ops skip (``testing/tf_oracle.py``).
TF_ENABLE_ONEDNN_OPTS           (unset)  0: the TensorFlow oracle runs without oneDNN (its
                                         Eigen kernels), which lifts that skip.
PYSPARK_PYTHON                  (unset)  Python of Spark's workers; ``flowmesh sweep
                                         --engine spark`` sets it to its own interpreter
                                         when unset.
==============================  =======  ==================================================
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One documented environment setting."""

    name: str
    default: T
    parse: Callable[[str], T]
    help: str

    def get(self, environ: Mapping[str, str] | None = None) -> T:
        """Returns the current value, or the default when the variable is unset.

        Args:
            environ: read this mapping instead of ``os.environ`` (a launcher reading the
                environment it passes to its children).
        """
        raw = (os.environ if environ is None else environ).get(self.name)
        if raw is None or raw == "":
            return self.default
        try:
            return self.parse(raw)
        except ValueError as exc:
            raise ValueError(
                f"{self.name}={raw!r} is not a valid value ({self.help}); unset it or "
                f"use something like {self.default!r}"
            ) from exc

    def set(self, value: str, environ: MutableMapping[str, str] | None = None) -> None:
        """Sets the variable in ``environ`` (default: this process's environment, which
        the libraries it loads later and its child processes read)."""
        (os.environ if environ is None else environ)[self.name] = value

    def set_default(self, value: str, environ: MutableMapping[str, str] | None = None) -> None:
        """Sets the variable as :meth:`set` does, unless it is already set."""
        (os.environ if environ is None else environ).setdefault(self.name, value)


DEBUG = Setting("FLOWMESH_DEBUG", 0, int, "debug verbosity 0..2")
SIMULATED_GPUS = Setting("FLOWMESH_SIMULATED_GPUS", 0, int, "number of CPU-backed GPU devices")
INTRA_OP_THREADS = Setting("FLOWMESH_INTRA_OP_THREADS", 0, int,
                           "intra-op threads of sessions without intra_op_parallelism_threads (0 = tuned)")
KEEP_FREED_MB = Setting("FLOWMESH_KEEP_FREED_MB", 1024.0, float,
                        "freed host memory malloc keeps for reuse, MB (0 = malloc's defaults)")
RPC_DEADLINE_S = Setting("FLOWMESH_RPC_DEADLINE_S", 30.0, float, "control RPC deadline")
BIND_ADDRESS = Setting("FLOWMESH_BIND_ADDRESS", "", str,
                       "interface servers listen on (empty: by the task's listed address)")
CONNECT_TIMEOUT_S = Setting("FLOWMESH_CONNECT_TIMEOUT_S", 20.0, float, "connect timeout")
MAX_MESSAGE_MB = Setting("FLOWMESH_MAX_MESSAGE_MB", 2048, int, "largest accepted message")
MAX_RPC_MB = Setting("FLOWMESH_MAX_RPC_MB", 256, int, "largest accepted gRPC message, MB")
SHM_TRANSPORT = Setting("FLOWMESH_SHM_TRANSPORT", 1, int, "1 to use /dev/shm for same-host tensors")
HEARTBEAT_S = Setting("FLOWMESH_HEARTBEAT_S", 5.0, float, "heartbeat period of busy peers, seconds")
COLLECTIVE_TIMEOUT_S = Setting(
    "FLOWMESH_COLLECTIVE_TIMEOUT_S", 60.0, float, "collective timeout in seconds"
)
FUSION_THRESHOLD_MB = Setting("FLOWMESH_FUSION_THRESHOLD_MB", 64.0, float, "fusion bucket size in MB")
BUCKET_MB = Setting("FLOWMESH_BUCKET_MB", 4.0, float, "gradient bucket size in MB")
RECOVERY_TIMEOUT_S = Setting("FLOWMESH_RECOVERY_TIMEOUT_S", 600.0, float,
                             "seconds of failed session recovery before giving up")
RESTART_COUNT = Setting("FLOWMESH_RESTART_COUNT", 0, int,
                        "times flowmesh launch restarted this task (set by the launcher)")
RANK = Setting("FLOWMESH_RANK", -1, int, "rank of this process (set by flowmesh run)")
SIZE = Setting("FLOWMESH_SIZE", -1, int, "number of ranks (set by flowmesh run)")
LOCAL_RANK = Setting("FLOWMESH_LOCAL_RANK", -1, int, "rank on this host")
LOCAL_SIZE = Setting("FLOWMESH_LOCAL_SIZE", -1, int, "ranks on this host")
RENDEZVOUS = Setting("FLOWMESH_RENDEZVOUS", "", str, "host:port of the rendezvous store")
COLLECTIVE_BACKEND = Setting("FLOWMESH_COLLECTIVE_BACKEND", "auto", str, "gloo, nccl or auto")
COLLECTIVE_TIMELINE = Setting("FLOWMESH_COLLECTIVE_TIMELINE", "", str, "Chrome trace output path")
ELASTIC = Setting("FLOWMESH_ELASTIC", 0, int, "1 in an elastic job (set by flowmesh run)")
MIN_NP = Setting("FLOWMESH_MIN_NP", -1, int, "fewest ranks of an elastic job")
MAX_NP = Setting("FLOWMESH_MAX_NP", -1, int, "most ranks of an elastic job")
ELASTIC_ID = Setting("FLOWMESH_ELASTIC_ID", "", str, "member id in an elastic job")
DATA_WORKER_PROCESS = Setting("FLOWMESH_DATA_WORKER_PROCESS", 0, int,
                              "1: an iterator's outermost prefetch runs its input in a forked "
                              "worker process where eligible; 0: in-process threads")
FUSED_RNN = Setting("FLOWMESH_FUSED_RNN", 1, int,
                    "1: dynamic_rnn of a standard LSTM runs one fused op (torch's LSTM)")
ONEDNN_LSTM = Setting("FLOWMESH_ONEDNN_LSTM", 1, int,
                      "1: the fused LSTM (float32 CPU, no sequence lengths) calls oneDNN's LSTM "
                      "forward/backward ops directly; 0: torch's LSTM under autograd")
ADAPTIVE_THREADS = Setting("FLOWMESH_ADAPTIVE_THREADS", 1, int,
                           "1: steps time the full intra-op team against one thread now and then "
                           "and keep the faster (sessions without intra_op_parallelism_threads)")
ADAPTIVE_PREFETCH = Setting("FLOWMESH_ADAPTIVE_PREFETCH", 1, int,
                            "1: a prefetch times its thread against producing in the consumer "
                            "now and then and keeps the faster; 0: always the thread")
TUNER_MAX_LOAD = Setting("FLOWMESH_TUNER_MAX_LOAD", 2.0, float,
                         "load average per CPU from which the thread tuner keeps the team (0: never)")
CHUNK_HELPERS = Setting("FLOWMESH_CHUNK_HELPERS", 0, int,
                        "helper threads of the tuner's dynamic mode (0: no dynamic mode)")
ONEDNN_MATMUL = Setting("FLOWMESH_ONEDNN_MATMUL", "auto", str,
                      "fp32 CPU MatMul kernel: auto (oneDNN or MKL, whichever each kind of "
                      "product measures faster, kernels/cpu/gemm_choice.py), 1 (oneDNN where it "
                      "applies) or 0 (MKL through torch.matmul)")
LANES = Setting("FLOWMESH_LANES", 1, int,
                "1 batches runs of the same small ops over many variables (runtime/lanes.py); 0: off")
ELASTIC_TIMEOUT_S = Setting("FLOWMESH_ELASTIC_TIMEOUT_S", 120.0, float,
                            "longest elastic rendezvous wait in seconds")
EVAL_CHECKPOINTS = Setting("FLOWMESH_EVAL_CHECKPOINTS", "model_dir", str,
                           "where train_and_evaluate's evaluator reads checkpoints: model_dir or chief")

OMP_WAIT_POLICY = Setting("FLOWMESH_OMP_WAIT_POLICY", "AUTO", str,
                          "OpenMP wait policy set before torch loads (AUTO, PASSIVE, ACTIVE or NONE)")
USER_OMP_WAIT_POLICY = Setting("OMP_WAIT_POLICY", "", str, "OpenMP wait policy")
GLOO_SOCKET_IFNAME = Setting("GLOO_SOCKET_IFNAME", "", str, "torch's interface for gloo")
USER_GOMP_SPINCOUNT = Setting("GOMP_SPINCOUNT", "", str, "libgomp spin count")
ONEDNN_MAX_CPU_ISA = Setting("ONEDNN_MAX_CPU_ISA", "", str, "oneDNN ISA cap (e.g. AVX2)")
TF_ENABLE_ONEDNN_OPTS = Setting("TF_ENABLE_ONEDNN_OPTS", "", str,
                                "0 disables TensorFlow's oneDNN kernels")
PYSPARK_PYTHON = Setting("PYSPARK_PYTHON", "", str, "the Python interpreter of Spark's workers")
CUDA_VISIBLE_DEVICES = Setting("CUDA_VISIBLE_DEVICES", "", str, "the CUDA devices this process may use")
# Slurm's step variables (tf.distribute.cluster_resolver.SlurmClusterResolver)
SLURM_PROCID = Setting("SLURM_PROCID", "", str, "this task's rank in the Slurm step")
SLURM_STEP_NUM_TASKS = Setting("SLURM_STEP_NUM_TASKS", "", str, "tasks in the Slurm step")
SLURM_STEP_NODELIST = Setting("SLURM_STEP_NODELIST", "", str, "the Slurm step's hosts (hostlist syntax)")
SLURM_STEP_TASKS_PER_NODE = Setting("SLURM_STEP_TASKS_PER_NODE", "", str, "tasks per host, e.g. 2(x3),1")

MAX_CONNECTIONS = Setting("FLOWMESH_MAX_CONNECTIONS", 256, int, "most inbound data-plane connections")
HANDSHAKE_TIMEOUT_S = Setting("FLOWMESH_HANDSHAKE_TIMEOUT_S", 10.0, float,
                              "seconds to complete a connection's handshake")
ORPHAN_TENSOR_S = Setting("FLOWMESH_ORPHAN_TENSOR_S", 30.0, float,
                          "seconds before tensors of a step nobody runs are dropped")
SESSION_GC_S = Setting("FLOWMESH_SESSION_GC_S", 0.0, float, "seconds before an unused session closes")
FANOUT_TIMEOUT_S = Setting("FLOWMESH_FANOUT_TIMEOUT_S", 2.0, float,
                           "seconds a ListDevices waits for all tasks")
FANOUT_CALLS = Setting("FLOWMESH_FANOUT_CALLS", 4, int, "concurrent calls that ask every task")
CLUSTER_SECRET = Setting("FLOWMESH_CLUSTER_SECRET", "", str, "the job's shared secret")
CLUSTER_SECRET_FILE = Setting("FLOWMESH_CLUSTER_SECRET_FILE", "", str,
                              "path of a 0600 file holding the job's secret")
WRITE_ROOTS = Setting("FLOWMESH_WRITE_ROOTS", "", str, "directories checkpoint writes are confined to")
TLS_CERT = Setting("FLOWMESH_TLS_CERT", "", str, "PEM certificate of this task")
TLS_KEY = Setting("FLOWMESH_TLS_KEY", "", str, "PEM private key of this task")
TLS_CA = Setting("FLOWMESH_TLS_CA", "", str, "PEM CA certificate(s) of the cluster")


def process_environment() -> dict[str, str]:
    """A copy of this process's environment: the base of a child process's environment
    (PATH, PYTHONPATH and the ``FLOWMESH_*`` settings travel on to the child)."""
    return dict(os.environ)


def replace_process_environment(environ: Mapping[str, str]) -> None:
    """Replaces this process's whole environment with ``environ`` (a standby process
    taking on the environment its assignment would have started with)."""
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in environ.items()})


def max_rpc_bytes() -> int:
    """The gRPC message limit in bytes (``FLOWMESH_MAX_RPC_MB``, at most
    ``FLOWMESH_MAX_MESSAGE_MB``)."""
    return min(MAX_RPC_MB.get(), MAX_MESSAGE_MB.get()) << 20


def cluster_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The job's secret (``FLOWMESH_CLUSTER_SECRET``, else the file
    ``FLOWMESH_CLUSTER_SECRET_FILE`` names), or None when the job has none.

    Raises:
        ValueError: the file cannot be read, is empty, or others may read it (it must
            be owned by this user with mode 0600 or stricter).
    """
    value = CLUSTER_SECRET.get(environ)
    if value:
        return value.encode()
    path = CLUSTER_SECRET_FILE.get(environ)
    if not path:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise ValueError(f"FLOWMESH_CLUSTER_SECRET_FILE={path!r} cannot be read: {exc}") from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise ValueError(
                f"FLOWMESH_CLUSTER_SECRET_FILE={path!r} must be owned by this user and readable "
                f"by nobody else (mode {info.st_mode & 0o777:o}); run `chmod 600 {path}`")
        data = os.read(fd, 4096).strip()
    finally:
        os.close(fd)
    if len(data) < 16:
        raise ValueError(f"FLOWMESH_CLUSTER_SECRET_FILE={path!r} holds fewer than 16 bytes")
    return data


def debug_level() -> int:
    """The current ``FLOWMESH_DEBUG`` level."""
    return DEBUG.get()


def debug(level: int, message: str) -> None:
    """Prints ``message`` when ``FLOWMESH_DEBUG`` is at least ``level``."""
    if DEBUG.get() >= level:
        print(f"[flowmesh] {message}", flush=True)
