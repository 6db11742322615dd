#!/usr/bin/env python3
"""PyTorch baseline for Tessera's benchmarks (bench/bench_test.go): the same
shapes, timed the same way, printed as rates.

Run with Debian's interpreter (python3-torch 1.13, CPU) and
libopenblas0-pthread installed; two threads, as on the CI machine:

    /usr/bin/python3 bench/torch_bench.py
"""
import time

import torch

torch.set_num_threads(2)
torch.manual_seed(0)


def rate(fn, work, unit, min_time=2.0):
    fn()  # warm up
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time and n >= 3:
            break
    per = elapsed / n
    return per, work / per, unit


def report(name, per, value, unit):
    print(f"{name:40s} {per * 1e3:10.3f} ms/op {value:12.2f} {unit}")


def main():
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"BLAS: {torch.__config__.show().split('BLAS_INFO=')[1].split(',')[0] if 'BLAS_INFO=' in torch.__config__.show() else '?'}")
    for n in (256, 512, 1024):
        a, b = torch.randn(n, n), torch.randn(n, n)
        report(f"GEMM n={n}", *rate(lambda: a @ b, 2 * n ** 3 / 1e9, "GFLOP/s"))
    n16 = 16 << 20
    x, y = torch.randn(n16), torch.randn(n16)
    report("Add16M", *rate(lambda: x + y, 12 * n16 / 1e9, "GB/s"))
    report("Sum16M", *rate(lambda: x.sum(), 4 * n16 / 1e9, "GB/s"))
    m = torch.randn(4096, 1024)
    report("Softmax 4096x1024", *rate(lambda: torch.softmax(m, -1), 8 * 4096 * 1024 / 1e9, "GB/s"))

    sizes = [784, 512, 512, 10]
    params = []
    for i in range(len(sizes) - 1):
        params.append((torch.randn(sizes[i], sizes[i + 1]) * 0.05).requires_grad_())
        params.append(torch.zeros(sizes[i + 1]).requires_grad_())
    xb = torch.randn(256, 784)
    yb = torch.randint(0, 10, (256,))

    def step():
        h = xb
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i + 2 < len(params):
                h = h.relu()
        loss = -h.log_softmax(1).gather(1, yb.unsqueeze(1)).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-0.01)
                p.grad = None

    flops = 3 * 2 * 256 * (784 * 512 + 512 * 512 + 512 * 10) / 1e9
    per, gf, unit = rate(step, flops, "GFLOP/s")
    report("MLPStep batch=256", per, gf, unit)
    print(f"{'MLPStep batch=256':40s} {1 / per:10.2f} steps/s")


if __name__ == "__main__":
    main()
