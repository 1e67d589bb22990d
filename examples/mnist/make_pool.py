#!/usr/bin/env python3
"""Write the canary pool of lenet5.yaml: the last 1,000 MNIST test images.

The tool draws the one-run audit's mislabel canaries from this file
(audit.canaries.pool): each is one of these images with its label changed
to another class. The program scores accuracy on the first 9,000 test
images only (--test 9000), so no canary is ever a test image. Pixels are
written as the program scales them (float32 pixel / 255), in their shortest
round-trip form, so the file is the same on every machine (lenet5.yaml pins
its SHA-256).

Usage: make_pool.py MNIST_DIR OUT.csv
"""
import gzip
import os
import sys

import numpy as np

FIRST, COUNT = 9000, 1000


def idx(path, dims):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if raw[:3] != b"\x00\x00\x08" or raw[3] != dims:
        sys.exit("make_pool.py: %s is not an idx file of %d-dimensional unsigned bytes" % (path, dims))
    shape = [int.from_bytes(raw[4 + 4 * k:8 + 4 * k], "big") for k in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    src, out = sys.argv[1], sys.argv[2]
    x = idx(os.path.join(src, "t10k-images-idx3-ubyte.gz"), 3)[FIRST:FIRST + COUNT].reshape(COUNT, -1)
    y = idx(os.path.join(src, "t10k-labels-idx1-ubyte.gz"), 1)[FIRST:FIRST + COUNT]
    px = x.astype(np.float32) / np.float32(255)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(",".join("x%d" % (j + 1) for j in range(px.shape[1])) + ",y\n")
        for row, label in zip(px, y):
            f.write(",".join(repr(float(v)) if v else "0" for v in row) + ",%d\n" % label)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
