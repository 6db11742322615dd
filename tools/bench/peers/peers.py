#!/usr/bin/env python3
"""PyTorch and NumPy counterparts of Tessera's benchmark workloads.

`tessera bench --torch` starts this script (embedded in the binary, written
to a temporary file) with Debian's interpreter, /usr/bin/python3 unless
--python says otherwise, and talks to it over stdin/stdout, one JSON object
per line, so that it can interleave the peers with Tessera round by round:

    -> (on start)  {"python": ..., "torch": ..., "blas": ..., "workloads": {...}, ...}
    <- {"workload": "gemm", "peer": "torch", "device": "cpu", "dims": [256],
        "min_time": 0.25, "min_iters": 1}
    -> {"seconds": 0.26, "iters": 61, "memory": {"bytes": ..., "kind": ...}}

The first request for a (workload, peer, device, dims) sets the case up and
measures its memory over a warm-up step (CPU: growth of the resident set's
high-water mark, reset through /proc/self/clear_refs; CUDA: the caching
allocator's peak); later requests only time it. Each workload is written
as a user of the library writes it: torch.nn modules, F.cross_entropy and
torch.optim for PyTorch, Karpathy's min-char-rnn loop on float32 arrays for
NumPy. A CUDA step ends with torch.cuda.synchronize(), as Tessera's ends
with a wait for the device. Anything this script prints goes to stderr; stdout
carries the protocol only.

    /usr/bin/python3 peers.py --threads 2
"""

import argparse
import gc
import json
import os
import platform
import re
import sys
import time

PROTO = sys.stdout
sys.stdout = sys.stderr  # libraries' prints must not corrupt the protocol

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


# --- PyTorch workloads: each returns a step function ---------------------

def torch_gemm(dev, n):
    a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
    return lambda: a @ b


def torch_conv2d(dev, n, cin, hw, cout, k):
    x = torch.randn(n, cin, hw, hw, device=dev)
    w, b = torch.randn(cout, cin, k, k, device=dev), torch.randn(cout, device=dev)
    return lambda: F.conv2d(x, w, b, padding=k // 2)


def torch_mul_add(dev, n):
    a, b = torch.randn(n, device=dev), torch.randn(n, device=dev)
    return lambda: a * b + a


def numpy_mul_add(dev, n):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    return lambda: a * b + a


def torch_sum(dev, n):
    a = torch.randn(n, device=dev)
    return lambda: a.sum()


def torch_softmax(dev, r, c):
    a = torch.randn(r, c, device=dev)
    return lambda: F.softmax(a, dim=-1)


def torch_tiny_op(dev, n, ops):
    x = torch.randn(n, device=dev)

    def step():
        y = x
        for _ in range(ops):
            y = y + 1
    return step


def torch_mlp_step(dev, batch, *widths):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers).to(dev)
    x = torch.randn(batch, widths[0], device=dev)
    y = torch.randint(0, widths[-1], (batch,), device=dev)
    return classifier_step(model, x, y)


