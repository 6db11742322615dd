#!/usr/bin/python3
"""Read and write safetensors files with torch.frombuffer, json and struct.

Debian packages no Python safetensors module; this is the format in a page,
for Debian's python3-torch (1.13). It proves that PyTorch reads the files
package checkpoint writes, and that Tessera reads what PyTorch writes.

A file is an 8-byte little-endian header length n, n bytes of JSON mapping
each tensor's name to {"dtype", "shape", "data_offsets"} (plus an optional
"__metadata__" map of strings), then the tensors' raw little-endian bytes.

    reader.py show FILE                 names, dtypes, shapes, metadata
    reader.py copy IN OUT               read IN, write its tensors to OUT
    reader.py forward MODEL IN OUT      MODEL's "0.weight", "0.bias", "2.weight",
                                        "2.bias" into nn.Sequential(Linear, ReLU,
                                        Linear), applied to IN's "x"; OUT gets "y"
    reader.py export MODEL IO SIZES SEED  a seeded torch MLP of SIZES ("5,7,3"):
                                        its state_dict to MODEL, "x" and "y" to IO
    reader.py dtypes OUT                a tensor of each dtype PyTorch writes,
                                        with its float32/int32 value beside it

Several commands may run in one process (torch takes seconds to import),
separated by "+":  reader.py copy A B + show B
"""

import json
import math
import os
import struct
import sys

import torch
from torch import nn

DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16,
    "BF16": torch.bfloat16, "I64": torch.int64, "I32": torch.int32,
    "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8, "BOOL": torch.bool,
}
NAMES = {v: k for k, v in DTYPES.items()}


def _unique(pairs):
    """A JSON object hook that refuses a key given twice."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the header gives {k!r} twice")
        out[k] = v
    return out


def load(path):
    """Returns ({name: tensor}, {key: value}) read from the file at path."""
    if sys.byteorder != "little":
        raise RuntimeError("torch.frombuffer reads native byte order; this host is big-endian")
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise ValueError(f"{path}: {len(buf)} bytes, too short for the header length")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > len(buf) - 8:
        raise ValueError(f"{path}: header length {n} runs past the end of the {len(buf)}-byte file")
    header = json.loads(buf[8:8 + n].decode("utf-8"), object_pairs_hook=_unique)
    meta = header.pop("__metadata__", None) or {}
    data = memoryview(buf)[8 + n:]
    tensors, pos = {}, 0
    for name, info in sorted(header.items(), key=lambda kv: tuple(kv[1]["data_offsets"])):
        dtype, shape = DTYPES[info["dtype"]], info["shape"]
        begin, end = info["data_offsets"]
        size = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        if begin != pos or end - begin != size or end > len(data):
            raise ValueError(f"{path}: tensor {name!r}: data_offsets {info['data_offsets']} "
                             f"do not hold {shape} of {info['dtype']} at byte {pos}")
        if size == 0:
            tensors[name] = torch.empty(shape, dtype=dtype)
        else:
            tensors[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=dtype).reshape(shape)
        pos = end
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} bytes of trailing data")
    return tensors, meta


def save(path, tensors, meta=None):
    """Writes tensors (and meta, strings to strings) to path, atomically."""
    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    order = sorted(tensors, key=lambda k: (-tensors[k].element_size(), k))
    header, pos = {}, 0
    if meta:
        header["__metadata__"] = meta
    for name in order:
        t = tensors[name]
        nbytes = t.numel() * t.element_size()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [pos, pos + nbytes]}
        pos += nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for name in order:
            t = tensors[name]
            if t.numel():
                f.write(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def mlp(sizes):
    """nn.Sequential(Linear, ReLU, Linear, ...) of the given sizes."""
    layers = []
    for i in range(len(sizes) - 1):
        if i:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
    return nn.Sequential(*layers)


def run(cmd, args):
    """Runs one command of the docstring."""
    if cmd == "show":
        tensors, meta = load(args[0])
        for name, t in tensors.items():
            print(name, NAMES[t.dtype], list(t.shape))
        print("metadata", meta)
    elif cmd == "copy":
        save(args[1], *load(args[0]))
    elif cmd == "forward":
        state, _ = load(args[0])
        model = mlp([state["0.weight"].shape[1], state["0.weight"].shape[0], state["2.weight"].shape[0]])
        model.load_state_dict(state, strict=True)
        with torch.no_grad():
            y = model(load(args[1])[0]["x"])
        save(args[2], {"y": y}, {"torch": torch.__version__})
    elif cmd == "export":
        sizes = [int(s) for s in args[2].split(",")]
        torch.manual_seed(int(args[3]))
        model = mlp(sizes)
        x = torch.randn(4, sizes[0])
        with torch.no_grad():
            y = model(x)
        save(args[0], model.state_dict(), {"format": "pt", "sizes": args[2]})
        save(args[1], {"x": x, "y": y})
    elif cmd == "dtypes":
        i64 = torch.tensor([-2**31, -1, 0, 2**31 - 1])
        f16 = torch.tensor([1, -2, 65504, 2**-24, 2**-14, -0.0, math.inf, 1 / 3], dtype=torch.float16)
        bf16 = torch.tensor([[1, -3.140625], [1e38, 0.1]], dtype=torch.bfloat16)
        save(args[0], {
            "i64": i64, "i64_as_i32": i64.int(), "f16": f16, "f16_as_f32": f16.float(),
            "bf16": bf16, "bf16_as_f32": bf16.float(), "f64": torch.tensor([math.pi, -1e-300], dtype=torch.float64),
            "bool": torch.tensor([True, False, True]), "scalar": torch.tensor(2.5), "empty": torch.zeros(0, 3),
        }, {"torch": torch.__version__})
    else:
        sys.exit(f"unknown command {cmd!r}; see the docstring")


def main(argv):
    cmd = []
    for a in argv[1:] + ["+"]:
        if a != "+":
            cmd.append(a)
        elif cmd:
            run(cmd[0], cmd[1:])
            cmd = []


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv)
