#!/usr/bin/env python3
"""Generate PyTorch reference vectors for variable-length attention.

Run from anywhere (writes <repo>/testdata/torch/attention.json):

    /usr/bin/python3 tools/torchref/attention.py

Uses gen.py's case machinery (see README.md). Op
scaled_dot_product_attention: inputs q, k, v of shape (N, H, D) holding
sequences packed one after another, attrs offsets (the segments' starts
and N, as FlashAttention's cu_seqlens), causal and scale (null: 1/sqrt(D)).
PyTorch 1.13 has no F.scaled_dot_product_attention, so each segment's
reference is the explicit softmax(Q K^T * scale + mask) V, the mask -inf
above the diagonal when causal, computed in the inputs' dtype (float64
cases are the float64 reference); outputs and the gradients of q, k, v.
Deterministic as gen.py.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import gen  # noqa: E402
from gen import T, case, family, f32  # noqa: E402


def attention(a, q, k, v):
    offs, causal = a["offsets"], a["causal"]
    scale = a["scale"] if a["scale"] is not None else 1.0 / math.sqrt(q.shape[2])
    outs = []
    for s in range(len(offs) - 1):
        lo, hi = offs[s], offs[s + 1]
        qs, ks, vs = (t[lo:hi].transpose(0, 1) for t in (q, k, v))  # (H, L, D)
        sc = qs @ ks.transpose(1, 2) * scale
        if causal:
            L = hi - lo
            sc = sc + torch.full((L, L), float("-inf"), dtype=sc.dtype).triu(1)
        outs.append((torch.softmax(sc, dim=-1) @ vs).transpose(0, 1))
    return torch.cat(outs, 0)


def attention_cases():
    # (name, lengths, heads, head size, causal, scale)
    cases = [
        ("one_7_h1_d3", [7], 1, 3, False, None),
        ("ragged_1_7_33_h2_d5", [1, 7, 33], 2, 5, False, None),
        ("ragged_1_7_33_h2_d5_causal", [1, 7, 33], 2, 5, True, None),
        ("ragged_5_0_9_h3_d4_causal_scale", [5, 0, 9], 3, 4, True, 0.3),
        ("dense_3x6_h2_d8_causal", [6, 6, 6], 2, 8, True, None),
    ]
    for nm, lens, h, d, causal, scale in cases:
        offs = [0]
        for l in lens:
            offs.append(offs[-1] + l)
        a = {"offsets": offs, "causal": causal, "scale": scale}
        n = offs[-1]
        ins = [T([n, h, d], dist=("u", -2.0, 2.0)) for _ in range(3)]
        case(f"scaled_dot_product_attention/f64_{nm}", "scaled_dot_product_attention", attention, ins, a)
        case(f"scaled_dot_product_attention/f32_{nm}", "scaled_dot_product_attention", attention,
             [f32(T([n, h, d], dist=("u", -2.0, 2.0))) for _ in range(3)], a)


def main():
    family("attention")
    attention_cases()
    gen.CASES = {"attention": gen.CASES["attention"]}
    gen.write_family("attention", "tools/torchref/attention.py")


if __name__ == "__main__":
    main()
