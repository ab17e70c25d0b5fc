"""DP-SGD throughput of Opacus on Tramer and Boneh's Fashion-MNIST CNN.

Run by tests/bench/cnn.sh (make bench), never by make test: it needs torch
(Debian's python3-torch, make bench-deps) and Opacus on PYTHONPATH.

    python3 opacus_cnn.py IMAGES LABELS BATCH EXAMPLES

prints two lines, "torch <examples/s>" (plain torch SGD, shuffled loader)
and "opacus <examples/s>" (Opacus make_private defaults: hook-based
per-example gradients, flat clipping, Poisson sampling; noise multiplier 1,
clip 1, SGD lr 0.05, as cnn.sh runs dpsgd-train), each over about EXAMPLES
examples after two warm-up steps, at one torch thread.  The network is the
one cnn.sh gives dpsgd-train: c16k8s2p3, m2s1, c32k4s2, m2s1, d32, tanh,
10 classes, 28x28x1 inputs.
"""
import gzip
import sys
import warnings

import numpy as np
import torch
from torch import nn

from opacus_rate import rate


def idx(path, skip):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=skip)


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 16, 8, stride=2, padding=3), nn.Tanh(),
        nn.MaxPool2d(2, 1),
        nn.Conv2d(16, 32, 4, stride=2), nn.Tanh(),
        nn.MaxPool2d(2, 1),
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 32), nn.Tanh(),
        nn.Linear(32, 10))


def main():
    images, labels, batch, examples = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x = torch.from_numpy(idx(images, 16).reshape(-1, 1, 28, 28).astype(np.float32) / 255)
    y = torch.from_numpy(idx(labels, 8).astype(np.int64))
    data = torch.utils.data.TensorDataset(x, y)

    model = cnn()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
    print("torch %.1f" % rate(model, opt, loader, examples)[0], flush=True)

    from opacus import PrivacyEngine
    warnings.simplefilter("ignore")
    model = cnn()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
    model, opt, loader = PrivacyEngine().make_private(
        module=model, optimizer=opt, data_loader=loader,
        noise_multiplier=1.0, max_grad_norm=1.0)
    print("opacus %.1f" % rate(model, opt, loader, examples)[0], flush=True)


main()