def classifier_step(model, x, y):
    """One SGD (lr 0.01) step of a classifier on a fixed batch."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
    return step


def torch_cnn_step(dev, batch, c1, c2):
    model = nn.Sequential(
        nn.Conv2d(1, c1, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(c2 * 7 * 7, 10)).to(dev)
    x = torch.randn(batch, 1, 28, 28, device=dev)
    y = torch.randint(0, 10, (batch,), device=dev)
    return classifier_step(model, x, y)


def ragged_batch(dev, batch, longest, features):
    """lstm_*_step's batch: lengths spread evenly over longest/4…longest."""
    lengths = [longest // 4 + (b * (longest - longest // 4) // (batch - 1) if batch > 1 else 0) for b in range(batch)]
    xs = [torch.randn(n, features, device=dev) for n in lengths]
    ys = [torch.randn(n, device=dev) for n in lengths]
    return lengths, xs, ys


def torch_lstm_step(packed):
    def make(dev, batch, longest, features, hidden):
        lengths, xs, ys = ragged_batch(dev, batch, longest, features)
        lstm = nn.LSTM(features, hidden).to(dev)
        w = torch.randn(hidden, device=dev, requires_grad=True)
        opt = torch.optim.SGD(list(lstm.parameters()) + [w], lr=0.01)
        total = sum(lengths)
        x_pad = nn.utils.rnn.pad_sequence(xs)  # (longest, batch, features), built once
        y_pad = nn.utils.rnn.pad_sequence(ys)
        mask = (torch.arange(longest, device=dev)[:, None] < torch.tensor(lengths, device=dev)[None, :]).float()

        x_packed = nn.utils.rnn.pack_sequence(xs, enforce_sorted=False)  # built once, as x_pad
        y_packed = nn.utils.rnn.pack_sequence(ys, enforce_sorted=False).data

        def step():
            opt.zero_grad()
            if packed:
                out, _ = lstm(x_packed)
                loss = ((out.data @ w - y_packed) ** 2).sum() / total
            else:
                out, _ = lstm(x_pad)
                loss = (((out @ w - y_pad) * mask) ** 2).sum() / total
            loss.backward()
            opt.step()
            loss.item()
        return step
    return make


def torch_gpt_padded_step(dev, batch, longest, width, heads, layers):
    """gpt_padded_step: causal pre-norm nn.TransformerEncoderLayers on the
    batch padded to the longest, with a causal src_mask and a
    src_key_padding_mask, the loss masked to the real rows. PyTorch 1.13
    cannot train a transformer on nested (ragged) tensors, so
    gpt_ragged_step has no peer."""
    lengths, xs, ys = ragged_batch(dev, batch, longest, width)
    model = nn.Sequential(*[nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="gelu",
                                                       batch_first=True, norm_first=True) for _ in range(layers)]).to(dev)
    w = torch.randn(width, device=dev, requires_grad=True)
    opt = torch.optim.SGD(list(model.parameters()) + [w], lr=0.01)
    total = sum(lengths)
    x_pad = nn.utils.rnn.pad_sequence(xs, batch_first=True)  # (batch, longest, width), built once
    y_pad = nn.utils.rnn.pad_sequence(ys, batch_first=True)
    keep = (torch.arange(longest, device=dev)[None, :] < torch.tensor(lengths, device=dev)[:, None])
    causal = torch.triu(torch.ones(longest, longest, dtype=torch.bool, device=dev), 1)
    pads = ~keep

    def step():
        opt.zero_grad()
        h = x_pad
        for layer in model:
            h = layer(h, src_mask=causal, src_key_padding_mask=pads)
        loss = (((h @ w - y_pad) * keep.float()) ** 2).sum() / total
        loss.backward()
        opt.step()
        loss.item()
    return step


def char_data(vocab, seq):
    rng = np.random.default_rng(1)
    return rng.integers(0, vocab, size=64 * seq + 1).tolist()


def torch_minchar_step(dev, hidden, seq, vocab):
    def param(*shape):
        return (torch.randn(*shape, device=dev) * 0.01).requires_grad_()
    Wxh, Whh, Why = param(hidden, vocab), param(hidden, hidden), param(vocab, hidden)
    bh = torch.zeros(hidden, device=dev, requires_grad=True)
    by = torch.zeros(vocab, device=dev, requires_grad=True)
    params = [Wxh, Whh, Why, bh, by]
    opt = torch.optim.Adagrad(params, lr=0.1, eps=1e-8)
    data = char_data(vocab, seq)
    state = {"h": torch.zeros(hidden, device=dev), "p": 0}

    def step():
        p = state["p"]
        if p + seq + 1 > len(data):
            p = 0
        inputs = torch.tensor(data[p:p + seq], device=dev)
        targets = torch.tensor(data[p + 1:p + seq + 1], device=dev)
        state["p"] = p + seq
        x = F.embedding(inputs, Wxh.t())  # row t = Wxh @ one-hot(inputs[t])
        h = state["h"]
        logits = []
        for t in range(seq):
            h = torch.tanh(x[t] + Whh @ h + bh)
            logits.append(Why @ h + by)
        loss = F.cross_entropy(torch.stack(logits), targets, reduction="sum")
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(params, 5)
        opt.step()
        loss.item()
        state["h"] = h.detach()
    return step


