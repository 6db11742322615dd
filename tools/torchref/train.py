#!/usr/bin/env python3
"""Generate PyTorch reference vectors for Tessera's training utilities.

Run from anywhere (writes <repo>/testdata/torch/<family>.json, every family
or only those named):

    /usr/bin/python3 tools/torchref/train.py [modules] [sched] [groups] [clip]

Needs PyTorch (Debian's python3-torch 1.13, CPU); tests never need it. The
files share the case format of gen.py and optim.py (README.md):

  modules  state-dict, parameter and buffer names of torch.nn architectures
           that Tessera's nn builds the same way. attrs: "keys" (state_dict
           order), "shapes" (one per key), "params" (named_parameters),
           "buffers" (named_buffers). No tensors.
  sched    learning-rate schedules (torch.optim.lr_scheduler) stepping an
           optimizer of two parameter groups (lr "lrs", SGD momentum 0.9 or
           Adam). attrs: "optimizer" (sgd | adam), "lrs", "schedule" (the
           schedule's keyword arguments, or "schedules" and "milestones" for
           sequential), "steps". outputs: lr [steps+1, groups] (after
           construction, then after each step) and momentum [steps+1, groups]
           (SGD's momentum or Adam's beta1, which OneCycleLR cycles).
  groups   optimizer trajectories over three parameters p0 (3, 4), p1 (5),
           p2 (2, 3) in two parameter groups. attrs: the optimizer's defaults
           (keyword arguments), "groups" (each {"params": [indices], options
           that override the defaults}), "steps", "state_keys" (the tensor
           names of optimizer.state_dict()["state"] after the last step, as
           "state.<index>.<name>", step excluded), and optionally "warmup"
           (LinearLR start factor and iterations) and "cosine" (T_max) for a
           SequentialLR stepped after every optimizer step. inputs: p0, p1,
           p2, then each step's gradients; outputs: the parameters after
           every step.
  clip     torch.nn.utils.clip_grad_norm_ over gradients of shapes (3, 4),
           (5) and (2, 3, 2). attrs: "max_norm", "norm_type" (a number or
           "inf"), "none" (indices of parameters without a gradient).
           inputs: the gradients (a parameter without one still has its
           tensor stored: ignore it); outputs: the total norm (0-d), then the
           clipped gradients of the parameters that have one.

Determinism: each case seeds a torch.Generator with crc32(case name); the
script writes identical bytes when run twice.
"""

import collections
import json
import os
import sys
import zlib

import torch
from torch import nn

from gen import enc_tensor as enc, torch_package_version
from optim import trajectory_inputs

torch.set_num_threads(1)

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DTYPES = {"float32": torch.float32, "float64": torch.float64}
FAMILIES = collections.OrderedDict((f, []) for f in ("modules", "sched", "groups", "clip"))


def generator(name):
    g = torch.Generator()
    g.manual_seed(zlib.crc32(name.encode()))
    return g


def add(family, name, op, attrs, inputs=(), outputs=()):
    FAMILIES[family].append({"name": name, "op": op, "attrs": attrs, "inputs": list(inputs),
                             "outputs": list(outputs), "grad_outputs": [], "grads": [None] * len(inputs)})


# --------------------------------------------------------------------------
# modules: state-dict names
# --------------------------------------------------------------------------

def module_case(name, m):
    sd = m.state_dict()
    add("modules", name, "state_dict", {
        "keys": list(sd.keys()),
        "shapes": [list(v.shape) for v in sd.values()],
        "params": [k for k, _ in m.named_parameters()],
        "buffers": [k for k, _ in m.named_buffers()],
    })


