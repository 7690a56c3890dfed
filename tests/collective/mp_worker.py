"""One rank of the multi-process collective tests (launched by ``flowmesh run``).

Usage: ``python mp_worker.py SCENARIO`` with SCENARIO ``main`` (2 ranks), ``three``
(3 ranks) or ``trace`` (the fusion/overlap check alone). Each check prints ``RESULT {"check": name, ...}`` for the test to assert on.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import numpy as np

import flowmesh as tf
import flowmesh.collective as hvd
from flowmesh.collective import context
from flowmesh.datasets import load_digits


def report(check: str, **values: object) -> None:
    print("RESULT " + json.dumps({"check": check, "rank": hvd.rank(), **values}), flush=True)


def run(fetches: object, feed: dict | None = None, **kwargs: object) -> object:
    with tf.Session() as sess:
        return sess.run(fetches, feed, **kwargs)


# --- correctness of every collective --------------------------------------------------------
def check_dtypes_and_shapes() -> None:
    r, n = hvd.rank(), hvd.size()
    problems = []
    fetches, expected = {}, {}
    with tf.Graph().as_default():
        for dtype in (tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64):
            for shape in ([], [5], [2, 3, 4]):
                base = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 7
                x = tf.cast(tf.constant(base + r), dtype)
                key = f"{dtype.name}{shape}"
                fetches[key] = [hvd.allreduce(x, op=hvd.Sum), hvd.allreduce(x, op=hvd.Max),
                                hvd.broadcast(x, root_rank=n - 1)]
                expected[key] = [n * base + n * (n - 1) / 2, base + n - 1, base + n - 1]
        gathered = hvd.allgather(tf.fill([r + 1, 3], float(r)))
        scattered = hvd.reducescatter(tf.range(10.0), op=hvd.Sum)
        mean = hvd.allreduce(tf.constant([float(r)]))
        out, extra = run([fetches, [gathered, scattered, mean]])
    for key, values in out.items():
        for kind, value, expect in zip(("sum", "max", "bcast"), values, expected[key]):
            if value.shape != expect.shape or not np.allclose(np.asarray(value, np.float64), expect):
                problems.append(f"{kind} {key}: {value!r}")
    report("collectives", problems=problems, checked=3 * len(out), gathered=extra[0].tolist(),
           scattered=extra[1].tolist(), mean=extra[2].tolist())


def check_gradients() -> None:
    r, n = hvd.rank(), hvd.size()
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0]) * float(r + 1)
        y = hvd.allreduce(x, op=hvd.Sum)
        rows = tf.ones([r + 1, 2])
        g = hvd.allgather(rows)
        grads = tf.gradients(tf.reduce_sum(y * y), x) + tf.gradients(tf.reduce_sum(g * 3.0), rows)
        gx, grows = run(grads)
    report("gradients", gx=gx.tolist(), grows=grows.tolist(), size=n)


def check_compression() -> None:
    r = hvd.rank()
    with tf.Graph().as_default():
        x = tf.constant(np.linspace(-1, 1, 64, dtype=np.float32) * (r + 1))
        fp16 = hvd.allreduce(x, compression=hvd.Compression.fp16)
        bf16 = hvd.allreduce(x, compression=hvd.Compression.bf16)
        exact = hvd.allreduce(x)
        a, b, e = run([fp16, bf16, exact])
    report("compression", dtype=str(a.dtype), fp16_err=float(np.abs(a - e).max()),
           bf16_err=float(np.abs(b - e).max()))


# --- DistributedOptimizer against single-process training ------------------------------------
def mlp(hidden: int = 32):
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    tf.set_random_seed(1234 + hvd.rank())  # different initial values per rank on purpose
    w1 = tf.get_variable("w1", [64, hidden])
    b1 = tf.get_variable("b1", [hidden], initializer=tf.zeros_initializer())
    w2 = tf.get_variable("w2", [hidden, 10])
    b2 = tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
    logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return x, y, loss, [w1, b1, w2, b2]


def train(steps: int, passes: int, distributed: bool, init: list | None, batches: list) -> list:
    with tf.Graph().as_default():
        x, y, loss, params = mlp()
        opt = tf.train.GradientDescentOptimizer(0.5)
        if distributed:
            opt = hvd.DistributedOptimizer(opt, backward_passes_per_step=passes,
                                           average_aggregated_gradients=True)
        train_op = opt.minimize(loss)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            if init is not None:
                for p, value in zip(params, init):
                    p.load(value, sess)
            if distributed:
                sess.run(hvd.broadcast_global_variables(0))
            start = sess.run(params)
            for step in range(steps):
                xb, yb = batches[step]
                sess.run(train_op, {x: xb, y: yb})
            return [start, sess.run(params)]


def check_distributed_optimizer(passes: int) -> None:
    (x_train, y_train), _ = load_digits()
    steps = 12
    mine = hvd.ShardedBatches([x_train, y_train], 64, seed=3)
    start, final = train(steps, passes, True, None, [next(mine) for _ in range(steps)])
    whole = hvd.ShardedBatches([x_train, y_train], 64, seed=3, num_shards=1, index=0)
    global_batches = [next(whole) for _ in range(steps)]
    if passes > 1:  # the mean of k batch means is the mean over their concatenation
        global_batches = [[np.concatenate(part) for part in zip(*global_batches[i:i + passes])]
                          for i in range(0, steps, passes)]
    _, reference = train(steps // passes, 1, False, start, global_batches)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(final, reference))
    moved = max(float(np.abs(a - b).max()) for a, b in zip(final, start))
    report(f"optimizer_k{passes}", checksum=[float(np.sum(np.abs(w))) for w in final],
           max_diff=diff, moved=moved)


def check_sparse_gradients() -> None:
    """Embedding gradients (IndexedSlices) are all-gathered, not densified."""
    r, n = hvd.rank(), hvd.size()
    ids = np.array([r, r + 3, 5, 5], np.int64)  # different rows (and a duplicate) per rank
    with tf.Graph().as_default():
        table = tf.Variable(np.arange(40, dtype=np.float32).reshape(10, 4), name="table")
        rows = tf.nn.embedding_lookup(table, tf.constant(ids))
        loss = tf.reduce_sum(rows * float(r + 1))
        opt = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.5))
        grads = opt.compute_gradients(loss)
        train = opt.apply_gradients(grads)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            final = sess.run(table)
    expected = np.arange(40, dtype=np.float32).reshape(10, 4)
    for rank in range(n):
        for row in [rank, rank + 3, 5, 5]:
            expected[row] -= 0.5 * (rank + 1) / n
    report("sparse", sparse=isinstance(grads[0][0], tf.IndexedSlices),
           max_diff=float(np.abs(final - expected).max()))


# --- fusion and overlap in a traced step ---------------------------------------------------
def check_trace() -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1024, 384])  # backprop long enough to overlap
        h = x
        for i in range(6):
            w = tf.get_variable(f"w{i}", [384, 384])
            h = tf.nn.relu(tf.matmul(h, w))
        loss = tf.reduce_mean(tf.square(h))
        for i in range(6):  # small variables: several gradients share a bucket
            loss += tf.reduce_sum(tf.square(tf.get_variable(f"bias{i}", [64])))
        opt = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.01),
                                       bucket_size_mb=0.5)
        train_op = opt.minimize(loss)
        feed = {x: np.random.RandomState(0).rand(1024, 384).astype(np.float32)}
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        metadata = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, feed)
            engine = context.world_engine()
            engine.events.clear()
            sess.run(train_op, feed, options=options, run_metadata=metadata)
            requests = sorted({name for ev in engine.events if ev.kind == "allreduce"
                               for name in ev.names})
    lanes = [d for d in metadata.step_stats.dev_stats if "collective" in d.device]
    kernels = [n for d in metadata.step_stats.dev_stats if "collective" not in d.device
               for n in d.node_stats]
    transfers = [n for d in lanes for n in d.node_stats if n.op_type == "Collective:allreduce"]
    grad_ends = [n.all_start_micros + n.all_end_rel_micros for n in kernels
                 if n.node_name.startswith("gradients") and n.op_type == "MatMul"]
    starts = [n.all_start_micros for n in kernels if n.op_type == "CollectiveAllReduceStart"]
    negotiations = [n.all_start_micros for d in lanes for n in d.node_stats
                    if n.op_type == "Collective:negotiate"]
    report("trace", transfers=[n.node_name for n in transfers], requests=requests,
           first_submit=min(starts),
           first_negotiate=min(negotiations),
           first_transfer=min(n.all_start_micros for n in transfers), last_grad_end=max(grad_ends))


def check_waiter_runs_cycle() -> None:
    """engine.wait() runs the cycle of a request the engine thread has not picked up yet
    in the waiting thread (no hand-off); and donated inputs come back reduced in place."""
    import threading

    import torch

    from flowmesh.collective.request import Request
    from flowmesh.collective.speculation import BESIDE_MIN_BYTES

    engine = context.world_engine()
    in_caller, correct, same_memory = 0, True, True
    for i in range(20):
        value = torch.full((50_000,), float(hvd.rank() + 1))
        request = Request("allreduce", f"steal/{i}", "steal", [value], "sum", donated=True)
        resolved_in = []
        set_output = request.handle.set_output
        request.handle.set_output = lambda k, v, f=set_output, seen=resolved_in: (
            seen.append(threading.current_thread()), f(k, v))
        handle = engine.submit(request)
        out = engine.wait(handle)[0]
        in_caller += resolved_in == [threading.current_thread()]
        correct &= bool(torch.equal(out, torch.full((50_000,), 3.0)))
        same_memory &= out.data_ptr() == value.data_ptr()
    # a steady loop of one donated all-reduce: after two negotiated cycles it speculates,
    # in place (two ranks, >= BESIDE_MIN_BYTES: the header travels beside the data on gloo)
    events_before = len(engine.events)
    numel = BESIDE_MIN_BYTES // 4
    for i in range(10):
        value = torch.full((numel,), float(hvd.rank() + i))
        out = engine.run(Request("allreduce", "steady", "steady", [value], "sum", donated=True))[0]
        correct &= bool(torch.equal(out, torch.full((numel,), float(1 + 2 * i))))
        same_memory &= out.data_ptr() == value.data_ptr()
    steady = [ev for ev in list(engine.events)[events_before:] if ev.kind == "allreduce"]
    report("waiter_runs_cycle", in_caller=in_caller, correct=correct, same_memory=same_memory,
           speculative_in_place=sum(ev.speculative and ev.in_place for ev in steady))


def check_out_of_place_ring() -> None:
    """Live (not donated) inputs of >= RING_MIN_BYTES are summed out of place (two ranks:
    by the communicator's ring; three: copy + gloo): every dtype, sizes that do not split
    evenly over the members or the ring's chunks, the input untouched, the same bits on
    every rank; the stream of a steady loop gives the same sums."""
    import torch

    from flowmesh.collective.backends.base import ReduceOp
    from flowmesh.collective.backends.torch_dist import RING_MIN_BYTES
    from flowmesh.collective.request import Request

    engine = context.world_engine()
    r, n = hvd.rank(), hvd.size()
    problems, digests = [], []
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32,
                  torch.int64):
        for numel in (RING_MIN_BYTES // 4 + 1, (3 << 20) // 4 + 7, 1 << 21):
            base = torch.arange(numel, dtype=torch.float64) % 13
            value = (base * (r + 1)).to(dtype)
            kept = value.clone()
            out = engine.run(Request("allreduce", f"ring/{dtype}/{numel}", "ring", [value], "sum"))[0]
            expected = (base * (n * (n + 1) // 2)).to(dtype)
            if not torch.equal(value, kept):
                problems.append(f"{dtype} {numel}: the input changed")
            if out.data_ptr() == value.data_ptr() or not torch.equal(out, expected):
                problems.append(f"{dtype} {numel}: wrong sum")
            digests.append(float(out.to(torch.float64).sum()))
    for i in range(6):  # speculation: the same live all-reduce every step
        value = torch.full((1 << 20,), float(r + i))
        out = engine.run(Request("allreduce", "ring/steady", "ring", [value], "sum"))[0]
        if not torch.equal(out, torch.full((1 << 20,), float(sum(k + i for k in range(n))))):
            problems.append(f"steady step {i}: wrong sum")
    # the communicator's ring itself, with a late peer: the others wait in it (the
    # collective timeout is 2 s), and a second call on the same group still works
    comm = engine.comm
    for late in (0.6, 0.0):
        source, output = torch.full((1 << 20,), float(r + 1)), torch.empty(1 << 20)
        if r == 1:
            time.sleep(late)
        comm.allreduce_each([output], ReduceOp.SUM, sources=[source])
        if not torch.equal(output, torch.full((1 << 20,), float(n * (n + 1) // 2))):
            problems.append(f"ring with a peer {late} s late: wrong sum")
    # in place, a small transfer riding with the large one (a speculative header's layout)
    small, big = torch.full((17,), float(r + 1)), torch.full((1 << 20,), float(r + 2))
    comm.allreduce_each([small, big], ReduceOp.SUM)
    total = n * (n + 1) // 2
    if not (torch.equal(small, torch.full((17,), float(total)))
            and torch.equal(big, torch.full((1 << 20,), float(total + n)))):
        problems.append("in-place batch: wrong sums")
    report("out_of_place_ring", problems=problems, digests=digests)


def check_streams() -> None:
    """A steady all-reduce moves to a stream (its own channel, started by the submitter);
    a rank whose request then changes shape gets the usual mismatch error, on every rank,
    and the key works again afterwards (negotiated)."""
    import torch

    from flowmesh.collective.request import Request

    engine = context.world_engine()
    r = hvd.rank()
    events_before = len(engine.events)
    correct = True
    for i in range(6):
        tensors = [torch.full((3,), float(r + i)), torch.full((100_000,), float(r))]
        handle = engine.submit(Request("allreduce", "steady2", "steady2", tensors, "sum"))
        out = engine.wait(handle)
        correct &= bool(torch.equal(out[0], torch.full((3,), float(1 + 2 * i))))
        correct &= bool(torch.equal(out[1], torch.full((100_000,), 1.0)))
    steady = [ev for ev in list(engine.events)[events_before:] if ev.kind == "allreduce"]
    streamed = "steady2" in engine.streams.active
    changed = [torch.ones(3 + r), torch.ones(100_000)]  # rank 0 still matches, rank 1 does not
    try:
        engine.run(Request("allreduce", "steady2", "steady2", changed, "sum"))
        error, message = None, ""
    except tf.errors.OpError as exc:
        error, message = type(exc).__name__, str(exc)
    after = engine.run(Request("allreduce", "steady2", "steady2", [torch.ones(2)], "sum"))[0]
    report("streams", correct=correct, streamed=streamed, stopped="steady2" not in engine.streams.active,
           speculative=sum(ev.speculative for ev in steady), error=error, message=message,
           after=after.tolist())


# --- faults ------------------------------------------------------------------------------
def check_mismatch() -> None:
    r = hvd.rank()
    with tf.Graph().as_default():
        bad = hvd.allreduce(tf.ones([3 + r]), name="mismatched")
        with tf.Session() as sess:
            try:
                sess.run(bad)
                report("mismatch", error=None)
            except tf.errors.OpError as exc:
                report("mismatch", error=type(exc).__name__, message=str(exc))
            good = sess.run(hvd.allreduce(tf.ones([2]), op=hvd.Sum, name="after_mismatch"))
    report("after_mismatch", value=good.tolist())


def check_stalled_rank() -> None:
    """Rank 1 stays alive but never joins the last all-reduce."""
    if hvd.rank() == 1:
        time.sleep(float(os.environ["FLOWMESH_COLLECTIVE_TIMEOUT_S"]) + 4)
        return
    with tf.Graph().as_default():
        last = hvd.allreduce(tf.ones([2]), name="only_rank0_runs_this")
        start = time.monotonic()
        try:
            run(last)
            report("stalled", error=None)
        except tf.errors.OpError as exc:
            report("stalled", error=type(exc).__name__, message=str(exc),
                   seconds=time.monotonic() - start)


def check_stalled_rank_on_a_stream() -> None:
    """Rank 1 stops submitting a key that already streams: rank 0, waiting on the key's
    own channel, gets the stall error within the collective timeout."""
    import torch

    from flowmesh.collective.request import Request

    engine = context.world_engine()
    for _ in range(4):
        engine.run(Request("allreduce", "steady3", "steady3", [torch.ones(100_000)], "sum"))
    streamed = "steady3" in engine.streams.active
    if hvd.rank() == 1:
        time.sleep(float(os.environ["FLOWMESH_COLLECTIVE_TIMEOUT_S"]) + 4)
        return
    start = time.monotonic()
    try:
        engine.run(Request("allreduce", "steady3", "steady3", [torch.ones(100_000)], "sum"))
        report("stream_stalled", error=None, streamed=streamed)
    except tf.errors.OpError as exc:
        report("stream_stalled", error=type(exc).__name__, message=str(exc),
               seconds=time.monotonic() - start, streamed=streamed)


def check_dead_rank() -> None:
    """The last rank dies (SIGKILL) while the others wait for it in a steady all-reduce
    (one that already moved to its stream)."""
    with tf.Graph().as_default():
        mine = tf.ones([20_000]) * float(hvd.rank() + 1)  # large enough not to go inline
        reduced = hvd.allreduce(mine, name="peer_dies_during_this")
        sess = tf.Session()
        steady = [sess.run(reduced) for _ in range(4)]
        correct = all(np.array_equal(v, np.full(20_000, 2.0, np.float32)) for v in steady)  # mean
        streamed = bool(context.world_engine().streams.active)
        if hvd.rank() == hvd.size() - 1:
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGKILL)
        start = time.monotonic()
        try:
            sess.run(reduced)
            report("dead", error=None)
        except tf.errors.OpError as exc:
            report("dead", error=type(exc).__name__, message=str(exc),
                   seconds=time.monotonic() - start, streamed=streamed, correct=correct)


def main() -> None:
    hvd.init()
    scenario = sys.argv[1]
    if scenario == "main":
        check_dtypes_and_shapes()
        check_gradients()
        check_compression()
        check_distributed_optimizer(passes=1)
        check_distributed_optimizer(passes=2)
        check_sparse_gradients()
        check_trace()
        check_waiter_runs_cycle()
        check_out_of_place_ring()
        check_streams()
        check_mismatch()
        check_stalled_rank()
    elif scenario == "trace":
        check_trace()
    elif scenario == "stream_stall":
        check_stalled_rank_on_a_stream()
    elif scenario == "three":
        check_dtypes_and_shapes()
        check_out_of_place_ring()
        check_dead_rank()


if __name__ == "__main__":
    main()