# --- NumPy: Karpathy's min-char-rnn, float32 -----------------------------

def numpy_minchar_step(dev, hidden, seq, vocab):
    f32 = np.float32
    rng = np.random.default_rng(1)
    Wxh = (rng.standard_normal((hidden, vocab)) * 0.01).astype(f32)
    Whh = (rng.standard_normal((hidden, hidden)) * 0.01).astype(f32)
    Why = (rng.standard_normal((vocab, hidden)) * 0.01).astype(f32)
    bh, by = np.zeros((hidden, 1), f32), np.zeros((vocab, 1), f32)
    params = [Wxh, Whh, Why, bh, by]
    mems = [np.zeros_like(p) for p in params]
    data = char_data(vocab, seq)
    state = {"h": np.zeros((hidden, 1), f32), "p": 0}

    def loss_fun(inputs, targets, hprev):
        xs, hs, ps = {}, {}, {}
        hs[-1] = np.copy(hprev)
        loss = 0
        for t in range(len(inputs)):
            xs[t] = np.zeros((vocab, 1), f32)
            xs[t][inputs[t]] = 1
            hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
            ys = np.dot(Why, hs[t]) + by
            ps[t] = np.exp(ys) / np.sum(np.exp(ys))
            loss += -np.log(ps[t][targets[t], 0])
        dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
        dbh, dby = np.zeros_like(bh), np.zeros_like(by)
        dhnext = np.zeros_like(hs[0])
        for t in reversed(range(len(inputs))):
            dy = np.copy(ps[t])
            dy[targets[t]] -= 1
            dWhy += np.dot(dy, hs[t].T)
            dby += dy
            dh = np.dot(Why.T, dy) + dhnext
            dhraw = (1 - hs[t] * hs[t]) * dh
            dbh += dhraw
            dWxh += np.dot(dhraw, xs[t].T)
            dWhh += np.dot(dhraw, hs[t - 1].T)
            dhnext = np.dot(Whh.T, dhraw)
        for dparam in [dWxh, dWhh, dWhy, dbh, dby]:
            np.clip(dparam, -5, 5, out=dparam)  # mitigate exploding gradients
        return loss, [dWxh, dWhh, dWhy, dbh, dby], hs[len(inputs) - 1]

    def step():
        p = state["p"]
        if p + seq + 1 > len(data):
            p = 0
        inputs, targets = data[p:p + seq], data[p + 1:p + seq + 1]
        state["p"] = p + seq
        loss, grads, state["h"] = loss_fun(inputs, targets, state["h"])
        for param, dparam, mem in zip(params, grads, mems):
            mem += dparam * dparam
            param += -0.1 * dparam / np.sqrt(mem + 1e-8)  # adagrad update
        float(loss)
    return step


WORKLOADS = {
    "torch": {
        "gemm": torch_gemm, "conv2d": torch_conv2d, "mul_add": torch_mul_add, "sum": torch_sum,
        "softmax": torch_softmax, "tiny_op": torch_tiny_op,
        "mlp_step": torch_mlp_step, "cnn_step": torch_cnn_step, "minchar_step": torch_minchar_step,
        "lstm_padded_step": torch_lstm_step(False), "lstm_ragged_step": torch_lstm_step(True),
        "gpt_padded_step": torch_gpt_padded_step,
    },
    "numpy": {"minchar_step": numpy_minchar_step, "mul_add": numpy_mul_add},
}
DEVICES = {"torch": ("cpu", "cuda"), "numpy": ("cpu",)}


# --- the machine: BLAS, threads, CUDA ------------------------------------

