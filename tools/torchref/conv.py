#!/usr/bin/env python3
"""Generate PyTorch reference vectors for convolution and pooling.

Run from anywhere (writes <repo>/testdata/torch/conv.json):

    /usr/bin/python3 tools/torchref/conv.py

Uses gen.py's case machinery, so the file has gen.py's case format (see
README.md): ops conv2d, conv_transpose2d, unfold, fold, max_pool2d,
avg_pool2d and adaptive_avg_pool2d with their PyTorch arguments as attrs
(pairs as 2-element lists), outputs, and the gradients of every float
input. max_pool2d cases return (values, indices); the indices are int64
there and Int32 in Tessera. Shapes are small and odd; float32 cases have
"f32" in the name. Deterministic as gen.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import gen  # noqa: E402
from gen import T, case, family, f32  # noqa: E402


def pair(v):
    return list(v) if isinstance(v, (list, tuple)) else [v, v]


def conv_cases():
    # (name, x shape, weight shape, bias, stride, padding, dilation, groups)
    convs = [
        ("1x1x5x5_k3", [1, 1, 5, 5], [2, 1, 3, 3], True, 1, 0, 1, 1),
        ("2x3x7x9_k3_pad1", [2, 3, 7, 9], [5, 3, 3, 3], True, 1, 1, 1, 1),
        ("2x3x9x7_k3x2_stride2x1_pad1x0", [2, 3, 9, 7], [4, 3, 3, 2], True, [2, 1], [1, 0], 1, 1),
        ("1x2x11x9_k3_dil2_pad2", [1, 2, 11, 9], [3, 2, 3, 3], False, 1, 2, 2, 1),
        ("2x4x7x7_k3_groups2_stride2", [2, 4, 7, 7], [6, 2, 3, 3], True, 2, 1, 1, 2),
        ("1x6x5x7_k1_depthwise", [1, 6, 5, 7], [6, 1, 3, 3], True, 1, 1, 1, 6),
        ("3x5x6x5_k2x3_stride3x2_dil2x1", [3, 5, 6, 5], [7, 5, 2, 3], True, [3, 2], [0, 1], [2, 1], 1),
        ("unbatched_3x7x5", [3, 7, 5], [2, 3, 3, 3], True, 1, 1, 1, 1),
    ]
    for nm, xs, ws, bias, st, pd, dl, g in convs:
        a = {"stride": pair(st), "padding": pair(pd), "dilation": pair(dl), "groups": g}
        ins = [T(xs), T(ws)] + ([T([ws[0]])] if bias else [])
        fn = lambda a, x, w, b=None: F.conv2d(x, w, b, a["stride"], a["padding"], a["dilation"], a["groups"])
        case(f"conv2d/f64_{nm}", "conv2d", fn, ins, a)
        case(f"conv2d/f32_{nm}", "conv2d", fn, [f32(t) for t in ins_copy(ins)], a)
    case("conv2d/f64_transposed_input", "conv2d",
         lambda a, x, w, b: F.conv2d(x, w, b, a["stride"], a["padding"], a["dilation"], a["groups"]),
         [T([2, 3, 7, 5], view=[["transpose", 2, 3]]), T([4, 3, 3, 3]), T([4])],
         {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1})

    # (name, x shape, weight shape, bias, stride, padding, output_padding, dilation, groups)
    tconvs = [
        ("1x2x4x5_k3", [1, 2, 4, 5], [2, 3, 3, 3], True, 1, 0, 0, 1, 1),
        ("2x3x5x4_k3_stride2_pad1_outpad1", [2, 3, 5, 4], [3, 2, 3, 3], True, 2, 1, 1, 1, 1),
        ("2x4x3x5_k2x3_stride3x2_groups2", [2, 4, 3, 5], [4, 3, 2, 3], False, [3, 2], [0, 1], [2, 1], 1, 2),
        ("1x3x5x5_k3_dil2", [1, 3, 5, 5], [3, 2, 3, 3], True, 1, 2, 0, 2, 1),
        # Output paddings of a stride or more, allowed below the dilation.
        ("1x2x4x5_k3_dil2_outpad1_pad1", [1, 2, 4, 5], [2, 3, 3, 3], True, 1, 1, 1, 2, 1),
        ("2x2x3x4_k2x3_stride2x1_dil3_outpad2x1", [2, 2, 3, 4], [2, 2, 2, 3], False, [2, 1], 0, [2, 1], 3, 1),
    ]
    for nm, xs, ws, bias, st, pd, op, dl, g in tconvs:
        a = {"stride": pair(st), "padding": pair(pd), "output_padding": pair(op), "dilation": pair(dl), "groups": g}
        ins = [T(xs), T(ws)] + ([T([ws[1] * g])] if bias else [])
        fn = lambda a, x, w, b=None: F.conv_transpose2d(x, w, b, a["stride"], a["padding"], a["output_padding"], a["groups"], a["dilation"])
        case(f"conv_transpose2d/f64_{nm}", "conv_transpose2d", fn, ins, a)
        case(f"conv_transpose2d/f32_{nm}", "conv_transpose2d", fn, [f32(t) for t in ins_copy(ins)], a)


def ins_copy(ins):
    return [T(t.shape, dtype=t.dtype, dist=t.dist, view=t.view) for t in ins]


def fold_cases():
    # (name, x shape, kernel, dilation, padding, stride)
    unfolds = [
        ("2x3x7x6_k3x2_stride2x1_pad1x0_dil1x2", [2, 3, 7, 6], [3, 2], [1, 2], [1, 0], [2, 1]),
        ("1x2x5x5_k2", [1, 2, 5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
    ]
    for nm, xs, k, d, p, s in unfolds:
        a = {"kernel_size": k, "dilation": d, "padding": p, "stride": s}
        case(f"unfold/f64_{nm}", "unfold", lambda a, x: F.unfold(x, a["kernel_size"], a["dilation"], a["padding"], a["stride"]), [T(xs)], a)
    folds = [
        ("2x18x16_into_7x6_k3x2_stride2x1_pad1x0_dil1x2", [2, 18, 16], [7, 6], [3, 2], [1, 2], [1, 0], [2, 1]),
        ("1x8x16_into_5x5_k2", [1, 8, 16], [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
    ]
    for nm, xs, size, k, d, p, s in folds:
        a = {"output_size": size, "kernel_size": k, "dilation": d, "padding": p, "stride": s}
        case(f"fold/f64_{nm}", "fold", lambda a, x: F.fold(x, a["output_size"], a["kernel_size"], a["dilation"], a["padding"], a["stride"]), [T(xs)], a)


def pool_cases():
    # (name, x shape, kernel, stride, padding, dilation, ceil_mode)
    maxes = [
        ("2x3x7x9_k3_stride2", [2, 3, 7, 9], [3, 3], [2, 2], [0, 0], [1, 1], False),
        ("1x2x7x7_k3_stride1_pad1", [1, 2, 7, 7], [3, 3], [1, 1], [1, 1], [1, 1], False),
        ("2x2x9x8_k3x2_stride2x3_pad1x1_dil2x1", [2, 2, 9, 8], [3, 2], [2, 3], [1, 1], [2, 1], False),
        ("1x3x8x7_k2_ceil", [1, 3, 8, 7], [2, 2], [2, 2], [0, 0], [1, 1], True),
        ("unbatched_3x5x7_k2", [3, 5, 7], [2, 2], [2, 2], [0, 0], [1, 1], False),
    ]
    for nm, xs, k, s, p, d, ceil in maxes:
        a = {"kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": ceil}
        fn = lambda a, x: F.max_pool2d(x, a["kernel_size"], a["stride"], a["padding"], a["dilation"], a["ceil_mode"], True)
        case(f"max_pool2d/f64_{nm}", "max_pool2d", fn, [T(xs)], a)
        case(f"max_pool2d/f32_{nm}", "max_pool2d", fn, [f32(T(xs))], a)
    # (name, x shape, kernel, stride, padding, ceil_mode, count_include_pad)
    avgs = [
        ("2x3x7x9_k3_stride2", [2, 3, 7, 9], [3, 3], [2, 2], [0, 0], False, True),
        ("1x2x7x7_k3_stride1_pad1", [1, 2, 7, 7], [3, 3], [1, 1], [1, 1], False, True),
        ("1x2x7x7_k3_stride2_pad1_exclude_pad", [1, 2, 7, 7], [3, 3], [2, 2], [1, 1], False, False),
        ("2x2x8x7_k3x2_stride2_pad1_ceil", [2, 2, 8, 7], [3, 2], [2, 2], [1, 1], True, True),
        ("1x3x8x7_k3_stride2_pad1_ceil_exclude_pad", [1, 3, 8, 7], [3, 3], [2, 2], [1, 1], True, False),
    ]
    for nm, xs, k, s, p, ceil, cip in avgs:
        a = {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": cip}
        fn = lambda a, x: F.avg_pool2d(x, a["kernel_size"], a["stride"], a["padding"], a["ceil_mode"], a["count_include_pad"])
        case(f"avg_pool2d/f64_{nm}", "avg_pool2d", fn, [T(xs)], a)
        case(f"avg_pool2d/f32_{nm}", "avg_pool2d", fn, [f32(T(xs))], a)
    adaptive = [
        ("2x3x7x9_to_3x4", [2, 3, 7, 9], [3, 4]),
        ("1x2x5x5_to_1x1", [1, 2, 5, 5], [1, 1]),
        ("1x2x6x4_to_3x2", [1, 2, 6, 4], [3, 2]),
        ("1x1x3x5_to_5x7", [1, 1, 3, 5], [5, 7]),
    ]
    for nm, xs, size in adaptive:
        a = {"output_size": size}
        fn = lambda a, x: F.adaptive_avg_pool2d(x, a["output_size"])
        case(f"adaptive_avg_pool2d/f64_{nm}", "adaptive_avg_pool2d", fn, [T(xs)], a)
        case(f"adaptive_avg_pool2d/f32_{nm}", "adaptive_avg_pool2d", fn, [f32(T(xs))], a)


def main():
    family("conv")
    conv_cases()
    fold_cases()
    pool_cases()
    gen.CASES = {"conv": gen.CASES["conv"]}
    gen.write_family("conv", "tools/torchref/conv.py")


if __name__ == "__main__":
    main()
