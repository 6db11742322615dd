#!/usr/bin/env python3
"""Generate PyTorch reference vectors for Tessera's tests.

Run from anywhere (writes into <repo>/testdata/torch/):

    /usr/bin/python3 tools/torchref/gen.py

Needs PyTorch (Debian's python3-torch 1.13, CPU). Tests never need PyTorch:
they read the JSON files written here through internal/torchref.

Output: one file per op family (elementwise, reduce, linalg, index, nn, shape),
each {"torch": <torch.__version__>, "torch_package": <dpkg version>,
"family": ..., "generator": ..., "cases": [...]}; the case format is described
in tools/torchref/README.md.

Determinism: every case draws its inputs from its own torch.Generator seeded
with crc32(case name), so adding or removing a case does not change others;
torch runs single-threaded. Running the script twice gives identical bytes.
Inputs are float32-representable values (drawn, then rounded to float32) so a
Go float32 test and a float64 test can share them; float64 cases compute in
float64, float32 cases ("f32" in the name, dtype "float32") compute in float32.
"""

import json
import math
import os
import subprocess
import sys
import zlib

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT_DIR = os.path.join(REPO, "testdata", "torch")

DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
FLOAT_DTYPES = ("float32", "float64")

NAN = float("nan")
INF = float("inf")

# Special values used by forward-only "special" cases.
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 30.0, -30.0, 100.0, -100.0]


def torch_package_version():
    try:
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "python3-torch"],
            capture_output=True, text=True, check=False,
        )
        return out.stdout.strip() or None
    except OSError:
        return None


# --------------------------------------------------------------------------
# Input specifications
# --------------------------------------------------------------------------

class T:
    """Specification of one input tensor.

    shape: the BASE tensor's shape. dist: how to draw it:
      ("u", lo, hi)      uniform floats
      ("n", std)         normal floats
      ("d", [values])    uniform choice among values (floats or ints)
      ("i", lo, hi)      integers in [lo, hi)
      ("b", p)           bools, True with probability p
    data: explicit flat (or nested) values instead of dist.
    avoid/eps: float values are pushed at least eps away from each point in avoid.
    view: chain applied to the base (see README); rg: requires_grad override.
    exact: keep explicit float64 data as is instead of rounding to float32.
    """

    def __init__(self, shape, dtype="float64", dist=("u", -1.0, 1.0), data=None,
                 view=None, rg=None, avoid=(), eps=0.05, exact=False):
        self.shape = list(shape)
        self.dtype = dtype
        self.dist = dist
        self.data = data
        self.view = view
        self.rg = rg
        self.avoid = avoid
        self.eps = eps
        self.exact = exact

    def make(self, g):
        dt = DTYPES[self.dtype]
        n = 1
        for s in self.shape:
            n *= s
        if self.data is not None:
            if self.dtype in FLOAT_DTYPES:
                t = torch.tensor(self.data, dtype=torch.float64).reshape(self.shape)
                if not self.exact:
                    t = t.to(torch.float32).to(torch.float64)
                return t.to(dt)
            return torch.tensor(self.data, dtype=dt).reshape(self.shape)
        kind = self.dist[0]
        if kind == "u":
            lo, hi = self.dist[1], self.dist[2]
            t = lo + (hi - lo) * torch.rand(n, generator=g, dtype=torch.float64)
        elif kind == "n":
            t = self.dist[1] * torch.randn(n, generator=g, dtype=torch.float64)
        elif kind == "d":
            vals = self.dist[1]
            idx = torch.randint(0, len(vals), (n,), generator=g)
            if self.dtype in FLOAT_DTYPES:
                t = torch.tensor([float(vals[i]) for i in idx.tolist()], dtype=torch.float64)
            else:
                return torch.tensor([vals[i] for i in idx.tolist()], dtype=dt).reshape(self.shape)
        elif kind == "i":
            return torch.randint(self.dist[1], self.dist[2], (n,), generator=g).to(dt).reshape(self.shape)
        elif kind == "b":
            return (torch.rand(n, generator=g, dtype=torch.float64) < self.dist[1]).reshape(self.shape).to(dt)
        else:
            raise ValueError(kind)
        for p in self.avoid:
            d = t - p
            near = d.abs() < self.eps
            sgn = torch.where(d >= 0, torch.ones_like(d), -torch.ones_like(d))
            t = torch.where(near, p + sgn * (self.eps + d.abs()), t)
        t = t.to(torch.float32).to(torch.float64)
        return t.to(dt).reshape(self.shape)