def blas_libraries():
    """Shared libraries of BLAS family loaded into this process."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if path.startswith("/") and re.search(r"blas|mkl|blis|lapack", os.path.basename(path), re.I):
                found.add(os.path.realpath(path))
    return sorted(found)


def classify(libs):
    """openblas, mkl, blis, reference (Debian's netlib libblas) or unknown."""
    joined = " ".join(libs).lower()
    for kind in ("openblas", "mkl", "blis"):
        if kind in joined:
            return kind
    if any("/blas/" in p or os.path.basename(p).startswith("libblas.so") for p in libs):
        return "reference"
    return "unknown"


def torch_blas(config, libs):
    m = re.search(r"BLAS_INFO=([^,\s]+)", config)
    info = m.group(1) if m else ""
    kind = {"mkl": "mkl", "open": "openblas", "blis": "blis", "accelerate": "accelerate"}.get(info)
    return info, kind or classify(libs)


def numpy_blas(libs):
    """NumPy's configuration text and BLAS: a wheel's bundled OpenBLAS, or
    the libblas.so.3 that Debian's build loads (found in libs)."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        np.show_config()
    text = buf.getvalue()
    if re.search(r"libraries = \['openblas", text) or re.search(r"name: scipy-openblas|openblas64", text):
        return text, "openblas"
    return text, classify(libs)


def cuda_info():
    if not torch.cuda.is_available():
        return None
    props = torch.cuda.get_device_properties(0)
    driver = ""
    try:
        with open("/proc/driver/nvidia/version") as f:
            driver = f.readline().strip()
    except OSError:
        pass
    return {"device": props.name, "capability": f"{props.major}.{props.minor}",
            "memory_bytes": props.total_memory, "cuda": torch.version.cuda or "", "driver": driver}


def info(threads):
    a = torch.randn(64, 64)
    (a @ a).sum().item()  # load the BLAS torch uses
    np.dot(np.ones((64, 64), np.float32), np.ones((64, 64), np.float32))
    libs = blas_libraries()
    config = torch.__config__.show()
    tinfo, tkind = torch_blas(config, libs)
    ntext, nkind = numpy_blas(libs)
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                      "MKL_NUM_THREADS") if k in os.environ}
    return {
        "python": sys.executable, "python_version": platform.python_version(),
        "torch": torch.__version__, "numpy": np.__version__,
        "threads": torch.get_num_threads(), "requested_threads": threads,
        "torch_blas": tkind, "torch_blas_info": tinfo, "numpy_blas": nkind, "blas_libraries": libs,
        "torch_config": config, "numpy_config": ntext, "env": env, "cuda": cuda_info(),
        "workloads": {peer: sorted(ws) for peer, ws in WORKLOADS.items()},
    }


# --- timing and memory ---------------------------------------------------

def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_rss_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def setup(req):
    """Sets a case up and runs its warm-up step, measuring memory."""
    peer, dev = req["peer"], req["device"]
    fn = WORKLOADS.get(peer, {}).get(req["workload"])
    if fn is None:
        raise ValueError(f"peers.py has no {peer} version of workload {req['workload']!r}")
    if dev not in DEVICES[peer]:
        raise ValueError(f"{peer} does not run on {dev}")
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    gc.collect()
    if dev == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = status_kib("VmRSS") * 1024
        resettable = reset_rss_peak()
    step = fn(dev, *req["dims"])
    for _ in range(2):
        step()
        sync()
    if dev == "cuda":
        mem = {"bytes": torch.cuda.max_memory_allocated() - base, "kind": "cuda-peak"}
    elif resettable:
        mem = {"bytes": max(0, status_kib("VmHWM") * 1024 - base), "kind": "rss-peak-growth"}
    else:
        mem = None
    return step, sync, mem


def timed(step, sync, min_time, min_iters):
    iters, start = 0, time.perf_counter()
    while True:
        step()
        sync()
        iters += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time and iters >= min_iters:
            return elapsed, iters


def send(obj):
    PROTO.write(json.dumps(obj) + "\n")
    PROTO.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    send(info(args.threads))
    cases = {}
    for line in sys.stdin:
        req = json.loads(line)
        key = (req["workload"], req["peer"], req["device"], tuple(req["dims"]))
        resp = {}
        try:
            mem = None
            if key not in cases:
                step, sync, mem = setup(req)
                cases[key] = (step, sync)
            step, sync = cases[key]
            resp["seconds"], resp["iters"] = timed(step, sync, req["min_time"], req["min_iters"])
            if mem is not None:
                resp["memory"] = mem
        except Exception as e:  # noqa: BLE001 -- reported to the Go side per case
            resp = {"error": f"{type(e).__name__}: {e}"}
        send(resp)


if __name__ == "__main__":
    main()
