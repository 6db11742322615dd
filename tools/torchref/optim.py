#!/usr/bin/env python3
"""Generate PyTorch reference trajectories for Tessera's optimizers.

Run from anywhere (writes <repo>/testdata/torch/optim.json):

    /usr/bin/python3 tools/torchref/optim.py

Needs PyTorch (Debian's python3-torch 1.13, CPU); tests never need it: they
read the JSON through internal/torchref (same file format as gen.py's files,
see README.md).

Each case runs one torch.optim optimizer (single-tensor implementation,
foreach=False) for STEPS steps over two parameters, p0 (3, 4) and p1 (5),
whose gradients are set by hand before every step (fixed random tensors, a
different scale each step, so that AMSGrad's maximum matters). Case layout:

  op       sgd | adam | adamw | adagrad | rmsprop
  attrs    the optimizer's keyword arguments (betas as a list), plus
           "steps" (5), and "skip": [[step, param], ...] listing (1-based
           step, 0-based param) pairs whose gradient is None at that step
           (torch skips the parameter; its state does not advance).
  inputs   p0, p1 (initial values), then the gradients: step 1's g0, g1,
           step 2's g0, g1, ... (a skipped gradient is still stored; ignore it)
  outputs  p0, p1 after step 1, after step 2, ... (2 * steps tensors)

Determinism: each case seeds a torch.Generator with crc32(case name).
"""

import json
import os
import subprocess
import sys
import zlib

import torch

torch.set_num_threads(1)

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(REPO, "testdata", "torch", "optim.json")
STEPS = 5
SCALES = [1.0, 0.1, 2.0, 0.05, 0.5]
OPTIMIZERS = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "adagrad": torch.optim.Adagrad,
    "rmsprop": torch.optim.RMSprop,
}
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def torch_package_version():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-torch"],
                             capture_output=True, text=True, check=False)
        return out.stdout.strip() or None
    except OSError:
        return None


def enc(t):
    t = t.detach()
    name = {torch.float32: "float32", torch.float64: "float64"}[t.dtype]
    return {"dtype": name, "shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


CASES = []


def trajectory_inputs(name, dtype, shapes, steps=STEPS):
    """Draws parameters of shapes and each step's gradients (SCALES[s]
    times a fresh draw) from the generator of case name, and returns them
    with the case's encoded inputs: the parameters, then the gradients
    step after step."""
    dt = DTYPES[dtype]
    g = torch.Generator()
    g.manual_seed(zlib.crc32(name.encode()))
    # Values are drawn in float64 and rounded to float32, so both dtypes
    # start from exactly the stored numbers.
    draw = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64).to(torch.float32).to(dt)
    params = [draw(*shape).requires_grad_(True) for shape in shapes]
    inputs = [enc(p) for p in params]
    grads = []
    for s in range(steps):
        step = [(draw(*p.shape).double() * SCALES[s]).to(torch.float32).to(dt) for p in params]
        grads.append(step)
        inputs += [enc(x) for x in step]
    return params, grads, inputs


def case(name, op, kwargs, dtype="float64", skip=()):
    params, grads, inputs = trajectory_inputs(name, dtype, [(3, 4), (5,)])
    kw = dict(kwargs)
    if "betas" in kw:
        kw["betas"] = tuple(kw["betas"])
    opt = OPTIMIZERS[op](params, foreach=False, **kw)
    outputs = []
    skipped = {(s, i) for s, i in skip}
    for s in range(STEPS):
        for i, p in enumerate(params):
            p.grad = None if (s + 1, i) in skipped else grads[s][i].clone()
        opt.step()
        outputs += [enc(p) for p in params]
    attrs = dict(kwargs)
    attrs["steps"] = STEPS
    attrs["skip"] = [list(x) for x in skip]
    CASES.append({"name": name, "op": op, "attrs": attrs, "inputs": inputs,
                  "outputs": outputs, "grad_outputs": [], "grads": [None] * len(inputs)})


def main():
    case("sgd/plain/f64", "sgd", {"lr": 0.1})
    case("sgd/momentum/f64", "sgd", {"lr": 0.1, "momentum": 0.9})
    case("sgd/momentum_dampening_wd/f64", "sgd", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01})
    case("sgd/nesterov_wd/f64", "sgd", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1})
    case("sgd/momentum_maximize/f64", "sgd", {"lr": 0.1, "momentum": 0.5, "maximize": True})
    case("sgd/momentum_skip/f64", "sgd", {"lr": 0.1, "momentum": 0.9}, skip=[(2, 1), (3, 0)])
    case("sgd/momentum/f32", "sgd", {"lr": 0.1, "momentum": 0.9}, dtype="float32")

    case("adam/default_lr0.01/f64", "adam", {"lr": 0.01})
    case("adam/betas_eps_wd/f64", "adam", {"lr": 0.01, "betas": [0.8, 0.9], "eps": 1e-6, "weight_decay": 0.1})
    case("adam/amsgrad/f64", "adam", {"lr": 0.01, "amsgrad": True})
    case("adam/maximize/f64", "adam", {"lr": 0.01, "maximize": True})
    case("adam/skip/f64", "adam", {"lr": 0.01}, skip=[(1, 1), (4, 0)])
    case("adam/default_lr0.01/f32", "adam", {"lr": 0.01}, dtype="float32")

    case("adamw/default_lr0.01/f64", "adamw", {"lr": 0.01})
    case("adamw/wd_amsgrad/f64", "adamw", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True})
    case("adamw/maximize/f32", "adamw", {"lr": 0.01, "maximize": True}, dtype="float32")

    case("adagrad/lr0.1/f64", "adagrad", {"lr": 0.1})
    case("adagrad/decay_wd_acc_eps/f64", "adagrad",
         {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.05, "initial_accumulator_value": 0.2, "eps": 1e-8})
    case("adagrad/maximize_skip/f64", "adagrad", {"lr": 0.1, "maximize": True}, skip=[(2, 0)])
    case("adagrad/lr0.1/f32", "adagrad", {"lr": 0.1}, dtype="float32")

    case("rmsprop/default/f64", "rmsprop", {"lr": 0.01})
    case("rmsprop/alpha_eps_wd_momentum/f64", "rmsprop",
         {"lr": 0.01, "alpha": 0.9, "eps": 1e-5, "weight_decay": 0.1, "momentum": 0.8})
    case("rmsprop/centered_momentum/f64", "rmsprop", {"lr": 0.01, "centered": True, "momentum": 0.5})
    case("rmsprop/pg_pong_ascent/f64", "rmsprop", {"lr": 1e-4, "alpha": 0.99, "eps": 1e-5, "maximize": True})
    case("rmsprop/centered/f32", "rmsprop", {"lr": 0.01, "centered": True}, dtype="float32")

    head = {"torch": torch.__version__, "torch_package": torch_package_version(),
            "generator": "tools/torchref/optim.py", "family": "optim"}
    lines = [json.dumps(c, separators=(",", ":"), allow_nan=False) for c in CASES]
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)
    with open(OUT, "w") as f:
        f.write(text)
    print(f"{OUT}: {len(CASES)} cases, {len(text)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
