#!/usr/bin/env python3
"""Generate PyTorch's printed form of tensors, for Tessera's String.

Run from anywhere (writes <repo>/testdata/torch/format.json):

    /usr/bin/python3 tools/torchref/format.py

Needs PyTorch (Debian's python3-torch 1.13, CPU); tests never need it.
The file is {"cases": [...]}, as gen.py's files; each case is {"op":
"repr", "name", "dtype" (float32|float64|int32|bool), "shape",
"data" (the values, row-major, as Python's repr strings so that nan and
inf survive JSON), "repr" (repr(tensor) with "torch.<dtype>" written as
Tessera writes dtypes, "float64"), "gpu_repr" (the same tensor as PyTorch
would print it on a device 'gpu:0': torch's own _tensor_str and
_add_suffixes with the device suffix first, as _str_intern orders them)}. Determinism: random cases seed a
torch.Generator with crc32(case name).
"""

import json
import os
import zlib

import torch

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(REPO, "testdata", "torch", "format.json")

DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.int32: "int32", torch.bool: "bool"}


def gen(name):
    return torch.Generator().manual_seed(zlib.crc32(name.encode()))


def cases():
    nan, inf = float("nan"), float("inf")
    yield "scalar", torch.tensor(3.25)
    yield "scalar_int_mode", torch.tensor(7.0)
    yield "vector", torch.tensor([1.5, -2.25, 3.0])
    yield "int_mode", torch.tensor([[1.0, -2.0], [30.0, 4.0]])
    yield "zeros", torch.zeros(2, 3)
    yield "negative_zero", torch.tensor([-0.0, 1.0])
    yield "nan_inf", torch.tensor([nan, inf, -inf, 1.5])
    yield "only_nan", torch.tensor([nan, nan])
    yield "sci_small", torch.tensor([1e-5, 0.5, 2.0])
    yield "sci_large", torch.tensor([1e9, 1.0])
    yield "sci_int_ratio", torch.tensor([1.0, 5000.0])
    yield "randn_2x3", torch.randn(2, 3, generator=gen("randn_2x3"))
    yield "randn_3d", torch.randn(2, 3, 4, generator=gen("randn_3d"))
    yield "randn_4d", torch.randn(2, 2, 2, 3, generator=gen("randn_4d"))
    yield "long_vector_wraps", torch.randn(40, generator=gen("long_vector_wraps"))
    yield "wide_matrix_wraps", torch.randn(3, 25, generator=gen("wide_matrix_wraps"))
    yield "exactly_threshold", torch.arange(1000, dtype=torch.float32).reshape(10, 100) / 7
    yield "summarized_vector", torch.arange(1001, dtype=torch.float32)
    yield "summarized_matrix", torch.randn(40, 50, generator=gen("summarized_matrix"))
    yield "summarized_3d", torch.randn(10, 10, 11, generator=gen("summarized_3d"))
    yield "summarized_one_long_dim", torch.randn(2, 600, generator=gen("summarized_one_long_dim"))
    yield "float64", torch.randn(2, 2, generator=gen("float64"), dtype=torch.float64)
    yield "int32", torch.tensor([[1, -20], [300, 4]], dtype=torch.int32)
    yield "int32_summarized", torch.arange(2000, dtype=torch.int32).reshape(20, 100)
    yield "bool", torch.tensor([[True, False], [False, True]])
    yield "empty_1d", torch.zeros(0)
    yield "empty_2d", torch.zeros(2, 0)
    yield "empty_int32", torch.zeros(0, dtype=torch.int32)


def tessera_dtype(r):
    for dt, s in DTYPES.items():
        r = r.replace(str(dt), s)
    return r


def gpu_repr(t):
    """repr(t) as if t lived on device 'gpu:0' (suffix order of _str_intern)."""
    ts = torch._tensor_str
    suffixes = ["device='gpu:0'"]
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append("size=" + str(tuple(t.shape)))
        if t.dtype != torch.get_default_dtype():
            suffixes.append("dtype=" + str(t.dtype))
        body = "[]"
    else:
        if t.dtype not in (torch.float32, torch.int64, torch.bool):
            suffixes.append("dtype=" + str(t.dtype))
        body = ts._tensor_str(t, len("tensor("))
    return tessera_dtype(ts._add_suffixes("tensor(" + body, suffixes, len("tensor("), False))


def main():
    out = []
    for name, t in cases():
        r = tessera_dtype(repr(t))
        out.append({
            "op": "repr",
            "name": name,
            "dtype": DTYPES[t.dtype],
            "shape": list(t.shape),
            "data": [repr(float(v)) for v in t.reshape(-1).tolist()],
            "repr": r,
            "gpu_repr": gpu_repr(t),
        })
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"cases": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
