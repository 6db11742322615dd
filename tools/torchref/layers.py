#!/usr/bin/env python3
"""Generate PyTorch reference vectors for Tessera's nn layers.

Run from anywhere (writes <repo>/testdata/torch/layers.json):

    /usr/bin/python3 tools/torchref/layers.py

Needs PyTorch (Debian's python3-torch 1.13, CPU); tests never need it. The
cases share the format of gen.py (README.md). Each case builds one torch.nn
module in float64 (initialised by torch under the case's seed, then every
parameter moved by 0.2·N(0, 1) so that unit weights and zero biases are not
special), optionally runs it in training mode on "train_steps" inputs, then
runs it once in "mode" (train | eval) and backpropagates.

  op      the module: batchnorm1d, batchnorm2d, groupnorm, rnn_cell, gru_cell,
          rnn, gru, lstm, mha, transformer_encoder_layer, transformer_encoder, gelu,
          silu, leaky_relu.
  attrs   the constructor's keyword arguments; "args" (the names of the
          forward inputs, which come first in inputs), "state" (the
          state-dict names of the tensors that follow them in inputs, in
          state_dict order, values before the train steps), "train_steps"
          (the number of inputs after the state, each one forward pass in
          training mode before the measured one), "mode", "buffers_after"
          (state names whose values after the measured pass follow the
          forward outputs in outputs), and per op: "causal" (a causal mask
          built in the test: attn_mask / src_mask = triu(ones(L, S), 1) as
          bool), "need_weights", "average_attn_weights".
  outputs the forward outputs (rnn/gru: output, h_n; lstm: output, h_n, c_n;
          mha: output, weights;
          others one), then the buffers_after.
  grads   d(sum_i sum(outputs[i]·grad_outputs[i]))/d(input) for the float
          forward inputs and the parameters; null for masks and buffers.

Determinism: each case seeds torch and a torch.Generator with crc32(case
name); the script writes identical bytes when run twice.
"""

import json
import os
import sys
import zlib

import torch
from torch import nn

from gen import enc_tensor as enc, torch_package_version

torch.set_num_threads(1)

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CASES = []


def rnd(g, *shape, lo=-1.0, hi=1.0):
    return torch.rand(*shape, generator=g, dtype=torch.float64) * (hi - lo) + lo


def layer_case(name, op, make, attrs, args, call=None, mode="train", steps=(), buffers_after=(),
               stats=False):
    """make() builds the module; args(g) returns [(name, tensor)] forward
    inputs; call(m, {name: tensor}) returns a tuple of outputs (default:
    (m(x),));
    steps(g) returns the train-step inputs; stats randomises running
    statistics."""
    seed = zlib.crc32(name.encode())
    torch.manual_seed(seed)
    m = make().double()
    g = torch.Generator()
    g.manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))
        if stats:
            m.running_mean.copy_(rnd(g, *m.running_mean.shape))
            m.running_var.copy_(rnd(g, *m.running_var.shape, lo=0.5, hi=1.5))
            m.num_batches_tracked.fill_(7)
    xs = args(g)
    step_xs = steps(g) if steps else []
    state = {k: v.detach().clone() for k, v in m.state_dict().items()}
    params = dict(m.named_parameters())
    m.train()
    for x in step_xs:
        m(x)
    m.train(mode == "train")
    for _, x in xs:
        if x.is_floating_point():
            x.requires_grad_(True)
    call = call or (lambda mod, a: (mod(a["x"]),))
    outs = call(m, dict(xs))
    gouts = [torch.randn(o.shape, generator=g, dtype=o.dtype) for o in outs]
    sum((o * go).sum() for o, go in zip(outs, gouts)).backward()
    inputs, grads = [], []
    for _, x in xs:
        e = enc(x)
        e["requires_grad"] = x.requires_grad
        inputs.append(e)
        grads.append(enc(x.grad) if x.requires_grad else None)
    for k, v in state.items():
        e = enc(v)
        p = params.get(k)
        e["requires_grad"] = p is not None
        inputs.append(e)
        grads.append(enc(p.grad) if p is not None else None)
    inputs += [enc(x) for x in step_xs]
    after = m.state_dict()
    outputs = [enc(o) for o in outs] + [enc(after[k]) for k in buffers_after]
    attrs = dict(attrs, args=[n for n, _ in xs], state=list(state), train_steps=len(step_xs), mode=mode,
                 buffers_after=list(buffers_after))
    CASES.append({"name": name, "op": op, "attrs": attrs, "inputs": inputs, "outputs": outputs,
                  "grad_outputs": [enc(go) for go in gouts], "grads": grads})


