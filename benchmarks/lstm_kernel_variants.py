"""Ways to run the fused LSTM's forward + backward pass (hidden 128, 28 steps x 28 inputs,
batch 64, float32), timed side by side: what ``FusedLSTM`` keeps and what it dropped.

    python -m benchmarks.lstm_kernel_variants [--threads 1] [--repeats 7] [--steps 10]

Every variant computes the same thing from TensorFlow's ``[D+H, 4H]`` kernel (gates
``i, j, f, o``) and bias: the outputs, final states and the gradients of a fixed cotangent
with respect to the input, the initial states, the kernel and the bias.

* ``direct`` (flowmesh's default, ``kernels/cpu/onednn_lstm.py``): oneDNN's LSTM forward and
  backward ops called directly, weights packed into torch's layout at every call.
* ``autograd``: the earlier kernel: gates reordered with ``cat``, ``torch._VF.lstm`` recorded
  by autograd, ``torch.autograd.grad`` (``FLOWMESH_ONEDNN_LSTM=0``).
* ``autograd_packed``: autograd over weights already in torch's layout (what caching the
  reordered weights would save), gradients unpacked to TensorFlow's layout afterwards.
* ``autograd_no_dx``: ``autograd`` without the gradient of the input (x is often a
  placeholder).
* ``manual``: one GEMM for every step's input projection, one recurrent GEMM and the gate
  math per step, a hand-written backward pass with the weight gradients as two big GEMMs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.harness import Contender, Settings, StepFn, measure, parse_settings, report

PEERS = ("autograd", "autograd_packed", "autograd_no_dx", "manual")
T, B, D, H = 28, 64, 28, 128


def _problem() -> dict[str, Any]:
    import torch

    gen = torch.Generator().manual_seed(0)
    gy = torch.zeros(T, B, H)
    gy[-1] = torch.randn(B, H, generator=gen)
    return {"x": torch.rand(T, B, D, generator=gen), "c0": torch.zeros(B, H), "h0": torch.zeros(B, H),
            "kernel": (torch.rand(D + H, 4 * H, generator=gen) - 0.5) * 0.2, "bias": torch.zeros(4 * H),
            "gy": gy, "gc": torch.zeros(B, H), "gh": torch.zeros(B, H)}


def _direct(p: dict[str, Any]) -> Callable[[], Any]:
    from flowmesh.kernels.cpu import onednn_lstm

    def run() -> Any:
        import torch

        with torch.enable_grad():
            _, _, _, reserve = onednn_lstm.forward(p["x"], p["c0"], p["h0"], p["kernel"], p["bias"], 1.0,
                                                   "ijfo", True)
        return onednn_lstm.backward(reserve, p["gy"], p["gc"], p["gh"])

    return run


def _autograd(p: dict[str, Any], input_grad: bool = True) -> Callable[[], Any]:
    from flowmesh.kernels import rnn_ops

    def run() -> Any:
        import torch

        leaves = [t.detach().requires_grad_() for t in (p["x"], p["c0"], p["h0"], p["kernel"], p["bias"])]
        if not input_grad:
            leaves[0] = p["x"]
        with torch.enable_grad():
            weights = rnn_ops._torch_weights(leaves[3], leaves[4], D, 1.0)
            y, c, h = rnn_ops._lstm(leaves[0], leaves[1], leaves[2], weights, None)
        wrt = [t for t in leaves if t.requires_grad]
        return torch.autograd.grad((y, c, h), wrt, (p["gy"], p["gc"], p["gh"]))

    return run


def _autograd_packed(p: dict[str, Any]) -> Callable[[], Any]:
    from flowmesh.kernels import rnn_ops
    from flowmesh.kernels.cpu import onednn_lstm

    permutation = onednn_lstm._permutation(H, "ijfo")
    packed = onednn_lstm._pack(p["kernel"], p["bias"], D, 1.0, permutation)

    def run() -> Any:
        import torch

        leaves = [t.detach().requires_grad_() for t in (p["x"], p["c0"], p["h0"], *packed[:3])]
        with torch.enable_grad():
            y, c, h = rnn_ops._lstm(leaves[0], leaves[1], leaves[2], leaves[3:] + [packed[3]], None)
        grads = torch.autograd.grad((y, c, h), leaves, (p["gy"], p["gc"], p["gh"]))
        rows = torch.cat([grads[3], grads[4]], dim=1).index_select(0, permutation)
        return grads[:3] + (rows.t().contiguous(), grads[5].index_select(0, permutation))

    return run


def _manual(p: dict[str, Any]) -> Callable[[], Any]:
    def run() -> Any:

        acts, cs, hs = _manual_forward(p)
        return _manual_backward(p, acts, cs, hs)

    return run


def _manual_forward(p: dict[str, Any]) -> tuple[Any, Any, Any]:
    import torch

    w_x, w_h = p["kernel"][:D], p["kernel"][D:]
    projected = torch.addmm(p["bias"], p["x"].reshape(T * B, D), w_x).view(T, B, 4 * H)
    hs, cs = torch.empty(T + 1, B, H), torch.empty(T + 1, B, H)
    hs[0], cs[0] = p["h0"], p["c0"]
    acts = torch.empty(T, B, 4 * H)  # sigmoid(i), tanh(j), sigmoid(f + 1), sigmoid(o)
    for t in range(T):
        gates = torch.addmm(projected[t], hs[t], w_h)
        torch.sigmoid(gates, out=acts[t])
        i, j, f, o = acts[t].chunk(4, 1)
        torch.tanh(gates[:, H:2 * H], out=j)
        torch.sigmoid(gates[:, 2 * H:3 * H] + 1.0, out=f)
        torch.addcmul(f * cs[t], i, j, out=cs[t + 1])
        torch.mul(o, torch.tanh(cs[t + 1]), out=hs[t + 1])
    return acts, cs, hs


def _manual_backward(p: dict[str, Any], acts: Any, cs: Any, hs: Any) -> tuple[Any, ...]:
    import torch

    w_x, w_h = p["kernel"][:D], p["kernel"][D:]
    dgates = torch.empty(T, B, 4 * H)
    dh, dc = p["gh"].clone(), p["gc"].clone()
    for t in range(T - 1, -1, -1):
        dh += p["gy"][t]
        i, j, f, o = acts[t].chunk(4, 1)
        dgi, dgj, dgf, dgo = dgates[t].chunk(4, 1)
        tc = torch.tanh(cs[t + 1])
        torch.mul(dh, tc, out=dgo).mul_(o * (1 - o))
        dc.addcmul_(dh * o, 1 - tc * tc)
        torch.mul(dc, j, out=dgi).mul_(i * (1 - i))
        torch.mul(dc, i, out=dgj).mul_(1 - j * j)
        torch.mul(dc, cs[t], out=dgf).mul_(f * (1 - f))
        dc = dc * f
        dh = torch.mm(dgates[t], w_h.t())
    flat = dgates.view(T * B, 4 * H)
    dkernel = torch.cat([torch.mm(p["x"].reshape(T * B, D).t(), flat), torch.mm(hs[:-1].reshape(T * B, H).t(), flat)])
    return torch.mm(flat, w_x.t()).view(T, B, D), dc, dh, dkernel, flat.sum(0)


VARIANTS: dict[str, Callable[[dict[str, Any]], Callable[[], Any]]] = {
    "direct": _direct, "autograd": _autograd, "autograd_packed": _autograd_packed,
    "autograd_no_dx": lambda p: _autograd(p, input_grad=False), "manual": _manual,
}


def check_agreement(rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """Raises AssertionError unless every variant's gradients equal ``direct``'s."""
    import torch

    p = _problem()
    reference = VARIANTS["direct"](p)()
    for name, make in VARIANTS.items():
        got = make(p)()
        tail = reference[1:] if name == "autograd_no_dx" else reference
        for a, b in zip(got, tail):
            torch.testing.assert_close(a, b, rtol=rtol, atol=atol, msg=lambda m, name=name: f"{name}: {m}")


def _contender(name: str) -> Contender:
    def setup(settings: Settings) -> StepFn:
        return VARIANTS[name](_problem())

    return Contender(name, setup)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    import flowmesh  # noqa: F401 - before torch, so flowmesh sets OpenMP's wait policy

    settings = parse_settings(__doc__ or "", PEERS, argv, steps=10, repeats=7, warmup=3)
    check_agreement()
    results = measure([_contender("direct")] + [_contender(p) for p in settings.peers], settings)
    return report("lstm_kernel_variants", f"LSTM fwd+bwd hidden {H}, {T} steps x {D}, batch {B}", results,
                  settings)


if __name__ == "__main__":
    main()