class WithBuffer(nn.Module):
    """A linear layer beside a registered buffer, as Tessera's test module."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_buffer("running", torch.zeros(2))


def gen_modules():
    module_case("mlp", nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3)))
    module_case("named_sequential", nn.Sequential(collections.OrderedDict(
        fc1=nn.Linear(4, 6), act=nn.Tanh(), drop=nn.Dropout(0.1), fc2=nn.Linear(6, 2))))
    module_case("nested", nn.Sequential(collections.OrderedDict(
        embed=nn.Embedding(10, 4),
        body=nn.Sequential(nn.LayerNorm(4), nn.Linear(4, 4)),
        head=nn.Linear(4, 2, bias=False))))
    module_case("lstm_2_layers", nn.LSTM(3, 5, 2))
    module_case("lstm_cell", nn.LSTMCell(3, 5))
    module_case("rnn_cell", nn.RNNCell(3, 5))
    lin = nn.Linear(3, 3)
    module_case("shared_module", nn.Sequential(lin, nn.ReLU(), lin))
    emb, head = nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    module_case("tied_weights", nn.Sequential(collections.OrderedDict(emb=emb, head=head)))
    module_case("buffer", nn.Sequential(WithBuffer(), nn.Sequential(WithBuffer())))


# --------------------------------------------------------------------------
# sched: learning-rate schedules
# --------------------------------------------------------------------------

SCHEDULES = {
    "step": torch.optim.lr_scheduler.StepLR,
    "cosine": torch.optim.lr_scheduler.CosineAnnealingLR,
    "linear": torch.optim.lr_scheduler.LinearLR,
    "onecycle": torch.optim.lr_scheduler.OneCycleLR,
}


def sched_optimizer(kind, lrs):
    params = [torch.zeros(2, requires_grad=True) for _ in lrs]
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, lrs)]
    if kind == "sgd":
        return torch.optim.SGD(groups, lr=lrs[0], momentum=0.9)
    return torch.optim.Adam(groups, lr=lrs[0])


def momentum(opt, group):
    return group["momentum"] if "momentum" in group else group["betas"][0]


def sched_case(name, op, kwargs, steps=30, optimizer="sgd", lrs=(0.1, 0.02), seq=None):
    opt = sched_optimizer(optimizer, lrs)
    if seq is None:
        s = SCHEDULES[op](opt, **kwargs)
    else:
        subs = [SCHEDULES[k](opt, **kw) for k, kw in seq["schedules"]]
        s = torch.optim.lr_scheduler.SequentialLR(opt, subs, milestones=seq["milestones"])
    lr, mom = [], []

    def record():
        lr.append([g["lr"] for g in opt.param_groups])
        mom.append([momentum(opt, g) for g in opt.param_groups])

    record()
    for _ in range(steps):
        opt.step()
        s.step()
        record()
    attrs = {"optimizer": optimizer, "lrs": list(lrs), "steps": steps}
    if seq is None:
        attrs["schedule"] = kwargs
    else:
        attrs["schedules"] = [[k, kw] for k, kw in seq["schedules"]]
        attrs["milestones"] = seq["milestones"]
    out = [enc(torch.tensor(lr, dtype=torch.float64)), enc(torch.tensor(mom, dtype=torch.float64))]
    add("sched", name, op, attrs, outputs=out)


def gen_sched():
    sched_case("step/default_gamma", "step", {"step_size": 7})
    sched_case("step/size3_gamma0.5", "step", {"step_size": 3, "gamma": 0.5})
    sched_case("cosine/tmax10_restarts", "cosine", {"T_max": 10})
    sched_case("cosine/tmax30_eta_min", "cosine", {"T_max": 30, "eta_min": 0.001})
    sched_case("cosine/tmax7_eta_min_adam", "cosine", {"T_max": 7, "eta_min": 0.01}, optimizer="adam")
    sched_case("linear/default", "linear", {})
    sched_case("linear/warmup", "linear", {"start_factor": 0.1, "total_iters": 10})
    sched_case("linear/decay", "linear", {"start_factor": 1.0, "end_factor": 0.1, "total_iters": 20})
    sched_case("onecycle/default_sgd", "onecycle", {"max_lr": 0.1, "total_steps": 30})
    sched_case("onecycle/default_adam", "onecycle", {"max_lr": 0.01, "total_steps": 30}, optimizer="adam")
    sched_case("onecycle/three_phase_linear", "onecycle",
               {"max_lr": 0.1, "total_steps": 30, "three_phase": True, "anneal_strategy": "linear"})
    sched_case("onecycle/options_group_max_lr", "onecycle",
               {"max_lr": [0.1, 0.3], "total_steps": 40, "pct_start": 0.25, "div_factor": 10.0,
                "final_div_factor": 100.0, "base_momentum": 0.8, "max_momentum": 0.9})
    sched_case("onecycle/no_cycle_momentum", "onecycle",
               {"max_lr": 0.1, "total_steps": 30, "cycle_momentum": False}, steps=30)
    sched_case("sequential/warmup_cosine", "sequential", {},
               seq={"schedules": [["linear", {"start_factor": 0.1, "total_iters": 5}], ["cosine", {"T_max": 25}]],
                    "milestones": [5]})
    sched_case("sequential/warmup_cosine_adam", "sequential", {}, optimizer="adam",
               seq={"schedules": [["linear", {"start_factor": 0.01, "total_iters": 4}], ["cosine", {"T_max": 20, "eta_min": 1e-4}]],
                    "milestones": [4]})
    sched_case("sequential/three", "sequential", {},
               seq={"schedules": [["linear", {"start_factor": 0.5, "total_iters": 3}], ["step", {"step_size": 4, "gamma": 0.5}],
                                  ["cosine", {"T_max": 10}]],
                    "milestones": [5, 15]})


# --------------------------------------------------------------------------
# groups: parameter groups through Adam, AdamW and SGD
# --------------------------------------------------------------------------

GROUP_STEPS = 5
OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}


def group_case(name, op, defaults, groups, dtype="float64", warmup=None, cosine=None):
    params, grads, inputs = trajectory_inputs(name, dtype, [(3, 4), (5,), (2, 3)], GROUP_STEPS)
    pg = []
    for grp in groups:
        d = {k: (tuple(v) if k == "betas" else v) for k, v in grp.items() if k != "params"}
        d["params"] = [params[i] for i in grp["params"]]
        pg.append(d)
    kw = {k: (tuple(v) if k == "betas" else v) for k, v in defaults.items()}
    opt = OPTIMIZERS[op](pg, foreach=False, **kw)
    sched = None
    if warmup is not None:
        lin = torch.optim.lr_scheduler.LinearLR(opt, start_factor=warmup[0], total_iters=warmup[1])
        cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=cosine)
        sched = torch.optim.lr_scheduler.SequentialLR(opt, [lin, cos], milestones=[warmup[1]])
    outputs = []
    for s in range(GROUP_STEPS):
        for i, p in enumerate(params):
            p.grad = grads[s][i].clone()
        opt.step()
        if sched is not None:
            sched.step()
        outputs += [enc(p) for p in params]
    keys = sorted(f"state.{i}.{k}" for i, st in opt.state_dict()["state"].items()
                  for k, v in st.items() if k != "step" and torch.is_tensor(v))
    attrs = dict(defaults)
    attrs.update({"groups": groups, "steps": GROUP_STEPS, "state_keys": keys})
    if warmup is not None:
        attrs.update({"warmup": list(warmup), "cosine": cosine})
    add("groups", name, op, attrs, inputs, outputs)


def gen_groups():
    group_case("adam/lr_wd_per_group/f64", "adam", {"lr": 0.01},
               [{"params": [0, 1]}, {"params": [2], "lr": 0.05, "weight_decay": 0.1}])
    group_case("adam/betas_amsgrad_per_group/f64", "adam", {"lr": 0.01, "amsgrad": True},
               [{"params": [0]}, {"params": [1, 2], "betas": [0.8, 0.9], "eps": 1e-6, "amsgrad": False}])
    group_case("adamw/decay_no_decay/f64", "adamw", {"lr": 0.01, "weight_decay": 0.1},
               [{"params": [0, 2]}, {"params": [1], "weight_decay": 0.0}])
    group_case("adamw/decay_no_decay/f32", "adamw", {"lr": 0.01, "weight_decay": 0.1},
               [{"params": [0, 2]}, {"params": [1], "weight_decay": 0.0}], dtype="float32")
    group_case("adamw/warmup_cosine/f64", "adamw", {"lr": 0.02, "weight_decay": 0.1},
               [{"params": [0, 2]}, {"params": [1], "weight_decay": 0.0, "lr": 0.01}], warmup=(0.1, 2), cosine=4)
    group_case("sgd/momentum_per_group/f64", "sgd", {"lr": 0.1, "momentum": 0.9},
               [{"params": [0]}, {"params": [1, 2], "lr": 0.01, "momentum": 0.5, "weight_decay": 0.01, "nesterov": True}])
    group_case("sgd/momentum_and_none/f64", "sgd", {"lr": 0.1},
               [{"params": [0, 1], "momentum": 0.9, "dampening": 0.1}, {"params": [2], "lr": 0.05}])
    group_case("adam/lr_wd_per_group/f32", "adam", {"lr": 0.01},
               [{"params": [0, 1]}, {"params": [2], "lr": 0.05, "weight_decay": 0.1}], dtype="float32")
    group_case("sgd/momentum_per_group/f32", "sgd", {"lr": 0.1, "momentum": 0.9},
               [{"params": [0]}, {"params": [1, 2], "lr": 0.01, "momentum": 0.5, "weight_decay": 0.01, "nesterov": True}],
               dtype="float32")


# --------------------------------------------------------------------------
# clip: clip_grad_norm_
# --------------------------------------------------------------------------

def clip_case(name, max_norm, norm_type, dtype="float64", none=(), scale=1.0, special=None):
    dt = DTYPES[dtype]
    g = generator(name)
    shapes = [(3, 4), (5,), (2, 3, 2)]
    grads = [(torch.randn(*s, generator=g, dtype=torch.float64) * scale).to(torch.float32).to(dt) for s in shapes]
    if special is not None:
        i, j, v = special
        grads[i].view(-1)[j] = v
    params = [torch.zeros(s, dtype=dt, requires_grad=True) for s in shapes]
    for i, (p, gr) in enumerate(zip(params, grads)):
        p.grad = None if i in none else gr.clone()
    total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    nt = "inf" if norm_type == float("inf") else norm_type
    outputs = [enc(total)] + [enc(p.grad) for i, p in enumerate(params) if i not in none]
    add("clip", name, "clip_grad_norm", {"max_norm": max_norm, "norm_type": nt, "none": list(none)},
        [enc(x) for x in grads], outputs)


def gen_clip():
    inf = float("inf")
    for nt, label in ((2.0, "l2"), (1.0, "l1"), (inf, "inf"), (3.0, "l3")):
        clip_case(f"{label}/clips/f64", 0.5, nt)
        clip_case(f"{label}/no_clip/f64", 1e3, nt)
        clip_case(f"{label}/clips/f32", 0.5, nt, dtype="float32")
    clip_case("l2/one_without_grad/f64", 1.0, 2.0, none=(1,))
    clip_case("inf/one_without_grad/f32", 0.1, inf, dtype="float32", none=(0,))
    clip_case("l2/just_below_max/f64", 100.0, 2.0, scale=1e-3)
    clip_case("l2/special_inf_grad/f64", 1.0, 2.0, special=(1, 2, inf))


# --------------------------------------------------------------------------

def write(family, cases):
    head = {"torch": torch.__version__, "torch_package": torch_package_version(),
            "generator": "tools/torchref/train.py", "family": family}
    lines = [json.dumps(c, separators=(",", ":"), allow_nan=False) for c in cases]
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)
    path = os.path.join(REPO, "testdata", "torch", family + ".json")
    with open(path, "w") as f:
        f.write(text)
    print(f"{path}: {len(cases)} cases, {len(text)} bytes", file=sys.stderr)


def main():
    want = sys.argv[1:] or list(FAMILIES)
    gens = {"modules": gen_modules, "sched": gen_sched, "groups": gen_groups, "clip": gen_clip}
    for fam in want:
        if fam not in gens:
            sys.exit(f"unknown family {fam!r}: want {', '.join(gens)}")
        gens[fam]()
        write(fam, FAMILIES[fam])


if __name__ == "__main__":
    main()