def x_(*shape, scale=1.0, shift=0.0):
    return lambda g: [("x", rnd(g, *shape) * scale + shift)]


def gen_norms():
    bn_stats = ["running_mean", "running_var", "num_batches_tracked"]
    for name, op, cls, shape in [("batchnorm1d/f64_5x3", "batchnorm1d", nn.BatchNorm1d, (5, 3)),
                                 ("batchnorm1d/f64_4x3x7", "batchnorm1d", nn.BatchNorm1d, (4, 3, 7)),
                                 ("batchnorm2d/f64_2x3x5x4", "batchnorm2d", nn.BatchNorm2d, (2, 3, 5, 4))]:
        c = shape[1]
        layer_case(name + "/train", op, lambda: cls(c), {"num_features": c}, x_(*shape, scale=2, shift=0.5),
                   buffers_after=bn_stats)
        layer_case(name + "/eval", op, lambda: cls(c), {"num_features": c}, x_(*shape, scale=2), mode="eval",
                   stats=True)
        layer_case(name + "/steps_then_eval", op, lambda: cls(c, momentum=0.3), {"num_features": c, "momentum": 0.3},
                   x_(*shape), mode="eval", buffers_after=bn_stats,
                   steps=lambda g: [rnd(g, *shape) * (k + 1) + k for k in range(3)])
    layer_case("batchnorm2d/cumulative/f64_3x2x3x3", "batchnorm2d", lambda: nn.BatchNorm2d(2, momentum=None),
               {"num_features": 2, "momentum": None}, x_(3, 2, 3, 3), buffers_after=bn_stats,
               steps=lambda g: [rnd(g, 3, 2, 3, 3) + k for k in range(3)])
    layer_case("batchnorm1d/no_affine/f64_6x4", "batchnorm1d", lambda: nn.BatchNorm1d(4, affine=False, eps=1e-3),
               {"num_features": 4, "affine": False, "eps": 1e-3}, x_(6, 4), buffers_after=bn_stats)
    layer_case("batchnorm2d/no_running_stats/eval/f64_2x3x2x2", "batchnorm2d",
               lambda: nn.BatchNorm2d(3, track_running_stats=False), {"num_features": 3, "track_running_stats": False},
               x_(2, 3, 2, 2), mode="eval")
    layer_case("groupnorm/f64_2x6x5_g3", "groupnorm", lambda: nn.GroupNorm(3, 6),
               {"num_groups": 3, "num_channels": 6}, x_(2, 6, 5, scale=3))
    layer_case("groupnorm/f64_2x4x3x3_g2", "groupnorm", lambda: nn.GroupNorm(2, 4),
               {"num_groups": 2, "num_channels": 4}, x_(2, 4, 3, 3))
    layer_case("groupnorm/no_affine/f64_3x4x5_g4", "groupnorm", lambda: nn.GroupNorm(4, 4, eps=1e-3, affine=False),
               {"num_groups": 4, "num_channels": 4, "eps": 1e-3, "affine": False}, x_(3, 4, 5))


def cell_call(m, a):
    return (m(a["x"], a.get("h")),)


def seq_call(m, a):
    if isinstance(m, nn.LSTM):
        out, (h, c) = m(a["x"], (a["h"], a["c"]) if "h" in a else None)
        return out, h, c
    return m(a["x"], a.get("h"))