def check_view_args(shape, view):
    """View chains in the files use only normalised, in-range arguments."""
    shape = list(shape)
    for op in view:
        k = op[0]
        if k == "transpose":
            a, b = op[1], op[2]
            assert 0 <= a < len(shape) and 0 <= b < len(shape), op
            shape[a], shape[b] = shape[b], shape[a]
        elif k == "slice":
            d, s, e, st = op[1:]
            assert 0 <= d < len(shape) and 0 <= s <= e <= shape[d] and st >= 1, op
            shape[d] = max(0, (e - s + st - 1) // st)
        elif k == "expand":
            sizes = op[1]
            assert len(sizes) >= len(shape) and all(s >= 0 for s in sizes), op
            off = len(sizes) - len(shape)
            for i, s in enumerate(shape):
                assert s == sizes[off + i] or s == 1, op
            shape = list(sizes)
        elif k == "select":
            d, i = op[1], op[2]
            assert 0 <= d < len(shape) and 0 <= i < shape[d], op
            del shape[d]
        elif k == "narrow":
            d, s, ln = op[1:]
            assert 0 <= d < len(shape) and s >= 0 and ln >= 0 and s + ln <= shape[d], op
            shape[d] = ln
        elif k == "permute":
            p = op[1]
            assert sorted(p) == list(range(len(shape))), op
            shape = [shape[i] for i in p]
        elif k == "unsqueeze":
            d = op[1]
            assert 0 <= d <= len(shape), op
            shape.insert(d, 1)
        else:
            raise ValueError(op)
    return shape


def apply_view(t, view):
    for op in view or ():
        k = op[0]
        if k == "transpose":
            t = t.transpose(op[1], op[2])
        elif k == "slice":
            d, s, e, st = op[1:]
            idx = [slice(None)] * t.dim()
            idx[d] = slice(s, e, st)
            t = t[tuple(idx)]
        elif k == "expand":
            t = t.expand(*op[1])
        elif k == "select":
            t = t.select(op[1], op[2])
        elif k == "narrow":
            t = t.narrow(op[1], op[2], op[3])
        elif k == "permute":
            t = t.permute(*op[1])
        elif k == "unsqueeze":
            t = t.unsqueeze(op[1])
        else:
            raise ValueError(op)
    return t


# Common view chains.
def V_T():
    return [["transpose", 0, 1]]


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------

def enc_scalar(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def enc_tensor(t):
    t = t.detach()
    name = DTYPE_NAMES[t.dtype]
    flat = t.contiguous().reshape(-1).tolist()
    if name in FLOAT_DTYPES:
        data = [enc_scalar(float(v)) for v in flat]
    elif name == "bool":
        data = [bool(v) for v in flat]
    else:
        data = [int(v) for v in flat]
    return {"dtype": name, "shape": list(t.shape), "data": data}


def enc_attrs(a):
    out = {}
    for k, v in a.items():
        if isinstance(v, float):
            out[k] = enc_scalar(v)
        else:
            out[k] = v
    return out


# --------------------------------------------------------------------------
# Case construction
# --------------------------------------------------------------------------

CASES = {}   # family -> list of cases
NAMES = set()
FAMILY = [None]


def family(name):
    FAMILY[0] = name
    CASES.setdefault(name, [])


def case(name, op, fn, inputs, attrs=None, diff=True):
    """Build one case. fn(a, *xs) computes the op from the attrs dict a and the
    (viewed) inputs; it returns a tensor or a tuple of tensors, floating
    outputs first. diff=False makes every input requires_grad=False."""
    assert name not in NAMES, name
    NAMES.add(name)
    a = dict(attrs or {})
    g = torch.Generator()
    g.manual_seed(zlib.crc32(name.encode()))
    leaves, xs, rgs = [], [], []
    for spec in inputs:
        base = spec.make(g)
        is_float = spec.dtype in FLOAT_DTYPES
        rg = diff and is_float and (spec.rg if spec.rg is not None else True)
        leaf = base.clone().requires_grad_(True) if rg else base
        if spec.view:
            shp = check_view_args(base.shape, spec.view)
            x = apply_view(leaf, spec.view)
            assert list(x.shape) == shp, (name, shp, x.shape)
        else:
            x = leaf
        leaves.append(leaf)
        xs.append(x)
        rgs.append(rg)
    out = fn(a, *xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    diff_outs = [o for o in outs if o.requires_grad]
    # Differentiable outputs must come first so grad_outputs[i] pairs with outputs[i].
    for i, o in enumerate(outs):
        if o.requires_grad:
            assert i < len(diff_outs), name
    if diff:
        for i, o in enumerate(outs):
            if o.dtype in (torch.float32, torch.float64) and any(rgs):
                assert o.requires_grad, (name, i)
    gouts = []
    for o in diff_outs:
        go = (2 * torch.rand(o.shape, generator=g, dtype=torch.float64) - 1).to(torch.float32)
        gouts.append(go.to(o.dtype))
    grads = [None] * len(leaves)
    rg_idx = [i for i, r in enumerate(rgs) if r]
    if rg_idx and diff_outs:
        gs = torch.autograd.grad(diff_outs, [leaves[i] for i in rg_idx], gouts, allow_unused=True)
        for i, gr in zip(rg_idx, gs):
            grads[i] = gr if gr is not None else torch.zeros_like(leaves[i])
    elif rg_idx:
        raise AssertionError("inputs require grad but no differentiable output: " + name)

    enc_inputs = []
    for spec, leaf, rg in zip(inputs, leaves, rgs):
        e = enc_tensor(leaf)
        if spec.view:
            e["view"] = spec.view
        e["requires_grad"] = bool(rg)
        enc_inputs.append(e)
    c = {
        "name": name,
        "op": op,
        "attrs": enc_attrs(a),
        "inputs": enc_inputs,
        "outputs": [enc_tensor(o) for o in outs],
        "grad_outputs": [enc_tensor(go) for go in gouts],
        "grads": [enc_tensor(gr) if gr is not None else None for gr in grads],
    }
    CASES[FAMILY[0]].append(c)
    return c


def f32(spec):
    spec.dtype = "float32"
    return spec


# ==========================================================================
# elementwise
# ==========================================================================

def gen_elementwise():
    family("elementwise")

    def unary_variants(op, fn, dist, attrs=None, avoid=(), eps=0.05, prefix=None):
        pre = prefix or op
        kw = dict(dist=dist, avoid=avoid, eps=eps)
        case(f"{pre}/f64_7x5", op, fn, [T([7, 5], **kw)], attrs)
        case(f"{pre}/f64_0d", op, fn, [T([], **kw)], attrs)
        case(f"{pre}/f64_transposed_5x7", op, fn, [T([5, 7], view=V_T(), **kw)], attrs)
        case(f"{pre}/f64_step_slice_33", op, fn, [T([33], view=[["slice", 0, 0, 33, 2]], **kw)], attrs)
        case(f"{pre}/f64_expand_7x1_to_7x5", op, fn, [T([7, 1], view=[["expand", [7, 5]]], **kw)], attrs)
        case(f"{pre}/f32_1x33", op, fn, [T([1, 33], dtype="float32", **kw)], attrs)
        case(f"{pre}/f32_transposed_5x7", op, fn, [T([5, 7], dtype="float32", view=V_T(), **kw)], attrs)

    def special(op, fn, attrs=None, prefix=None):
        pre = prefix or op
        for dt in FLOAT_DTYPES:
            case(f"{pre}/special_{'f64' if dt == 'float64' else 'f32'}", op, fn,
                 [T([len(SPECIALS)], dtype=dt, data=SPECIALS)], attrs, diff=False)

    U = lambda f: (lambda a, x: f(x))
    unary = [
        ("neg", U(torch.neg), ("u", -2, 2), (), None),
        ("abs", U(torch.abs), ("u", -2, 2), (0.0,), None),
        ("sign", U(torch.sign), ("u", -2, 2), (0.0,), None),
        ("exp", U(torch.exp), ("u", -3, 3), (), None),
        ("expm1", U(torch.expm1), ("u", -3, 3), (), None),
        ("log", U(torch.log), ("u", 0.1, 4), (), None),
        ("log1p", U(torch.log1p), ("u", -0.9, 3), (), None),
        ("sqrt", U(torch.sqrt), ("u", 0.1, 4), (), None),
        ("rsqrt", U(torch.rsqrt), ("u", 0.1, 4), (), None),
        ("square", U(torch.square), ("u", -2, 2), (), None),
        ("sin", U(torch.sin), ("u", -4, 4), (), None),
        ("cos", U(torch.cos), ("u", -4, 4), (), None),
        ("tanh", U(torch.tanh), ("u", -3, 3), (), None),
        ("sigmoid", U(torch.sigmoid), ("u", -6, 6), (), None),
        ("relu", U(torch.relu), ("u", -2, 2), (0.0,), None),
        ("gelu", lambda a, x: F.gelu(x, approximate=a["approximate"]), ("u", -4, 4), (), {"approximate": "none"}),
        ("silu", U(F.silu), ("u", -6, 6), (), None),
        ("softplus", lambda a, x: F.softplus(x, beta=a["beta"], threshold=a["threshold"]),
         ("u", -30, 30), (20.0,), {"beta": 1.0, "threshold": 20.0}),
    ]
    for op, fn, dist, avoid, attrs in unary:
        unary_variants(op, fn, dist, attrs, avoid)
        special(op, fn, attrs)

    # gelu tanh approximation (non-default) for completeness.
    gelu_tanh = lambda a, x: F.gelu(x, approximate=a["approximate"])
    case("gelu/tanh_approx/f64_7x5", "gelu", gelu_tanh, [T([7, 5], dist=("u", -4, 4))], {"approximate": "tanh"})
    case("gelu/tanh_approx/f32_1x65", "gelu", gelu_tanh, [T([1, 65], "float32", dist=("u", -4, 4))], {"approximate": "tanh"})

    # softplus: straddle the threshold (x > 20 returns x exactly).
    sp = lambda a, x: F.softplus(x, beta=a["beta"], threshold=a["threshold"])
    case("softplus/threshold_region_f64", "softplus", sp,
         [T([8], data=[19.0, 19.5, 19.99, 20.01, 20.5, 25.0, -20.5, -25.0])], {"beta": 1.0, "threshold": 20.0})
    case("softplus/beta2_threshold10_f64", "softplus", sp,
         [T([7, 5], dist=("u", -8, 8), avoid=(5.0,))], {"beta": 2.0, "threshold": 10.0})

    clamp = lambda a, x: torch.clamp(x, min=a["min"], max=a["max"])
    unary_variants("clamp", clamp, ("u", -1, 1), {"min": -0.5, "max": 0.5}, (-0.5, 0.5), prefix="clamp/min_max")
    unary_variants("clamp", clamp, ("u", -1, 1), {"min": -0.5, "max": None}, (-0.5,), prefix="clamp/min_only")
    case("clamp/max_only/f64_7x5", "clamp", clamp, [T([7, 5], avoid=(0.25,))], {"min": None, "max": 0.25})
    special("clamp", clamp, {"min": -0.5, "max": 0.5}, prefix="clamp/min_max")

    pw = lambda a, x: torch.pow(x, a["exponent"])
    for p, dist in ((2.0, ("u", -2, 2)), (0.5, ("u", 0.1, 4)), (-1.5, ("u", 0.1, 4)), (3.0, ("u", -2, 2))):
        unary_variants("pow_scalar", pw, dist, {"exponent": p}, prefix=f"pow_scalar/p{p:g}")
        special("pow_scalar", pw, {"exponent": p}, prefix=f"pow_scalar/p{p:g}")

    # Kinks: pins torch's subgradient conventions (tests may skip "/kink" cases).
    kink = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5]
    case("abs/kink", "abs", U(torch.abs), [T([6], data=kink)])
    case("relu/kink", "relu", U(torch.relu), [T([6], data=kink)])
    # A NaN output passes its gradient on (threshold_backward: NaN <= 0 is false).
    case("relu/nan_grad", "relu", U(torch.relu), [T([5], data=[NAN, 2.0, -2.0, INF, -INF])])
    case("sign/kink", "sign", U(torch.sign), [T([6], data=kink)])
    case("sqrt/kink", "sqrt", U(torch.sqrt), [T([3], data=[0.0, 1.0, 4.0])])
    case("clamp/kink", "clamp", clamp, [T([7], data=[-0.5, 0.5, -0.25, 0.75, -0.75, 0.0, 0.5])],
         {"min": -0.5, "max": 0.5})

    # ---------------- binary ----------------
    def binary_variants(op, fn, da, db, attrs=None, prefix=None, avoid_b=()):
        pre = prefix or op
        A = lambda shape, **k: T(shape, dist=da, **k)
        B = lambda shape, **k: T(shape, dist=db, avoid=avoid_b, **k)
        case(f"{pre}/f64_same_7x5", op, fn, [A([7, 5]), B([7, 5])], attrs)
        case(f"{pre}/f64_broadcast_7x1_1x33", op, fn, [A([7, 1]), B([1, 33])], attrs)
        case(f"{pre}/f64_broadcast_rank_2x1x5_3x1", op, fn, [A([2, 1, 5]), B([3, 1])], attrs)
        case(f"{pre}/f64_rhs_0d", op, fn, [A([5, 7]), B([])], attrs)
        case(f"{pre}/f64_lhs_0d", op, fn, [A([]), B([5, 7])], attrs)
        case(f"{pre}/f64_0d_0d", op, fn, [A([]), B([])], attrs)
        case(f"{pre}/f64_transposed_step_sliced", op, fn,
             [A([5, 7], view=V_T()), B([7, 10], view=[["slice", 1, 0, 10, 2]])], attrs)
        case(f"{pre}/f64_expanded_1x5_to_7x5", op, fn,
             [A([1, 5], view=[["expand", [7, 5]]]), B([7, 5])], attrs)
        case(f"{pre}/f32_same_7x5", op, fn, [A([7, 5], dtype="float32"), B([7, 5], dtype="float32")], attrs)
        case(f"{pre}/f32_broadcast_3x1_1x33", op, fn,
             [A([3, 1], dtype="float32"), B([1, 33], dtype="float32")], attrs)
        case(f"{pre}/f32_transposed_broadcast", op, fn,
             [A([5, 7], dtype="float32", view=V_T()), B([5], dtype="float32")], attrs)

    add = lambda a, x, y: torch.add(x, y, alpha=a["alpha"])
    sub = lambda a, x, y: torch.sub(x, y, alpha=a["alpha"])
    u11 = ("u", -1, 1)
    binary_variants("add", add, u11, u11, {"alpha": 1.0})
    case("add/alpha_neg0.5/f64_broadcast_7x1_1x5", "add", add, [T([7, 1]), T([1, 5])], {"alpha": -0.5})
    case("add/alpha2/f32_same_7x5", "add", add, [T([7, 5], "float32"), T([7, 5], "float32")], {"alpha": 2.0})
    binary_variants("sub", sub, u11, u11, {"alpha": 1.0})
    case("sub/alpha2/f64_broadcast_7x1_1x5", "sub", sub, [T([7, 1]), T([1, 5])], {"alpha": 2.0})
    binary_variants("mul", lambda a, x, y: torch.mul(x, y), ("u", -2, 2), ("u", -2, 2))
    binary_variants("div", lambda a, x, y: torch.div(x, y), ("u", -2, 2), ("u", -2, 2), avoid_b=(0.0,))
    binary_variants("pow", lambda a, x, y: torch.pow(x, y), ("u", 0.2, 3), ("u", -2, 2))
    binary_variants("maximum", lambda a, x, y: torch.maximum(x, y), u11, u11)
    binary_variants("minimum", lambda a, x, y: torch.minimum(x, y), u11, u11)
    ties = ("d", [-1.0, -0.5, 0.0, 0.5, 1.0])
    case("maximum/ties_f64_7x5", "maximum", lambda a, x, y: torch.maximum(x, y),
         [T([7, 5], dist=ties), T([7, 5], dist=ties)])
    case("minimum/ties_f64_7x5", "minimum", lambda a, x, y: torch.minimum(x, y),
         [T([7, 5], dist=ties), T([7, 5], dist=ties)])
    sp_a = [NAN, 1.0, NAN, INF, -INF, 0.0, -0.0]
    sp_b = [1.0, NAN, NAN, 1.0, 1.0, -0.0, 0.0]
    for op, fn in (("add", add), ("sub", sub)):
        case(f"{op}/special_f64", op, fn, [T([7], data=sp_a), T([7], data=sp_b)], {"alpha": 1.0}, diff=False)
    for op, fn in (("mul", torch.mul), ("div", torch.div), ("pow", torch.pow),
                   ("maximum", torch.maximum), ("minimum", torch.minimum)):
        case(f"{op}/special_f64", op, (lambda f: lambda a, x, y: f(x, y))(fn),
             [T([7], data=sp_a), T([7], data=sp_b)], diff=False)
    case("div/by_zero_f64", "div", lambda a, x, y: torch.div(x, y),
         [T([4], data=[1.0, -1.0, 0.0, 1.0]), T([4], data=[0.0, 0.0, 0.0, -0.0])], diff=False)
    case("pow/special_exponents_f64", "pow", lambda a, x, y: torch.pow(x, y),
         [T([6], data=[0.0, 0.0, -2.0, -2.0, 2.0, 1.0]), T([6], data=[0.0, -1.0, 2.0, 0.5, -INF, NAN])], diff=False)

    # scalar forms
    scalar_ops = [
        ("add_scalar", lambda a, x: x + a["scalar"], 2.5),
        ("sub_scalar", lambda a, x: x - a["scalar"], -0.75),
        ("mul_scalar", lambda a, x: x * a["scalar"], -1.5),
        ("div_scalar", lambda a, x: x / a["scalar"], 3.0),
        ("rsub_scalar", lambda a, x: torch.rsub(x, a["scalar"]), 2.5),
    ]
    for op, fn, s in scalar_ops:
        at = {"scalar": s}
        case(f"{op}/f64_7x5", op, fn, [T([7, 5], dist=("u", -2, 2))], at)
        case(f"{op}/f64_0d", op, fn, [T([], dist=("u", -2, 2))], at)
        case(f"{op}/f64_transposed_5x7", op, fn, [T([5, 7], view=V_T())], at)
        case(f"{op}/f64_expand_7x1_to_7x5", op, fn, [T([7, 1], view=[["expand", [7, 5]]])], at)
        case(f"{op}/f32_1x33", op, fn, [T([1, 33], "float32", dist=("u", -2, 2))], at)
        case(f"{op}/f32_step_slice_65", op, fn, [T([65], "float32", view=[["slice", 0, 0, 65, 2]])], at)
    case("div_scalar/by_0.1_f64", "div_scalar", lambda a, x: x / a["scalar"],
         [T([7, 5], dist=("u", -2, 2))], {"scalar": 0.1})
    case("div_scalar/by_0.1_f32", "div_scalar", lambda a, x: x / a["scalar"],
         [T([1, 65], "float32", dist=("u", -2, 2))], {"scalar": 0.1})

    # comparisons (bool output)
    cmp = ("d", [-1.0, -0.5, 0.0, 0.5, 1.0])
    cmps = [("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le), ("gt", torch.gt), ("ge", torch.ge)]
    for op, f in cmps:
        fn = (lambda f: lambda a, x, y: f(x, y))(f)
        case(f"{op}/f64_same_7x5", op, fn, [T([7, 5], dist=cmp), T([7, 5], dist=cmp)], diff=False)
        case(f"{op}/f64_broadcast_7x1_1x5", op, fn, [T([7, 1], dist=cmp), T([1, 5], dist=cmp)], diff=False)
        case(f"{op}/f64_rhs_0d", op, fn, [T([5, 7], dist=cmp), T([], data=0.5)], diff=False)
        case(f"{op}/f64_0d_0d", op, fn, [T([], data=0.5), T([], data=0.5)], diff=False)
        case(f"{op}/f64_transposed_expanded", op, fn,
             [T([5, 7], dist=cmp, view=V_T()), T([7, 1], dist=cmp, view=[["expand", [7, 5]]])], diff=False)
        case(f"{op}/f32_broadcast_3x1_1x65", op, fn,
             [T([3, 1], "float32", dist=cmp), T([1, 65], "float32", dist=cmp)], diff=False)
        case(f"{op}/special_f64", op, fn,
             [T([7], data=[NAN, NAN, 1.0, INF, -INF, 0.0, -0.0]),
              T([7], data=[NAN, 1.0, NAN, INF, INF, -0.0, 0.0])], diff=False)

    # where(cond, x, y)
    wh = lambda a, c, x, y: torch.where(c, x, y)
    case("where/f64_same_7x5", "where", wh, [T([7, 5], "bool", dist=("b", 0.5)), T([7, 5]), T([7, 5])])
    case("where/f64_broadcast_7x1_1x5_0d", "where", wh,
         [T([7, 1], "bool", dist=("b", 0.5)), T([1, 5]), T([])])
    case("where/f64_broadcast_cond_1x5", "where", wh,
         [T([1, 5], "bool", dist=("b", 0.5)), T([7, 5]), T([7, 1])])
    case("where/f64_0d_all", "where", wh, [T([], "bool", data=True), T([]), T([])])
    case("where/f64_transposed_step_sliced", "where", wh,
         [T([5, 7], "bool", dist=("b", 0.5), view=V_T()), T([5, 7], view=V_T()),
          T([7, 10], view=[["slice", 1, 1, 10, 2]])])
    case("where/f32_broadcast_3x1_1x33", "where", wh,
         [T([3, 1], "bool", dist=("b", 0.5)), T([1, 33], "float32"), T([3, 33], "float32")])

    # masked_fill(x, mask, value)
    mf = lambda a, x, m: x.masked_fill(m, a["value"])
    case("masked_fill/f64_same_7x5", "masked_fill", mf, [T([7, 5]), T([7, 5], "bool", dist=("b", 0.4))], {"value": 2.5})
    case("masked_fill/f64_mask_broadcast_1x5", "masked_fill", mf, [T([7, 5]), T([1, 5], "bool", dist=("b", 0.5))], {"value": 0.0})
    case("masked_fill/f64_neg_inf", "masked_fill", mf, [T([7, 5]), T([7, 5], "bool", dist=("b", 0.3))], {"value": -INF})
    case("masked_fill/f64_0d", "masked_fill", mf, [T([]), T([], "bool", data=True)], {"value": -1.0})
    case("masked_fill/f64_transposed_mask_expanded", "masked_fill", mf,
         [T([5, 7], view=V_T()), T([7, 1], "bool", dist=("b", 0.5), view=[["expand", [7, 5]]])], {"value": 3.0})
    case("masked_fill/f32_3x33", "masked_fill", mf,
         [T([3, 33], "float32"), T([3, 33], "bool", dist=("b", 0.5))], {"value": -1e9})

    # casts
    cast = lambda a, x: x.to(DTYPES[a["dtype"]])
    trunc = [-2.7, 2.7, -0.5, 0.5, -0.999, 0.999, 1.0, -1.0, 0.0, -0.0, 123.9, -123.9, 2.5, -3.5, 1e6 + 0.5]
    case("cast/float64_to_int32", "cast", cast, [T([len(trunc)], data=trunc)], {"dtype": "int32"}, diff=False)
    case("cast/float32_to_int32", "cast", cast, [T([len(trunc)], "float32", data=trunc)], {"dtype": "int32"}, diff=False)
    case("cast/float64_to_int32_random_7x5", "cast", cast, [T([7, 5], dist=("u", -50, 50))], {"dtype": "int32"}, diff=False)
    case("cast/float64_to_int32_transposed", "cast", cast, [T([5, 7], dist=("u", -5, 5), view=V_T())], {"dtype": "int32"}, diff=False)
    case("cast/float64_to_int32_0d", "cast", cast, [T([], data=-7.9)], {"dtype": "int32"}, diff=False)
    ints = [0, 1, -1, 7, -33, 65, 1000, -1000, 16777216, 16777217, -16777217, 2147483647, -2147483648]
    for dt in FLOAT_DTYPES:
        case(f"cast/int32_to_{dt}", "cast", cast, [T([len(ints)], "int32", data=ints)], {"dtype": dt}, diff=False)
        case(f"cast/int32_to_{dt}_transposed", "cast", cast,
             [T([5, 7], "int32", dist=("i", -100, 100), view=V_T())], {"dtype": dt}, diff=False)
        case(f"cast/bool_to_{dt}", "cast", cast, [T([7, 5], "bool", dist=("b", 0.5))], {"dtype": dt}, diff=False)
        case(f"cast/bool_to_{dt}_0d", "cast", cast, [T([], "bool", data=True)], {"dtype": dt}, diff=False)
        bvals = [0.0, -0.0, 1.0, -1.0, 1e-30, -1e-30, NAN, INF, -INF, 0.5]
        case(f"cast/{dt}_to_bool", "cast", cast, [T([len(bvals)], dt, data=bvals)], {"dtype": "bool"}, diff=False)
    case("cast/float64_to_bool_expanded", "cast", cast,
         [T([7, 1], dist=("d", [0.0, 1.0, -2.0]), view=[["expand", [7, 5]]])], {"dtype": "bool"}, diff=False)
    case("cast/float32_to_float64", "cast", cast, [T([7, 5], "float32")], {"dtype": "float64"})
    case("cast/float64_to_float32_rounding", "cast", cast,
         [T([6], data=[0.1, 1.0 / 3.0, 1e-50, 1e50, -1e300, 16777217.0], exact=True)], {"dtype": "float32"})


# ==========================================================================
# reduce
# ==========================================================================

def gen_reduce():
    family("reduce")

    def dims_or_none(a):
        return None if a["dim"] is None else tuple(a["dim"])

    def rsum(a, x):
        d = dims_or_none(a)
        if d is None:
            return x.sum(dim=tuple(range(x.dim())), keepdim=a["keepdim"]) if a["keepdim"] else x.sum()
        return x.sum(dim=d, keepdim=a["keepdim"])

    def rmean(a, x):
        d = dims_or_none(a)
        if d is None:
            return x.mean(dim=tuple(range(x.dim())), keepdim=a["keepdim"]) if a["keepdim"] else x.mean()
        return x.mean(dim=d, keepdim=a["keepdim"])

    def sum_like(op, fn):
        A = lambda dim, kd: {"dim": dim, "keepdim": kd}
        case(f"{op}/f64_all_7x33", op, fn, [T([7, 33])], A(None, False))
        case(f"{op}/f64_all_keepdim_7x5", op, fn, [T([7, 5])], A(None, True))
        case(f"{op}/f64_dim1_7x33", op, fn, [T([7, 33])], A([1], False))
        case(f"{op}/f64_dim0_keepdim_7x9", op, fn, [T([7, 9])], A([0], True))
        case(f"{op}/f64_dimneg1_keepdim_7x9", op, fn, [T([7, 9])], A([-1], True))
        case(f"{op}/f64_dims_0_2_3x7x5", op, fn, [T([3, 7, 5])], A([0, 2], False))
        case(f"{op}/f64_dims_neg3_neg1_keepdim_3x7x5", op, fn, [T([3, 7, 5])], A([-3, -1], True))
        case(f"{op}/f64_dims_1_neg1_3x7x5", op, fn, [T([3, 7, 5])], A([1, -1], False))
        case(f"{op}/f64_0d_all", op, fn, [T([])], A(None, False))
        case(f"{op}/f64_1x65_dim0", op, fn, [T([1, 65])], A([0], False))
        case(f"{op}/f64_transposed_dim1", op, fn, [T([9, 7], view=V_T())], A([1], False))
        case(f"{op}/f64_expanded_dim0", op, fn, [T([1, 9], view=[["expand", [7, 9]]])], A([0], False))
        case(f"{op}/f64_expanded_all", op, fn, [T([7, 1], view=[["expand", [7, 5]]])], A(None, False))
        case(f"{op}/f64_step_slice_dim1", op, fn, [T([3, 65], view=[["slice", 1, 0, 65, 2]])], A([1], True))
        case(f"{op}/f32_all_3x65", op, fn, [T([3, 65], "float32")], A(None, False))
        case(f"{op}/f32_dim1_3x33", op, fn, [T([3, 33], "float32")], A([1], False))
        case(f"{op}/f32_transposed_dim0_keepdim", op, fn, [T([9, 7], "float32", view=V_T())], A([0], True))

    sum_like("sum", rsum)
    sum_like("mean", rmean)
    case("sum/special_f64", "sum", rsum, [T([2, 4], data=[1.0, INF, -INF, 2.0, NAN, 1.0, INF, INF])],
         {"dim": [1], "keepdim": False}, diff=False)
    case("mean/special_f64", "mean", rmean, [T([2, 4], data=[1.0, INF, -INF, 2.0, NAN, 1.0, INF, INF])],
         {"dim": [1], "keepdim": False}, diff=False)

    # max / min (values + int64 indices with dim; values only without)
    def mm(f):
        def fn(a, x):
            if a["dim"] is None:
                return f(x)
            r = f(x, dim=a["dim"], keepdim=a["keepdim"])
            return r.values, r.indices
        return fn

    ties = ("d", [-1.0, -0.5, 0.0, 0.5, 1.0])
    for op, f in (("max", torch.max), ("min", torch.min)):
        fn = mm(f)
        A = lambda dim, kd=False: {"dim": dim, "keepdim": kd}
        case(f"{op}/f64_dim1_7x33", op, fn, [T([7, 33])], A(1))
        case(f"{op}/f64_dim0_keepdim_7x9", op, fn, [T([7, 9])], A(0, True))
        case(f"{op}/f64_dimneg1_ties_7x5", op, fn, [T([7, 5], dist=ties)], A(-1))
        case(f"{op}/f64_dim1_3x7x5", op, fn, [T([3, 7, 5])], A(1))
        case(f"{op}/f64_all_7x33", op, fn, [T([7, 33])], A(None))
        case(f"{op}/f64_all_ties_7x5", op, fn, [T([7, 5], dist=("d", [-1.0, 0.0, 1.0]))], A(None))
        case(f"{op}/f64_0d_all", op, fn, [T([])], A(None))
        case(f"{op}/f64_0d_dim0", op, fn, [T([])], A(0))
        case(f"{op}/f64_transposed_dim1", op, fn, [T([9, 7], view=V_T())], A(1))
        case(f"{op}/f64_expanded_dim1", op, fn, [T([7, 1], view=[["expand", [7, 5]]])], A(1))
        case(f"{op}/f64_step_slice_all", op, fn, [T([3, 65], view=[["slice", 1, 0, 65, 2]])], A(None))
        case(f"{op}/f32_dim1_3x33", op, fn, [T([3, 33], "float32")], A(1))
        case(f"{op}/f32_all_3x65", op, fn, [T([3, 65], "float32")], A(None))
        case(f"{op}/special_nan_dim1_f64", op, fn,
             [T([3, 4], data=[1.0, NAN, 3.0, NAN, -INF, -1.0, INF, 2.0, 0.0, -0.0, 0.0, 1.0])], A(1), diff=False)
        case(f"{op}/special_nan_all_f64", op, fn, [T([4], data=[1.0, NAN, 3.0, INF])], A(None), diff=False)

    def am(f):
        def fn(a, x):
            if a["dim"] is None:
                return f(x)
            return f(x, dim=a["dim"], keepdim=a["keepdim"])
        return fn

    for op, f in (("argmax", torch.argmax), ("argmin", torch.argmin)):
        fn = am(f)
        A = lambda dim, kd=False: {"dim": dim, "keepdim": kd}
        case(f"{op}/f64_dim1_7x33", op, fn, [T([7, 33])], A(1), diff=False)
        case(f"{op}/f64_dim0_keepdim_7x33", op, fn, [T([7, 33])], A(0, True), diff=False)
        case(f"{op}/f64_dimneg1_ties_7x5", op, fn, [T([7, 5], dist=ties)], A(-1), diff=False)
        case(f"{op}/f64_all_7x33", op, fn, [T([7, 33])], A(None), diff=False)
        case(f"{op}/f64_all_ties_7x5", op, fn, [T([7, 5], dist=("d", [-1.0, 0.0, 1.0]))], A(None), diff=False)
        case(f"{op}/f64_0d_all", op, fn, [T([])], A(None), diff=False)
        case(f"{op}/f64_transposed_all", op, fn, [T([33, 7], view=V_T())], A(None), diff=False)
        case(f"{op}/f64_transposed_dim1", op, fn, [T([5, 7], view=V_T(), dist=ties)], A(1), diff=False)
        case(f"{op}/f64_expanded_dim0", op, fn, [T([1, 5], view=[["expand", [7, 5]]])], A(0), diff=False)
        case(f"{op}/f32_dim1_3x65", op, fn, [T([3, 65], "float32")], A(1), diff=False)
        case(f"{op}/special_nan_f64", op, fn,
             [T([3, 4], data=[1.0, NAN, 3.0, NAN, -INF, -1.0, INF, 2.0, 0.0, -0.0, 0.0, 1.0])], A(1), diff=False)

    # var / std
    def vs(f):
        def fn(a, x):
            d = None if a["dim"] is None else tuple(a["dim"])
            return f(x, dim=d, correction=a["correction"], keepdim=a["keepdim"])
        return fn

    for op, f in (("var", torch.var), ("std", torch.std)):
        fn = vs(f)
        for c in (0, 1):
            A = lambda dim, kd=False: {"dim": dim, "correction": c, "keepdim": kd}
            case(f"{op}/c{c}/f64_all_7x33", op, fn, [T([7, 33])], A(None))
            case(f"{op}/c{c}/f64_dim1_5x33", op, fn, [T([5, 33])], A([1]))
            case(f"{op}/c{c}/f64_dimneg2_keepdim_7x9", op, fn, [T([7, 9])], A([-2], True))
            case(f"{op}/c{c}/f64_dims_0_2_keepdim_3x7x5", op, fn, [T([3, 7, 5])], A([0, 2], True))
            case(f"{op}/c{c}/f64_transposed_dim0", op, fn, [T([9, 7], view=V_T())], A([0]))
            case(f"{op}/c{c}/f64_expanded_dim0", op, fn, [T([1, 5], view=[["expand", [7, 5]]])], A([0]))
            case(f"{op}/c{c}/f32_dim1_3x33", op, fn, [T([3, 33], "float32")], A([1]))
            case(f"{op}/c{c}/f32_all_3x65", op, fn, [T([3, 65], "float32")], A(None))
        case(f"{op}/c0/f64_0d_all", op, fn, [T([])], {"dim": None, "correction": 0, "keepdim": False}, diff=False)
        case(f"{op}/c1/special_single_element_f64", op, fn, [T([3, 1])],
             {"dim": [1], "correction": 1, "keepdim": False}, diff=False)
        case(f"{op}/c1/special_0d_f64", op, fn, [T([])],
             {"dim": None, "correction": 1, "keepdim": False}, diff=False)

    # logsumexp
    lse = lambda a, x: torch.logsumexp(x, dim=tuple(a["dim"]), keepdim=a["keepdim"])
    A = lambda dim, kd=False: {"dim": dim, "keepdim": kd}
    case("logsumexp/f64_dim1_7x33", "logsumexp", lse, [T([7, 33], dist=("u", -3, 3))], A([1]))
    case("logsumexp/f64_dim0_keepdim_7x9", "logsumexp", lse, [T([7, 9], dist=("u", -3, 3))], A([0], True))
    case("logsumexp/f64_dims_all_7x5", "logsumexp", lse, [T([7, 5], dist=("u", -3, 3))], A([0, 1]))
    case("logsumexp/f64_dimneg1_3x7x5", "logsumexp", lse, [T([3, 7, 5], dist=("u", -3, 3))], A([-1], True))
    big = [1e4, -1e4, 5000.0, 1e4, 0.0,
           -1e4, -1e4, -1e4 + 1.0, -1e4 + 2.0, -1e4,
           0.1, -INF, 0.3, -INF, 0.5,
           1.0, 2.0, 3.0, 4.0, 5.0]
    case("logsumexp/f64_large_and_neg_inf_dim1", "logsumexp", lse, [T([4, 5], data=big)], A([1]))
    case("logsumexp/f32_large_and_neg_inf_dim1", "logsumexp", lse, [T([4, 5], "float32", data=big)], A([1]))
    case("logsumexp/f64_0d", "logsumexp", lse, [T([])], A([0]))
    case("logsumexp/f64_transposed_dim1", "logsumexp", lse, [T([9, 7], view=V_T())], A([1]))
    case("logsumexp/f64_expanded_dim1", "logsumexp", lse, [T([7, 1], view=[["expand", [7, 5]]])], A([1]))
    case("logsumexp/f32_dim1_3x65", "logsumexp", lse, [T([3, 65], "float32", dist=("u", -3, 3))], A([1]))
    case("logsumexp/special_f64", "logsumexp", lse,
         [T([4, 3], data=[-INF, -INF, -INF, INF, 1.0, 2.0, NAN, 1.0, 2.0, INF, INF, 1.0])], A([1]), diff=False)

    # norm (vector norm)
    def norm(a, x):
        d = None if a["dim"] is None else tuple(a["dim"])
        return torch.linalg.vector_norm(x, ord=a["p"], dim=d, keepdim=a["keepdim"])

    N = lambda p, dim, kd=False: {"p": p, "dim": dim, "keepdim": kd}
    av = dict(dist=("u", -1, 1), avoid=(0.0,))
    case("norm/p2/f64_all_7x33", "norm", norm, [T([7, 33], **av)], N(2.0, None))
    case("norm/p2/f64_dim1_7x33", "norm", norm, [T([7, 33], **av)], N(2.0, [1]))
    case("norm/p2/f64_dim0_keepdim_7x9", "norm", norm, [T([7, 9], **av)], N(2.0, [0], True))
    case("norm/p2/f64_dims_1_2_3x7x5", "norm", norm, [T([3, 7, 5], **av)], N(2.0, [1, 2]))
    case("norm/p2/f64_0d", "norm", norm, [T([], **av)], N(2.0, None))
    case("norm/p2/f64_transposed_dim1", "norm", norm, [T([9, 7], view=V_T(), **av)], N(2.0, [1]))
    case("norm/p2/f64_expanded_all", "norm", norm, [T([7, 1], view=[["expand", [7, 5]]], **av)], N(2.0, None))
    case("norm/p2/f32_dim1_3x33", "norm", norm, [T([3, 33], "float32", **av)], N(2.0, [1]))
    case("norm/p1/f64_all_7x33", "norm", norm, [T([7, 33], **av)], N(1.0, None))
    case("norm/p1/f64_dimneg1_keepdim_5x9", "norm", norm, [T([5, 9], **av)], N(1.0, [-1], True))
    case("norm/p1/f64_transposed_dim0", "norm", norm, [T([9, 7], view=V_T(), **av)], N(1.0, [0]))
    case("norm/p1/f32_all_3x33", "norm", norm, [T([3, 33], "float32", **av)], N(1.0, None))
    case("norm/p2/kink_zero_row", "norm", norm, [T([2, 3], data=[0.0, 0.0, 0.0, 3.0, -4.0, 0.0])], N(2.0, [1]))
    case("norm/p1/kink_zero_row", "norm", norm, [T([2, 3], data=[0.0, 0.0, 0.0, 3.0, -4.0, 0.0])], N(1.0, [1]))

    # cumsum (a scan along one dim)
    cs = lambda a, x: torch.cumsum(x, dim=a["dim"])
    case("cumsum/f64_dim1_7x33", "cumsum", cs, [T([7, 33])], {"dim": 1})
    case("cumsum/f64_dim0_9x7", "cumsum", cs, [T([9, 7])], {"dim": 0})
    case("cumsum/f64_dimneg1_3x7x5", "cumsum", cs, [T([3, 7, 5])], {"dim": -1})
    case("cumsum/f64_transposed_dim1", "cumsum", cs, [T([9, 7], view=V_T())], {"dim": 1})
    case("cumsum/f64_0d", "cumsum", cs, [T([])], {"dim": 0})
    case("cumsum/f32_dim1_3x65", "cumsum", cs, [T([3, 65], "float32")], {"dim": 1})
    case("cumsum/special_f64", "cumsum", cs, [T([2, 4], data=[1.0, INF, -INF, 2.0, NAN, 1.0, 2.0, 3.0])], {"dim": 1}, diff=False)


# ==========================================================================
# linalg
# ==========================================================================

def gen_linalg():
    family("linalg")
    mm = lambda a, x, y: torch.matmul(x, y)
    cases = [
        ("1d_1d_33", [T([33]), T([33])]),
        ("1d_1d_1", [T([1]), T([1])]),
        ("2d_1d_7x33_33", [T([7, 33]), T([33])]),
        ("1d_2d_33_33x5", [T([33]), T([33, 5])]),
        ("2d_2d_7x33_33x65", [T([7, 33]), T([33, 65])]),
        ("2d_2d_1x1_1x1", [T([1, 1]), T([1, 1])]),
        ("2d_2d_1x7_7x1", [T([1, 7]), T([7, 1])]),
        ("2d_2d_5x1_1x7", [T([5, 1]), T([1, 7])]),
        ("3d_3d_3x7x5_3x5x4", [T([3, 7, 5]), T([3, 5, 4])]),
        ("broadcast_batch_2x1x7x5_3x5x4", [T([2, 1, 7, 5]), T([3, 5, 4])]),
        ("broadcast_batch_1x7x5_3x5x4", [T([1, 7, 5]), T([3, 5, 4])]),
        ("3d_2d_3x7x5_5x4", [T([3, 7, 5]), T([5, 4])]),
        ("2d_3d_7x5_3x5x4", [T([7, 5]), T([3, 5, 4])]),
        ("3d_1d_3x7x5_5", [T([3, 7, 5]), T([5])]),
        ("1d_3d_5_3x5x4", [T([5]), T([3, 5, 4])]),
        ("transposed_lhs_5x7T_5x4", [T([5, 7], view=V_T()), T([5, 4])]),
        ("transposed_rhs_7x5_4x5T", [T([7, 5]), T([4, 5], view=V_T())]),
        ("transposed_both_5x7T_4x5T", [T([5, 7], view=V_T()), T([4, 5], view=V_T())]),
        ("transposed_batched_3x5x7_perm", [T([3, 5, 7], view=[["transpose", 1, 2]]), T([3, 5, 4])]),
        ("step_sliced_lhs_14x5_step2", [T([14, 5], view=[["slice", 0, 0, 14, 2]]), T([5, 4])]),
        ("step_sliced_rhs_cols", [T([7, 5]), T([5, 9], view=[["slice", 1, 0, 9, 2]])]),
        ("expanded_batch_lhs", [T([1, 7, 5], view=[["expand", [3, 7, 5]]]), T([3, 5, 4])]),
        ("expanded_rhs_stride0", [T([7, 5]), T([5, 1], view=[["expand", [5, 4]]])]),
        ("1d_1d_expanded", [T([1], view=[["expand", [7]]]), T([7])]),
    ]
    for nm, ins in cases:
        case(f"matmul/f64_{nm}", "matmul", mm, ins)
    f32cases = [
        ("1d_1d_65", [T([65], "float32"), T([65], "float32")]),
        ("2d_2d_7x33_33x5", [T([7, 33], "float32"), T([33, 5], "float32")]),
        ("3d_3d_3x7x5_3x5x4", [T([3, 7, 5], "float32"), T([3, 5, 4], "float32")]),
        ("broadcast_batch_2x1x7x5_3x5x4", [T([2, 1, 7, 5], "float32"), T([3, 5, 4], "float32")]),
        ("transposed_both_5x7T_4x5T", [T([5, 7], "float32", view=V_T()), T([4, 5], "float32", view=V_T())]),
        ("2d_1d_7x33_33", [T([7, 33], "float32"), T([33], "float32")]),
    ]
    for nm, ins in f32cases:
        case(f"matmul/f32_{nm}", "matmul", mm, ins)
    case("matmul/special_f64", "matmul", mm,
         [T([2, 2], data=[INF, 1.0, NAN, 1.0]), T([2, 2], data=[0.0, 1.0, 1.0, 1.0])], diff=False)

    # addmm(input, a, b) = input + a·b: a linear layer's bias with x·Wᵀ.
    # In float32 a bias row of more than 16 columns goes through the CPU
    # GEMM's epilogue; 10 columns and full or column inputs do not.
    addmm = lambda a, i, x, y: torch.addmm(i, x, y)
    for nm, ins in [
        ("f64_bias_7x33_33x65", [T([65]), T([7, 33]), T([33, 65])]),
        ("f64_input_7x4_7x5_5x4", [T([7, 4]), T([7, 5]), T([5, 4])]),
        ("f64_input_col_7x1", [T([7, 1]), T([7, 5]), T([5, 4])]),
        ("f64_transposed_rhs_4x5T", [T([1, 4]), T([7, 5]), T([4, 5], view=V_T())]),
        ("f32_bias_7x33_33x65", [T([65], "float32"), T([7, 33], "float32"), T([33, 65], "float32")]),
        ("f32_linear_65x33_20x33T", [T([20], "float32"), T([65, 33], "float32"), T([20, 33], "float32", view=V_T())]),
        ("f32_bias_row_1x33", [T([1, 33], "float32"), T([9, 7], "float32"), T([7, 33], "float32")]),
        ("f32_head_33x65_10x65T", [T([10], "float32"), T([33, 65], "float32"), T([10, 65], "float32", view=V_T())]),
    ]:
        case(f"addmm/{nm}", "addmm", addmm, ins)
    # relu(input + a·b), a linear layer and its ReLU (tensor.AddmmReLU):
    # the value of torch._addmm_activation, which has no derivative in
    # torch 1.13. A float32 bias row of more than 16 columns takes the
    # GEMM's epilogue, bias and ReLU; a head of 10 columns does not.
    addmm_relu = lambda a, i, x, y: torch.relu(torch.addmm(i, x, y))
    for nm, ins in [
        ("f64_bias_7x33_33x20", [T([20]), T([7, 33]), T([33, 20])]),
        ("f64_input_col_7x1", [T([7, 1]), T([7, 5]), T([5, 4])]),
        ("f32_linear_17x9_20x9T", [T([20], "float32"), T([17, 9], "float32"), T([20, 9], "float32", view=V_T())]),
        ("f32_head_9x7_10x7T", [T([10], "float32"), T([9, 7], "float32"), T([10, 7], "float32", view=V_T())]),
    ]:
        case(f"addmm_relu/{nm}", "addmm_relu", addmm_relu, ins)

    outer = lambda a, x, y: torch.outer(x, y)
    case("outer/f64_7_33", "outer", outer, [T([7]), T([33])])
    case("outer/f64_1_5", "outer", outer, [T([1]), T([5])])
    case("outer/f64_step_sliced_expanded", "outer", outer,
         [T([13], view=[["slice", 0, 0, 13, 2]]), T([1], view=[["expand", [5]]])])
    case("outer/f64_selected_row", "outer", outer, [T([3, 5], view=[["select", 1, 2]]), T([4])])
    case("outer/f32_7_65", "outer", outer, [T([7], "float32"), T([65], "float32")])


# ==========================================================================
# index
# ==========================================================================

def gen_index():
    family("index")
    isel = lambda a, x, i: torch.index_select(x, a["dim"], i)
    case("index_select/f64_dim0_repeats", "index_select", isel,
         [T([7, 5]), T([9], "int64", data=[0, 6, 3, 3, 1, 0, 6, 6, 2])], {"dim": 0})
    case("index_select/f64_dim1_7x33", "index_select", isel,
         [T([7, 33]), T([5], "int64", data=[32, 0, 16, 16, 1])], {"dim": 1})
    case("index_select/f64_dimneg1_3x7x5", "index_select", isel,
         [T([3, 7, 5]), T([4], "int64", data=[4, 0, 4, 2])], {"dim": -1})
    case("index_select/f64_1d_65", "index_select", isel,
         [T([65]), T([7], "int64", data=[64, 0, 33, 7, 7, 1, 64])], {"dim": 0})
    case("index_select/f64_empty_index", "index_select", isel,
         [T([7, 5]), T([0], "int64", data=[])], {"dim": 0})
    case("index_select/f64_0d_index", "index_select", isel,
         [T([7, 5]), T([], "int64", data=3)], {"dim": 0})
    case("index_select/f64_transposed_dim0", "index_select", isel,
         [T([5, 7], view=V_T()), T([4], "int64", data=[6, 2, 2, 0])], {"dim": 0})
    case("index_select/f64_expanded_dim1", "index_select", isel,
         [T([7, 1], view=[["expand", [7, 5]]]), T([3], "int64", data=[4, 4, 0])], {"dim": 1})
    case("index_select/f32_dim0_repeats", "index_select", isel,
         [T([7, 33], "float32"), T([5], "int64", data=[6, 0, 6, 3, 6])], {"dim": 0})

    gat = lambda a, x, i: torch.gather(x, a["dim"], i)
    case("gather/f64_dim1_7x5", "gather", gat, [T([7, 5]), T([7, 3], "int64", dist=("i", 0, 5))], {"dim": 1})
    case("gather/f64_dim0_7x5", "gather", gat, [T([7, 5]), T([9, 5], "int64", dist=("i", 0, 7))], {"dim": 0})
    case("gather/f64_dimneg1_smaller_index", "gather", gat,
         [T([3, 7, 5]), T([2, 4, 6], "int64", dist=("i", 0, 5))], {"dim": -1})
    case("gather/f64_1d_33", "gather", gat, [T([33]), T([10], "int64", dist=("i", 0, 33))], {"dim": 0})
    case("gather/f64_transposed_dim1", "gather", gat,
         [T([5, 7], view=V_T()), T([7, 4], "int64", dist=("i", 0, 5))], {"dim": 1})
    case("gather/f64_step_sliced_index", "gather", gat,
         [T([7, 5]), T([7, 6], "int64", dist=("i", 0, 5), view=[["slice", 1, 0, 6, 2]])], {"dim": 1})
    case("gather/f32_dim1_2x65", "gather", gat, [T([2, 65], "float32"), T([2, 33], "int64", dist=("i", 0, 65))], {"dim": 1})

    sca = lambda a, x, i, s: torch.scatter_add(x, a["dim"], i, s)
    case("scatter_add/f64_dim0_7x5", "scatter_add", sca,
         [T([7, 5]), T([9, 5], "int64", dist=("i", 0, 7)), T([9, 5])], {"dim": 0})
    case("scatter_add/f64_dim1_7x5", "scatter_add", sca,
         [T([7, 5]), T([7, 8], "int64", dist=("i", 0, 5)), T([7, 8])], {"dim": 1})
    case("scatter_add/f64_index_smaller_than_src", "scatter_add", sca,
         # torch 1.13's scatter_add backward for src is wrong when index is smaller
         # than src (returns a grad shaped like index), so src has no grad here.
         [T([4, 5]), T([2, 3], "int64", dist=("i", 0, 4)), T([3, 5], rg=False)], {"dim": 0})
    case("scatter_add/f64_1d_33", "scatter_add", sca,
         [T([33]), T([65], "int64", dist=("i", 0, 33)), T([65])], {"dim": 0})
    case("scatter_add/f64_dimneg1_3x4x5", "scatter_add", sca,
         [T([3, 4, 5]), T([3, 4, 7], "int64", dist=("i", 0, 5)), T([3, 4, 7])], {"dim": -1})
    case("scatter_add/f64_transposed_self_src", "scatter_add", sca,
         [T([5, 7], view=V_T()), T([7, 3], "int64", dist=("i", 0, 5)), T([3, 7], view=V_T())], {"dim": 1})
    case("scatter_add/f32_dim0_7x5", "scatter_add", sca,
         [T([7, 5], "float32"), T([9, 5], "int64", dist=("i", 0, 7)), T([9, 5], "float32")], {"dim": 0})

    # index_reduce is beta in torch 1.13 (it warns); its amax with include_self
    # is Tessera's IndexAmax, the segment max of ragged tensors.
    ira = lambda a, x, i, s: x.index_reduce(a["dim"], i, s, "amax", include_self=True)
    case("index_reduce_amax/f64_dim0_7x5", "index_reduce_amax", ira,
         [T([7, 5]), T([9], "int64", dist=("i", 0, 7)), T([9, 5])], {"dim": 0})
    case("index_reduce_amax/f64_dim1_3x7", "index_reduce_amax", ira,
         [T([3, 7]), T([11], "int64", dist=("i", 0, 7)), T([3, 11])], {"dim": 1})
    case("index_reduce_amax/f64_1d_33", "index_reduce_amax", ira,
         [T([33]), T([65], "int64", dist=("i", 0, 33)), T([65])], {"dim": 0})
    case("index_reduce_amax/f64_transposed_src", "index_reduce_amax", ira,
         [T([5, 7]), T([3], "int64", dist=("i", 0, 7)), T([3, 5], view=V_T())], {"dim": 1})
    case("index_reduce_amax/f32_dim0_33x3", "index_reduce_amax", ira,
         [T([33, 3], "float32"), T([65], "int64", dist=("i", 0, 33)), T([65, 3], "float32")], {"dim": 0})

    oh = lambda a, i: F.one_hot(i, a["num_classes"])
    case("one_hot/n5_1d", "one_hot", oh, [T([7], "int64", data=[0, 4, 2, 2, 1, 3, 0])], {"num_classes": 5}, diff=False)
    case("one_hot/inferred_2d", "one_hot", oh, [T([2, 3], "int64", data=[0, 4, 2, 6, 1, 3])], {"num_classes": -1}, diff=False)
    case("one_hot/n3_0d", "one_hot", oh, [T([], "int64", data=2)], {"num_classes": 3}, diff=False)
    case("one_hot/n65_transposed", "one_hot", oh,
         [T([3, 2], "int64", data=[0, 64, 33, 7, 1, 2], view=V_T())], {"num_classes": 65}, diff=False)

    def sl(a, x):
        idx = [slice(None)] * x.dim()
        idx[a["dim"]] = slice(a["start"], a["end"], a["step"])
        return x[tuple(idx)]

    S = lambda d, s, e, st: {"dim": d, "start": s, "end": e, "step": st}
    case("slice/f64_dim0_step2_7x5", "slice", sl, [T([7, 5])], S(0, 0, 7, 2))
    case("slice/f64_dim1_step3_7x33", "slice", sl, [T([7, 33])], S(1, 1, 33, 3))
    case("slice/f64_dim1_step1_7x33", "slice", sl, [T([7, 33])], S(1, 5, 12, 1))
    case("slice/f64_dimneg1_step4_3x2x65", "slice", sl, [T([3, 2, 65])], S(-1, 2, 65, 4))
    case("slice/f64_empty", "slice", sl, [T([7, 5])], S(0, 3, 3, 1))
    case("slice/f64_neg_start_end", "slice", sl, [T([7, 5])], S(0, -5, -1, 2))
    case("slice/f64_end_past_size", "slice", sl, [T([7, 5])], S(0, 1, 100, 3))
    case("slice/f64_transposed", "slice", sl, [T([5, 7], view=V_T())], S(0, 1, 7, 2))
    case("slice/f64_expanded", "slice", sl, [T([1, 5], view=[["expand", [7, 5]]])], S(0, 0, 7, 3))
    case("slice/f32_dim1_step2_2x65", "slice", sl, [T([2, 65], "float32")], S(1, 0, 65, 2))

    sel = lambda a, x: x.select(a["dim"], a["index"])
    case("select/f64_dim0_7x5", "select", sel, [T([7, 5])], {"dim": 0, "index": 6})
    case("select/f64_dim1_7x33", "select", sel, [T([7, 33])], {"dim": 1, "index": 16})
    case("select/f64_neg_index", "select", sel, [T([7, 5])], {"dim": 1, "index": -1})
    case("select/f64_dimneg2_3x7x5", "select", sel, [T([3, 7, 5])], {"dim": -2, "index": 3})
    case("select/f64_1d_to_0d", "select", sel, [T([7])], {"dim": 0, "index": 3})
    case("select/f64_transposed", "select", sel, [T([5, 7], view=V_T())], {"dim": 0, "index": 2})
    case("select/f64_expanded", "select", sel, [T([1, 5], view=[["expand", [7, 5]]])], {"dim": 1, "index": 4})
    case("select/f32_dim1_3x65", "select", sel, [T([3, 65], "float32")], {"dim": 1, "index": 64})

    nar = lambda a, x: x.narrow(a["dim"], a["start"], a["length"])
    case("narrow/f64_dim0_7x5", "narrow", nar, [T([7, 5])], {"dim": 0, "start": 2, "length": 4})
    case("narrow/f64_dim1_full_3x33", "narrow", nar, [T([3, 33])], {"dim": 1, "start": 0, "length": 33})
    case("narrow/f64_dimneg1_3x7x5", "narrow", nar, [T([3, 7, 5])], {"dim": -1, "start": 4, "length": 1})
    case("narrow/f64_neg_start", "narrow", nar, [T([7, 5])], {"dim": 0, "start": -3, "length": 2})
    case("narrow/f64_zero_length", "narrow", nar, [T([7, 5])], {"dim": 1, "start": 2, "length": 0})
    case("narrow/f64_transposed", "narrow", nar, [T([5, 7], view=V_T())], {"dim": 1, "start": 1, "length": 3})
    case("narrow/f64_step_sliced", "narrow", nar, [T([14, 5], view=[["slice", 0, 0, 14, 2]])], {"dim": 0, "start": 1, "length": 5})
    case("narrow/f32_dim1_2x65", "narrow", nar, [T([2, 65], "float32")], {"dim": 1, "start": 32, "length": 33})


# ==========================================================================
# shape
# ==========================================================================

def gen_shape():
    family("shape")
    cat = lambda a, *xs: torch.cat(xs, dim=a["dim"])
    case("cat/f64_dim0", "cat", cat, [T([7, 5]), T([1, 5]), T([3, 5])], {"dim": 0})
    case("cat/f64_dim1", "cat", cat, [T([3, 5]), T([3, 33]), T([3, 1])], {"dim": 1})
    case("cat/f64_dimneg1_3d", "cat", cat, [T([3, 2, 5]), T([3, 2, 1])], {"dim": -1})
    case("cat/f64_dimneg2_3d", "cat", cat, [T([3, 2, 5]), T([3, 4, 5])], {"dim": -2})
    case("cat/f64_single", "cat", cat, [T([7, 5])], {"dim": 0})
    case("cat/f64_with_empty", "cat", cat, [T([7, 5]), T([0, 5])], {"dim": 0})
    case("cat/f64_1d", "cat", cat, [T([7]), T([65]), T([1])], {"dim": 0})
    case("cat/f64_noncontiguous", "cat", cat,
         [T([5, 7], view=V_T()), T([7, 10], view=[["slice", 1, 0, 10, 2]]), T([7, 1], view=[["expand", [7, 3]]])], {"dim": 1})
    case("cat/f32_dim0", "cat", cat, [T([2, 33], "float32"), T([1, 33], "float32")], {"dim": 0})

    stack = lambda a, *xs: torch.stack(xs, dim=a["dim"])
    case("stack/f64_dim0", "stack", stack, [T([7, 5]), T([7, 5]), T([7, 5])], {"dim": 0})
    case("stack/f64_dim1", "stack", stack, [T([7, 5]), T([7, 5])], {"dim": 1})
    case("stack/f64_dimneg1", "stack", stack, [T([7, 5]), T([7, 5])], {"dim": -1})
    case("stack/f64_0d", "stack", stack, [T([]), T([]), T([])], {"dim": 0})
    case("stack/f64_noncontiguous", "stack", stack,
         [T([5, 7], view=V_T()), T([7, 10], view=[["slice", 1, 1, 10, 2]])], {"dim": 2})
    case("stack/f32_dim1", "stack", stack, [T([2, 33], "float32"), T([2, 33], "float32")], {"dim": 1})

    def split(a, x):
        if "split_size" in a:
            return tuple(torch.split(x, a["split_size"], dim=a["dim"]))
        return tuple(torch.split(x, a["split_sizes"], dim=a["dim"]))

    case("split/f64_size2_dim0_7x5", "split", split, [T([7, 5])], {"split_size": 2, "dim": 0})
    case("split/f64_size33_dim1_2x65", "split", split, [T([2, 65])], {"split_size": 33, "dim": 1})
    case("split/f64_size_larger_than_dim", "split", split, [T([7, 5])], {"split_size": 10, "dim": 0})
    case("split/f64_sizes_dim1", "split", split, [T([7, 5])], {"split_sizes": [1, 3, 1], "dim": 1})
    case("split/f64_sizes_with_zero_dimneg1", "split", split, [T([3, 7, 5])], {"split_sizes": [2, 0, 3], "dim": -1})
    case("split/f64_transposed", "split", split, [T([5, 7], view=V_T())], {"split_size": 3, "dim": 1})
    case("split/f32_sizes_dim0", "split", split, [T([7, 9], "float32")], {"split_sizes": [4, 3], "dim": 0})

    chunk = lambda a, x: tuple(torch.chunk(x, a["chunks"], dim=a["dim"]))
    case("chunk/f64_3_dim0_7x5", "chunk", chunk, [T([7, 5])], {"chunks": 3, "dim": 0})
    case("chunk/f64_4_of_5_gives_3", "chunk", chunk, [T([7, 5])], {"chunks": 4, "dim": 1})
    case("chunk/f64_2_dimneg1_3x2x33", "chunk", chunk, [T([3, 2, 33])], {"chunks": 2, "dim": -1})
    case("chunk/f64_more_chunks_than_size", "chunk", chunk, [T([3, 5])], {"chunks": 7, "dim": 0})
    case("chunk/f64_expanded", "chunk", chunk, [T([1, 5], view=[["expand", [7, 5]]])], {"chunks": 2, "dim": 0})
    case("chunk/f32_3_dim1", "chunk", chunk, [T([2, 33], "float32")], {"chunks": 3, "dim": 1})

    tr = lambda a, x: x.transpose(a["dim0"], a["dim1"])
    case("transpose/f64_2d", "transpose", tr, [T([7, 5])], {"dim0": 0, "dim1": 1})
    case("transpose/f64_3d_neg", "transpose", tr, [T([3, 7, 5])], {"dim0": -1, "dim1": 0})
    case("transpose/f64_same_dim", "transpose", tr, [T([7, 5])], {"dim0": 1, "dim1": 1})
    case("transpose/f64_noncontiguous", "transpose", tr, [T([5, 14], view=[["slice", 1, 0, 14, 2]])], {"dim0": 0, "dim1": 1})
    case("transpose/f32_2d", "transpose", tr, [T([2, 33], "float32")], {"dim0": 0, "dim1": 1})

    pm = lambda a, x: x.permute(*a["dims"])
    case("permute/f64_3d", "permute", pm, [T([3, 7, 5])], {"dims": [2, 0, 1]})
    case("permute/f64_4d_neg", "permute", pm, [T([2, 3, 1, 5])], {"dims": [-1, 1, 0, -2]})
    case("permute/f64_identity", "permute", pm, [T([7, 5])], {"dims": [0, 1]})
    case("permute/f64_transposed_input", "permute", pm, [T([5, 3, 7], view=[["transpose", 0, 2]])], {"dims": [1, 2, 0]})
    case("permute/f32_3d", "permute", pm, [T([3, 7, 5], "float32")], {"dims": [1, 2, 0]})

    rs = lambda a, x: x.reshape(a["shape"])
    case("reshape/f64_7x5_to_5x7", "reshape", rs, [T([7, 5])], {"shape": [5, 7]})
    case("reshape/f64_infer", "reshape", rs, [T([3, 7, 5])], {"shape": [-1, 5]})
    case("reshape/f64_to_1d", "reshape", rs, [T([7, 5])], {"shape": [-1]})
    case("reshape/f64_0d_to_1x1", "reshape", rs, [T([])], {"shape": [1, 1]})
    case("reshape/f64_1_to_0d", "reshape", rs, [T([1, 1])], {"shape": []})
    case("reshape/f64_transposed", "reshape", rs, [T([5, 7], view=V_T())], {"shape": [5, 7]})
    case("reshape/f64_expanded", "reshape", rs, [T([7, 1], view=[["expand", [7, 5]]])], {"shape": [35]})
    case("reshape/f32_infer_middle", "reshape", rs, [T([3, 15], "float32")], {"shape": [3, -1, 5]})

    vw = lambda a, x: x.view(a["shape"])
    case("view/f64_7x5_to_35", "view", vw, [T([7, 5])], {"shape": [35]})
    case("view/f64_infer_3d", "view", vw, [T([6, 5])], {"shape": [2, -1, 5]})
    case("view/f64_0d_to_1", "view", vw, [T([])], {"shape": [1]})
    case("view/f64_step_sliced_rows", "view", vw, [T([14, 5], view=[["slice", 0, 0, 14, 2]])], {"shape": [7, 1, 5]})
    case("view/f32_1x65_to_65", "view", vw, [T([1, 65], "float32")], {"shape": [65]})

    fl = lambda a, x: torch.flatten(x, a["start_dim"], a["end_dim"])
    case("flatten/f64_all", "flatten", fl, [T([3, 7, 5])], {"start_dim": 0, "end_dim": -1})
    case("flatten/f64_1_2", "flatten", fl, [T([2, 3, 4, 5])], {"start_dim": 1, "end_dim": 2})
    case("flatten/f64_neg", "flatten", fl, [T([2, 3, 4, 5])], {"start_dim": -2, "end_dim": -1})
    case("flatten/f64_single_dim_noop", "flatten", fl, [T([7, 5])], {"start_dim": 1, "end_dim": 1})
    case("flatten/f64_0d", "flatten", fl, [T([])], {"start_dim": 0, "end_dim": -1})
    case("flatten/f64_transposed", "flatten", fl, [T([5, 7], view=V_T())], {"start_dim": 0, "end_dim": 1})
    case("flatten/f32_all", "flatten", fl, [T([3, 11], "float32")], {"start_dim": 0, "end_dim": -1})

    def sq(a, x):
        return x.squeeze() if a["dim"] is None else x.squeeze(a["dim"])

    case("squeeze/f64_all", "squeeze", sq, [T([1, 7, 1, 5, 1])], {"dim": None})
    case("squeeze/f64_dim", "squeeze", sq, [T([7, 1, 5])], {"dim": 1})
    case("squeeze/f64_dimneg1", "squeeze", sq, [T([7, 5, 1])], {"dim": -1})
    case("squeeze/f64_non1_dim_noop", "squeeze", sq, [T([7, 5])], {"dim": 0})
    case("squeeze/f64_all_ones_to_0d", "squeeze", sq, [T([1, 1])], {"dim": None})
    case("squeeze/f64_expanded", "squeeze", sq, [T([1, 5], view=[["expand", [1, 1, 5]]])], {"dim": None})
    case("squeeze/f32_dim0", "squeeze", sq, [T([1, 65], "float32")], {"dim": 0})

    usq = lambda a, x: x.unsqueeze(a["dim"])
    case("unsqueeze/f64_dim0", "unsqueeze", usq, [T([7, 5])], {"dim": 0})
    case("unsqueeze/f64_dim2_end", "unsqueeze", usq, [T([7, 5])], {"dim": 2})
    case("unsqueeze/f64_dimneg1", "unsqueeze", usq, [T([7, 5])], {"dim": -1})
    case("unsqueeze/f64_dimneg2", "unsqueeze", usq, [T([7, 5])], {"dim": -2})
    case("unsqueeze/f64_0d", "unsqueeze", usq, [T([])], {"dim": 0})
    case("unsqueeze/f64_transposed", "unsqueeze", usq, [T([5, 7], view=V_T())], {"dim": 1})
    case("unsqueeze/f32_dim1", "unsqueeze", usq, [T([3, 11], "float32")], {"dim": 1})

    ex = lambda a, x: x.expand(*a["sizes"])
    case("expand/f64_7x1_to_7x5", "expand", ex, [T([7, 1])], {"sizes": [7, 5]})
    case("expand/f64_new_leading_dims", "expand", ex, [T([1, 5])], {"sizes": [3, 7, 5]})
    case("expand/f64_minus1_keeps", "expand", ex, [T([7, 1])], {"sizes": [2, -1, 9]})
    case("expand/f64_0d", "expand", ex, [T([])], {"sizes": [3, 4]})
    case("expand/f64_noop", "expand", ex, [T([7, 5])], {"sizes": [7, 5]})
    case("expand/f64_transposed", "expand", ex, [T([1, 7], view=V_T())], {"sizes": [7, 5]})
    case("expand/f32_1x65", "expand", ex, [T([1, 65], "float32")], {"sizes": [3, 65]})

    ct = lambda a, x: x.contiguous()
    cl = lambda a, x: x.clone()
    for op, fn in (("contiguous", ct), ("clone", cl)):
        case(f"{op}/f64_contiguous_7x5", op, fn, [T([7, 5])])
        case(f"{op}/f64_0d", op, fn, [T([])])
        case(f"{op}/f64_transposed", op, fn, [T([5, 7], view=V_T())])
        case(f"{op}/f64_step_sliced", op, fn, [T([3, 33], view=[["slice", 1, 1, 33, 4]])])
        case(f"{op}/f64_expanded", op, fn, [T([7, 1], view=[["expand", [3, 7, 5]]])])
        case(f"{op}/f64_permuted_3d", op, fn, [T([3, 7, 5], view=[["permute", [2, 0, 1]]])])
        case(f"{op}/f64_select_narrow_unsqueeze", op, fn,
             [T([3, 7, 5], view=[["select", 0, 1], ["narrow", 1, 1, 3], ["unsqueeze", 0]])])
        case(f"{op}/f64_chain_all", op, fn,
             [T([4, 9, 5], view=[["transpose", 0, 2], ["slice", 1, 1, 9, 3], ["select", 2, 3],
                                 ["unsqueeze", 1], ["expand", [2, 5, 4, 3]], ["permute", [3, 0, 2, 1]],
                                 ["narrow", 2, 1, 2]])])
        case(f"{op}/f32_transposed", op, fn, [T([2, 33], "float32", view=V_T())])
        case(f"{op}/int64_transposed", op, fn, [T([5, 7], "int64", dist=("i", -9, 9), view=V_T())], diff=False)


# ==========================================================================
# nn
# ==========================================================================

def gen_nn():
    family("nn")
    big = [0.3, -1.2, 2.0, 0.7, -0.4, 1.1, 0.0,
           1e4, -1e4, 5000.0, 1e4 - 1.0, -3.0, 0.0, 1e4,
           0.5, -INF, 1.5, -INF, -0.5, 2.5, 0.25,
           -1e4, -1e4 + 0.5, -1e4 + 1.0, -1e4 + 2.0, -1e4, -1e4 + 3.0, -1e4 + 0.25]
    for op, f in (("softmax", F.softmax), ("log_softmax", F.log_softmax)):
        fn = (lambda f: lambda a, x: f(x, dim=a["dim"]))(f)
        case(f"{op}/f64_dimneg1_7x33", op, fn, [T([7, 33], dist=("u", -3, 3))], {"dim": -1})
        case(f"{op}/f64_dim0_7x9", op, fn, [T([7, 9], dist=("u", -3, 3))], {"dim": 0})
        case(f"{op}/f64_dim1_3x7x5", op, fn, [T([3, 7, 5], dist=("u", -3, 3))], {"dim": 1})
        case(f"{op}/f64_large_neg_inf_dimneg1", op, fn, [T([4, 7], data=big)], {"dim": -1})
        case(f"{op}/f64_large_neg_inf_dim0", op, fn, [T([4, 7], data=big)], {"dim": 0})
        case(f"{op}/f64_1x65", op, fn, [T([1, 65], dist=("u", -3, 3))], {"dim": -1})
        case(f"{op}/f64_size1_dim", op, fn, [T([7, 1], dist=("u", -3, 3))], {"dim": 1})
        case(f"{op}/f64_0d", op, fn, [T([])], {"dim": 0})
        case(f"{op}/f64_transposed_dimneg1", op, fn, [T([9, 7], dist=("u", -3, 3), view=V_T())], {"dim": -1})
        case(f"{op}/f64_expanded_dim0", op, fn, [T([1, 5], view=[["expand", [7, 5]]])], {"dim": 0})
        case(f"{op}/f32_large_neg_inf_dimneg1", op, fn, [T([4, 7], "float32", data=big)], {"dim": -1})
        case(f"{op}/f32_dimneg1_2x65", op, fn, [T([2, 65], "float32", dist=("u", -3, 3))], {"dim": -1})
        case(f"{op}/special_all_neg_inf_row_f64", op, fn,
             [T([2, 3], data=[-INF, -INF, -INF, INF, 1.0, 0.0])], {"dim": -1}, diff=False)

    ce = lambda a, x, t: F.cross_entropy(x, t, reduction=a["reduction"], ignore_index=a["ignore_index"])
    nll = lambda a, x, t: F.nll_loss(x, t, reduction=a["reduction"], ignore_index=a["ignore_index"])
    tgt = [0, 4, 2, 2, 1, 3, 4]
    tgt_ign = [0, -100, 2, 4, -100, 3, 1]
    tgt_ign2 = [0, 2, 2, 4, 1, 2, 3]
    for op, fn, dist in (("cross_entropy", ce, ("u", -3, 3)), ("nll_loss", nll, ("u", -4, 0))):
        for red in ("mean", "sum", "none"):
            A = {"reduction": red, "ignore_index": -100}
            case(f"{op}/{red}/f64_7x5", op, fn, [T([7, 5], dist=dist), T([7], "int64", data=tgt)], A)
            case(f"{op}/{red}/f64_ignore_neg100", op, fn, [T([7, 5], dist=dist), T([7], "int64", data=tgt_ign)], A)
            case(f"{op}/{red}/f64_ignore_2", op, fn, [T([7, 5], dist=dist), T([7], "int64", data=tgt_ign2)],
                 {"reduction": red, "ignore_index": 2})
            case(f"{op}/{red}/f64_transposed_logits", op, fn,
                 [T([5, 7], dist=dist, view=V_T()), T([7], "int64", data=tgt)], A)
            case(f"{op}/{red}/f32_7x5", op, fn, [T([7, 5], "float32", dist=dist), T([7], "int64", data=tgt)], A)
        A = {"reduction": "mean", "ignore_index": -100}
        case(f"{op}/mean/f64_1x65", op, fn, [T([1, 65], dist=dist), T([1], "int64", data=[64])], A)
        case(f"{op}/mean/f64_3x65", op, fn, [T([3, 65], dist=dist), T([3], "int64", data=[64, 0, 33])], A)
        case(f"{op}/mean/f64_step_sliced_logits", op, fn,
             [T([7, 10], dist=dist, view=[["slice", 1, 0, 10, 2]]), T([7], "int64", data=tgt)], A)
        case(f"{op}/sum/f64_expanded_logits", op, fn,
             [T([1, 5], dist=dist, view=[["expand", [7, 5]]]), T([7], "int64", data=tgt)],
             {"reduction": "sum", "ignore_index": -100})
        case(f"{op}/mean/special_all_ignored_f64", op, fn,
             [T([3, 5], dist=dist), T([3], "int64", data=[-100, -100, -100])], A, diff=False)
    case("cross_entropy/mean/f64_large_logits", "cross_entropy", ce,
         [T([4, 7], data=[v if v != -INF else -1e4 for v in big]), T([4], "int64", data=[1, 0, 2, 6])],
         {"reduction": "mean", "ignore_index": -100})
    case("cross_entropy/mean/f32_large_logits", "cross_entropy", ce,
         [T([4, 7], "float32", data=[v if v != -INF else -1e4 for v in big]), T([4], "int64", data=[1, 0, 2, 6])],
         {"reduction": "mean", "ignore_index": -100})

    mse = lambda a, x, y: F.mse_loss(x, y, reduction=a["reduction"])
    for red in ("mean", "sum", "none"):
        A = {"reduction": red}
        case(f"mse_loss/{red}/f64_7x5", "mse_loss", mse, [T([7, 5]), T([7, 5])], A)
        case(f"mse_loss/{red}/f64_0d", "mse_loss", mse, [T([]), T([])], A)
        case(f"mse_loss/{red}/f64_transposed_expanded", "mse_loss", mse,
             [T([5, 7], view=V_T()), T([7, 1], view=[["expand", [7, 5]]])], A)
        case(f"mse_loss/{red}/f32_1x65", "mse_loss", mse, [T([1, 65], "float32"), T([1, 65], "float32")], A)
    case("mse_loss/mean/f64_target_no_grad", "mse_loss", mse, [T([7, 5]), T([7, 5], rg=False)], {"reduction": "mean"})

    def bce(a, x, t, w=None):
        return F.binary_cross_entropy_with_logits(x, t, weight=w, reduction=a["reduction"])

    logits = [0.3, -1.2, 2.0, 0.7, -0.4, 30.0, -30.0, 100.0, -100.0, 5.5, -5.5, 0.0, 1e-3, -2.5, 4.0]
    for red in ("mean", "sum", "none"):
        A = {"reduction": red}
        case(f"binary_cross_entropy_with_logits/{red}/f64_soft_targets", "binary_cross_entropy_with_logits", bce,
             [T([7, 5], dist=("u", -6, 6)), T([7, 5], dist=("u", 0, 1))], A)
        case(f"binary_cross_entropy_with_logits/{red}/f64_hard_targets_extreme", "binary_cross_entropy_with_logits", bce,
             [T([3, 5], data=logits), T([3, 5], dist=("d", [0.0, 1.0]))], A)
        case(f"binary_cross_entropy_with_logits/{red}/f64_weight", "binary_cross_entropy_with_logits", bce,
             [T([7, 5], dist=("u", -6, 6)), T([7, 5], dist=("u", 0, 1)), T([7, 5], dist=("u", 0.1, 2), rg=False)], A)
        case(f"binary_cross_entropy_with_logits/{red}/f64_weight_broadcast_1x5", "binary_cross_entropy_with_logits", bce,
             [T([7, 5], dist=("u", -6, 6)), T([7, 5], dist=("u", 0, 1)), T([1, 5], dist=("u", 0.1, 2), rg=False)], A)
        case(f"binary_cross_entropy_with_logits/{red}/f64_0d", "binary_cross_entropy_with_logits", bce,
             [T([], dist=("u", -6, 6)), T([], dist=("u", 0, 1))], A)
        case(f"binary_cross_entropy_with_logits/{red}/f64_transposed", "binary_cross_entropy_with_logits", bce,
             [T([5, 7], dist=("u", -6, 6), view=V_T()), T([7, 5], dist=("u", 0, 1)),
              T([5, 1], dist=("u", 0.1, 2), rg=False, view=[["transpose", 0, 1], ["expand", [7, 5]]])], A)
        case(f"binary_cross_entropy_with_logits/{red}/f32_weight_1x65", "binary_cross_entropy_with_logits", bce,
             [T([1, 65], "float32", dist=("u", -6, 6)), T([1, 65], "float32", dist=("u", 0, 1)),
              T([1, 65], "float32", dist=("u", 0.1, 2), rg=False)], A)
    case("binary_cross_entropy_with_logits/mean/f64_target_no_grad", "binary_cross_entropy_with_logits", bce,
         [T([7, 5], dist=("u", -6, 6)), T([7, 5], dist=("u", 0, 1), rg=False)], {"reduction": "mean"})

    emb = lambda a, w, i: F.embedding(i, w)
    case("embedding/f64_1d_repeats", "embedding", emb, [T([10, 4]), T([7], "int64", data=[3, 0, 3, 9, 3, 1, 0])])
    case("embedding/f64_2d_indices", "embedding", emb, [T([10, 4]), T([2, 3], "int64", data=[9, 1, 1, 0, 5, 9])])
    case("embedding/f64_0d_index", "embedding", emb, [T([10, 4]), T([], "int64", data=7)])
    case("embedding/f64_odd_7x33", "embedding", emb, [T([7, 33]), T([5], "int64", data=[6, 6, 0, 2, 6])])
    case("embedding/f64_transposed_weight", "embedding", emb,
         [T([4, 10], view=V_T()), T([5], "int64", data=[2, 2, 9, 0, 4])])
    case("embedding/f32_repeats", "embedding", emb, [T([10, 9], "float32"), T([4], "int64", data=[1, 8, 1, 1])])

    def ln(a, x, w=None, b=None):
        return F.layer_norm(x, a["normalized_shape"], weight=w, bias=b, eps=a["eps"])

    L = lambda ns: {"normalized_shape": ns, "eps": 1e-5}
    case("layer_norm/f64_last_dim_affine_3x33", "layer_norm", ln, [T([3, 33], dist=("u", -2, 2)), T([33], dist=("u", 0.5, 1.5)), T([33])], L([33]))
    case("layer_norm/f64_last_dim_plain_7x33", "layer_norm", ln, [T([7, 33], dist=("u", -2, 2))], L([33]))
    case("layer_norm/f64_last_two_affine_3x7x5", "layer_norm", ln, [T([3, 7, 5], dist=("u", -2, 2)), T([7, 5], dist=("u", 0.5, 1.5)), T([7, 5])], L([7, 5]))
    case("layer_norm/f64_last_two_plain_3x7x5", "layer_norm", ln, [T([3, 7, 5], dist=("u", -2, 2))], L([7, 5]))
    case("layer_norm/f64_1d_input_65", "layer_norm", ln, [T([65], dist=("u", -2, 2)), T([65], dist=("u", 0.5, 1.5)), T([65])], L([65]))
    case("layer_norm/f64_tiny_variance", "layer_norm", ln,
         [T([2, 5], data=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.001, 0.999, 1.0, 1.0005]), T([5], dist=("u", 0.5, 1.5)), T([5])], L([5]))
    case("layer_norm/f64_transposed_affine", "layer_norm", ln,
         [T([5, 7], dist=("u", -2, 2), view=V_T()), T([5], dist=("u", 0.5, 1.5)), T([10], view=[["slice", 0, 0, 10, 2]])], L([5]))
    case("layer_norm/f64_expanded_input", "layer_norm", ln, [T([1, 5], dist=("u", -2, 2), view=[["expand", [3, 5]]])], L([5]))
    case("layer_norm/f32_last_dim_affine_2x65", "layer_norm", ln,
         [T([2, 65], "float32", dist=("u", -2, 2)), T([65], "float32", dist=("u", 0.5, 1.5)), T([65], "float32")], L([65]))
    case("layer_norm/f32_last_two_plain_3x7x5", "layer_norm", ln, [T([3, 7, 5], "float32", dist=("u", -2, 2))], L([7, 5]))

    lin = lambda a, x, w, b=None: F.linear(x, w, b)
    case("linear/f64_bias_7x5_4x5", "linear", lin, [T([7, 5]), T([4, 5]), T([4])])
    case("linear/f64_nobias_7x5_4x5", "linear", lin, [T([7, 5]), T([4, 5])])
    case("linear/f64_bias_7x33_5x33", "linear", lin, [T([7, 33]), T([5, 33]), T([5])])
    case("linear/f64_batched_2x3x5", "linear", lin, [T([2, 3, 5]), T([4, 5]), T([4])])
    case("linear/f64_1d_input", "linear", lin, [T([5]), T([4, 5]), T([4])])
    case("linear/f64_transposed_weight", "linear", lin, [T([7, 5]), T([5, 4], view=V_T()), T([4])])
    case("linear/f64_expanded_input", "linear", lin, [T([1, 5], view=[["expand", [7, 5]]]), T([4, 5]), T([4])])
    case("linear/f32_bias_3x33_5x33", "linear", lin, [T([3, 33], "float32"), T([5, 33], "float32"), T([5], "float32")])


# ==========================================================================

def write_family(fam, generator):
    """Write the cases of family fam to <repo>/testdata/torch/<fam>.json,
    naming generator (the script) in the header: for scripts that make one
    family of their own (conv.py, attention.py)."""
    header = {"torch": torch.__version__, "torch_package": torch_package_version(), "generator": generator, "family": fam}
    lines = [json.dumps(c, separators=(",", ":"), allow_nan=False) for c in CASES[fam]]
    text = json.dumps(header, separators=(",", ":"))[:-1] + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)
    path = os.path.join(OUT_DIR, fam + ".json")
    with open(path, "w") as f:
        f.write(text)
    print(f"{path}: {len(lines)} cases, {len(text)} bytes", file=sys.stderr)


def main():
    gens = [gen_elementwise, gen_reduce, gen_linalg, gen_index, gen_nn, gen_shape]
    for gfn in gens:
        gfn()
    os.makedirs(OUT_DIR, exist_ok=True)
    header = {
        "torch": torch.__version__,
        "torch_package": torch_package_version(),
        "generator": "tools/torchref/gen.py",
    }
    total = 0
    for fam, cases in CASES.items():
        path = os.path.join(OUT_DIR, fam + ".json")
        head = dict(header)
        head["family"] = fam
        # One case per line keeps diffs readable.
        lines = [json.dumps(c, separators=(",", ":"), allow_nan=False) for c in cases]
        text = json.dumps(head, separators=(",", ":"))[:-1] + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"
        json.loads(text)  # sanity
        with open(path, "w") as f:
            f.write(text)
        total += len(text)
        print(f"{path}: {len(cases)} cases, {len(text)} bytes", file=sys.stderr)
    print(f"total {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
