# Independent implementation of data.Permutation's documented algorithm
# (PCG-DXSM as math/rand/v2's PCG, Fisher–Yates from the end, Lemire's
# bounded draws), from which TestPermutationIsFixed's values come.
# Run: python3 data/testdata/permutation.py
M, M64 = (1 << 128) - 1, (1 << 64) - 1
MUL = (2549297995355413924 << 64) | 4865540595714422341
INC = (6364136223846793005 << 64) | 1442695040888963407


class PCG:
    def __init__(self, seed1, seed2):
        self.state = (seed1 << 64) | seed2

    def uint64(self):
        self.state = (self.state * MUL + INC) & M
        hi, lo = self.state >> 64, self.state & M64
        hi ^= hi >> 32
        hi = (hi * 0xDA942042E4DD58B5) & M64
        hi ^= hi >> 48
        return (hi * (lo | 1)) & M64


def uniform(r, n):
    x = r.uint64() * n
    if x & M64 < n:
        thresh = (1 << 64) % n
        while x & M64 < thresh:
            x = r.uint64() * n
    return x >> 64


def permutation(seed, epoch, n):
    p, r = list(range(n)), PCG(seed, epoch)
    for i in range(n - 1, 0, -1):
        j = uniform(r, i + 1)
        p[i], p[j] = p[j], p[i]
    return p


print(permutation(1, 0, 10))
print(permutation(42, 3, 12))