def packed_call(lengths, batch_first=False):
    """Runs a recurrent layer over x packed with lengths (enforce_sorted=False)
    and returns the padded output and the final states, as seq_call."""
    def call(m, a):
        pack = nn.utils.rnn.pack_padded_sequence(a["x"], lengths, batch_first=batch_first, enforce_sorted=False)
        h = (a["h"], a["c"]) if isinstance(m, nn.LSTM) and "h" in a else a.get("h")
        out, hn = m(pack, h)
        out = nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)[0]
        return (out,) + (tuple(hn) if isinstance(m, nn.LSTM) else (hn,))
    return call


def gen_recurrent():
    def with_h(x_shape, h_shape):
        return lambda g: [("x", rnd(g, *x_shape)), ("h", rnd(g, *h_shape))]
    layer_case("gru_cell/f64_3x4_h5", "gru_cell", lambda: nn.GRUCell(4, 5), {"input_size": 4, "hidden_size": 5},
               with_h((3, 4), (3, 5)), call=cell_call)
    layer_case("gru_cell/no_state/f64_3x4_h5", "gru_cell", lambda: nn.GRUCell(4, 5),
               {"input_size": 4, "hidden_size": 5}, x_(3, 4), call=cell_call)
    layer_case("gru_cell/unbatched/f64_4_h3", "gru_cell", lambda: nn.GRUCell(4, 3),
               {"input_size": 4, "hidden_size": 3}, with_h((4,), (3,)), call=cell_call)
    layer_case("rnn_cell/relu/f64_3x4_h5", "rnn_cell", lambda: nn.RNNCell(4, 5, nonlinearity="relu"),
               {"input_size": 4, "hidden_size": 5, "nonlinearity": "relu"}, with_h((3, 4), (3, 5)), call=cell_call)
    for kind, cls in [("rnn", nn.RNN), ("gru", nn.GRU)]:
        layer_case(f"{kind}/2_layers/f64_6x3x4_h5", kind, lambda: cls(4, 5, 2),
                   {"input_size": 4, "hidden_size": 5, "num_layers": 2}, with_h((6, 3, 4), (2, 3, 5)),
                   call=seq_call)
        layer_case(f"{kind}/1_layer_no_state/f64_5x2x3_h4", kind, lambda: cls(3, 4),
                   {"input_size": 3, "hidden_size": 4, "num_layers": 1}, x_(5, 2, 3), call=seq_call)
    layer_case("rnn/relu_3_layers/f64_4x2x3_h3", "rnn", lambda: nn.RNN(3, 3, 3, nonlinearity="relu"),
               {"input_size": 3, "hidden_size": 3, "num_layers": 3, "nonlinearity": "relu"},
               with_h((4, 2, 3), (3, 2, 3)), call=seq_call)
    layer_case("gru/batch_first/f64_2x5x3_h4", "gru", lambda: nn.GRU(3, 4, 2, batch_first=True),
               {"input_size": 3, "hidden_size": 4, "num_layers": 2, "batch_first": True},
               with_h((2, 5, 3), (2, 2, 4)), call=seq_call)
    layer_case("rnn/unbatched/f64_5x3_h4", "rnn", lambda: nn.RNN(3, 4, 2),
               {"input_size": 3, "hidden_size": 4, "num_layers": 2}, with_h((5, 3), (2, 4)), call=seq_call)
    layer_case("lstm/batch_first_dropout_eval/f64_2x4x3_h5", "lstm", lambda: nn.LSTM(3, 5, 2, batch_first=True, dropout=0.3),
               {"input_size": 3, "hidden_size": 5, "num_layers": 2, "batch_first": True, "dropout": 0.3},
               lambda g: [("x", rnd(g, 2, 4, 3)), ("h", rnd(g, 2, 2, 5)), ("c", rnd(g, 2, 2, 5))], call=seq_call,
               mode="eval")
    layer_case("lstm/3_layers_no_state/f64_4x2x3_h3", "lstm", lambda: nn.LSTM(3, 3, 3),
               {"input_size": 3, "hidden_size": 3, "num_layers": 3}, x_(4, 2, 3), call=seq_call)
    # Packed batches: sequences of lengths in any order (PackPadded,
    # ForwardPacked, Pad); the padded steps of x get zero gradients.
    layer_case("lstm/packed/f64_5x3x4_h5", "lstm", lambda: nn.LSTM(4, 5, 2),
               {"input_size": 4, "hidden_size": 5, "num_layers": 2, "lengths": [3, 5, 1]},
               lambda g: [("x", rnd(g, 5, 3, 4)), ("h", rnd(g, 2, 3, 5)), ("c", rnd(g, 2, 3, 5))],
               call=packed_call([3, 5, 1]))
    layer_case("gru/packed_batch_first_no_state/f64_4x6x3_h4", "gru", lambda: nn.GRU(3, 4, 1, batch_first=True),
               {"input_size": 3, "hidden_size": 4, "num_layers": 1, "batch_first": True, "lengths": [2, 6, 6, 4]},
               x_(4, 6, 3), call=packed_call([2, 6, 6, 4], batch_first=True))
    layer_case("rnn/packed/f64_4x2x3_h3", "rnn", lambda: nn.RNN(3, 3, 2),
               {"input_size": 3, "hidden_size": 3, "num_layers": 2, "lengths": [4, 2]},
               with_h((4, 2, 3), (2, 2, 3)), call=packed_call([4, 2]))


