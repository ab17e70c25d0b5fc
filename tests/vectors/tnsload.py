"""tnsload.py: a tensor stream (.tns, zstd-compressed) read back as numpy
arrays for the bats tests, through specread.py (the independent reader
written from formats/tensor-stream.md).

    read(path)    -> T, M, S: tensors by name (numpy arrays; a streamed
                     tensor's first dimension is its row count), each
                     tensor's metadata by name, the stream metadata
    release(S)    -> the fields of the single ledger release in S
                     ("dp.release.I.FIELD" -> {FIELD: value})
    releases(S)   -> the ledger releases in S, in order, one dict of
                     fields each
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import specread  # noqa: E402

NP = {1: "<f4", 2: "<f8", 3: "<i4", 4: "<i8", 5: "u1"}
RELEASE = "dp.release."


def read(path):
    raw = subprocess.run(["zstd", "-dcq", path], capture_output=True,
                         check=True).stdout
    out, S = specread.read(raw)
    T, M = {}, {}
    for name, dtype, dims, streamed, rowbytes, rows, data, tmeta in out:
        if streamed:
            dims = [rows] + list(dims[1:])
        a = np.frombuffer(bytes(data), dtype=NP[dtype])
        assert a.size == int(np.prod(dims)), name
        T[name], M[name] = a.reshape(dims), tmeta
    return T, M, S


def release(S):
    E = {}
    for k, v in S.items():
        if k.startswith(RELEASE):
            E[k.split(".", 3)[3]] = v
    return E


def releases(S):
    R = {}
    for k, v in S.items():
        if k.startswith(RELEASE):
            i, f = k.split(".", 3)[2:]
            R.setdefault(i, {})[f] = v
    return list(R.values())
