#!/usr/bin/env python3
"""The split of `canopy msd-experiment --split-seed SEED` (SeededPermutation: Fisher-Yates with
std::mt19937_64 and UniformIndex; 80 % train), reproduced for the regression scripts: prints "train"
and "test" lines of "TAG IMAGE LABEL" (absolute paths), the first NTRAIN of the training part and the
first NTEST of the held-out part.
    msd-split.py DATASET_JSON NTRAIN NTEST [SEED=1]"""
import json, os, sys


class MT64:
    def __init__(self, seed):
        self.mt = [0] * 312; self.mt[0] = seed; self.i = 312
        for k in range(1, 312):
            self.mt[k] = (6364136223846793005 * (self.mt[k-1] ^ (self.mt[k-1] >> 62)) + k) & (2**64 - 1)

    def __call__(self):
        if self.i >= 312:
            for k in range(312):
                x = (self.mt[k] & 0xFFFFFFFF80000000) | (self.mt[(k + 1) % 312] & 0x7FFFFFFF)
                y = x >> 1
                if x & 1: y ^= 0xB5026F5AA96619E9
                self.mt[k] = self.mt[(k + 156) % 312] ^ y
            self.i = 0
        x = self.mt[self.i]; self.i += 1
        x ^= (x >> 29) & 0x5555555555555555; x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000; x ^= x >> 43
        return x & (2**64 - 1)


path, ntrain, ntest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
root = os.path.dirname(os.path.abspath(path))
entries = json.load(open(path))["training"]
order = list(range(len(entries))); rng = MT64(seed)
for i in range(len(order), 1, -1):
    j = int((rng() >> 11) * 2.0**-53 * i)
    order[i - 1], order[j] = order[j], order[i - 1]
cut = round(0.8 * len(order))
for tag, ks in (("train", order[:cut][:ntrain]), ("test", order[cut:][:ntest])):
    for k in ks:
        e = entries[k]
        print(tag, os.path.normpath(os.path.join(root, e["image"])), os.path.normpath(os.path.join(root, e["label"])))