def causal(l, s):
    return torch.triu(torch.ones(l, s, dtype=torch.bool), 1)


def mha_call(m, a):
    q = a.get("query", a.get("x"))
    k, v = a.get("key", q), a.get("value", q)
    kw = {n: a[n] for n in ("attn_mask", "key_padding_mask") if n in a}
    if m.causal:
        seq = 1 if m.batch_first and q.dim() == 3 else 0
        kw["attn_mask"] = causal(q.shape[seq], k.shape[seq])
    out, w = m(q, k, v, average_attn_weights=m.average, **kw)
    return out, w


def mha(e, h, causal_mask=False, average=True, **kw):
    def make():
        m = nn.MultiheadAttention(e, h, **kw)
        m.causal, m.average = causal_mask, average
        return m
    return make


def padding(g, n, s):
    p = torch.rand(n, s, generator=g) < 0.3
    p[:, 0] = False  # every row keeps a key
    return p


def gen_attention():
    E, H = 6, 2
    layer_case("mha/self/batch_first_causal_padding/f64_2x5x6_h2", "mha", mha(E, H, True, batch_first=True),
               {"embed_dim": E, "num_heads": H, "batch_first": True, "causal": True},
               lambda g: [("x", rnd(g, 2, 5, E)), ("key_padding_mask", padding(g, 2, 5))], call=mha_call)
    layer_case("mha/cross/float_mask/f64_L4_S3_N2", "mha", mha(E, H), {"embed_dim": E, "num_heads": H},
               lambda g: [("query", rnd(g, 4, 2, E)), ("key", rnd(g, 3, 2, E)), ("value", rnd(g, 3, 2, E)),
                          ("attn_mask", rnd(g, 4, 3))], call=mha_call)
    layer_case("mha/cross/per_head_bool_3d_mask/f64_L3_S4_N2_h3", "mha", mha(E, 3, average=False),
               {"embed_dim": E, "num_heads": 3, "average_attn_weights": False},
               lambda g: [("query", rnd(g, 3, 2, E)), ("key", rnd(g, 4, 2, E)), ("value", rnd(g, 4, 2, E)),
                          ("attn_mask", torch.rand(6, 3, 4, generator=g) < 0.25)], call=mha_call)
    layer_case("mha/kdim_vdim/batch_first_padding/f64_N2_L3_S5", "mha", mha(E, H, kdim=4, vdim=3, batch_first=True),
               {"embed_dim": E, "num_heads": H, "kdim": 4, "vdim": 3, "batch_first": True},
               lambda g: [("query", rnd(g, 2, 3, E)), ("key", rnd(g, 2, 5, 4)), ("value", rnd(g, 2, 5, 3)),
                          ("key_padding_mask", padding(g, 2, 5))], call=mha_call)
    layer_case("mha/no_bias/unbatched/f64_L3_S3", "mha", mha(4, 1, bias=False),
               {"embed_dim": 4, "num_heads": 1, "bias": False},
               lambda g: [("query", rnd(g, 3, 4)), ("key", rnd(g, 3, 4)), ("value", rnd(g, 3, 4))], call=mha_call)


def gen_transformer():
    d, h = 8, 2
    base = {"d_model": d, "nhead": h, "dim_feedforward": 12, "dropout": 0.0}

    def tel(**kw):
        return lambda: nn.TransformerEncoderLayer(**dict(base, **kw))

    def tcall(causal_mask):
        def call(m, a):
            x = a["x"]
            layer = m if isinstance(m, nn.TransformerEncoderLayer) else m.layers[0]
            l = x.shape[1 if layer.self_attn.batch_first else 0]
            kw = {}
            if causal_mask:
                kw["src_mask" if m is layer else "mask"] = causal(l, l)
            if "key_padding_mask" in a:
                kw["src_key_padding_mask"] = a["key_padding_mask"]
            return (m(x, **kw),)
        return call

    layer_case("transformer_encoder_layer/pre_norm_gelu_causal/f64_2x5x8", "transformer_encoder_layer",
               tel(activation="gelu", norm_first=True, batch_first=True),
               dict(base, activation="gelu", norm_first=True, batch_first=True, causal=True),
               lambda g: [("x", rnd(g, 2, 5, d)), ("key_padding_mask", padding(g, 2, 5))], call=tcall(True))
    layer_case("transformer_encoder_layer/post_norm_relu/f64_4x3x8", "transformer_encoder_layer", tel(),
               dict(base), lambda g: [("x", rnd(g, 4, 3, d))], call=tcall(False))
    layer_case("transformer_encoder_layer/pre_norm_dropout_eval/f64_3x2x8", "transformer_encoder_layer",
               tel(dropout=0.1, norm_first=True), dict(base, dropout=0.1, norm_first=True),
               lambda g: [("x", rnd(g, 3, 2, d))], call=tcall(False), mode="eval")
    layer_case("transformer_encoder/2_layers_pre_norm_final_norm_causal/f64_2x5x8", "transformer_encoder",
               lambda: nn.TransformerEncoder(tel(norm_first=True, batch_first=True, activation="gelu")(), 2,
                                             norm=nn.LayerNorm(d), enable_nested_tensor=False),
               dict(base, norm_first=True, batch_first=True, activation="gelu", num_layers=2, norm=True, causal=True),
               lambda g: [("x", rnd(g, 2, 5, d)), ("key_padding_mask", padding(g, 2, 5))], call=tcall(True))


def gen_activations():
    layer_case("gelu/tanh/f64_3x5", "gelu", lambda: nn.GELU(approximate="tanh"), {"approximate": "tanh"},
               x_(3, 5, scale=3))
    layer_case("gelu/erf/f64_3x5", "gelu", lambda: nn.GELU(), {"approximate": "none"}, x_(3, 5, scale=3))
    layer_case("silu/f64_3x5", "silu", lambda: nn.SiLU(), {}, x_(3, 5, scale=3))
    layer_case("leaky_relu/f64_4x5", "leaky_relu", lambda: nn.LeakyReLU(0.2), {"negative_slope": 0.2},
               x_(4, 5, scale=3))


def main():
    gen_norms()
    gen_recurrent()
    gen_attention()
    gen_transformer()
    gen_activations()
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    head = {"torch": torch.__version__, "torch_package": torch_package_version(),
            "generator": "tools/torchref/layers.py", "family": "layers"}
    lines = [json.dumps(c, separators=(",", ":"), allow_nan=False) for c in CASES]
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"
    json.loads(text)
    path = os.path.join(REPO, "testdata", "torch", "layers.json")
    with open(path, "w") as f:
        f.write(text)
    print(f"{path}: {len(CASES)} cases, {len(text)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
