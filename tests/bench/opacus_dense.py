"""DP-SGD throughput of Opacus on the dense models of tests/bench/dpsgd.sh.

Run by tests/bench/dpsgd.sh (make bench), never by make test: it needs
torch (Debian's python3-torch, make bench-deps) and Opacus on PYTHONPATH.

    python3 opacus_dense.py IMAGES LABELS BATCH REPEATS LR_EXAMPLES MLP_EXAMPLES

For each of REPEATS rounds and each model, logistic regression (784-10)
and the MLP 784-256-10 (ReLU), as dpsgd.sh gives them to dpsgd-train,
prints "MODEL torch WALL CPU" (plain torch SGD, shuffled loader) and
"MODEL opacus WALL CPU" (Opacus make_private defaults: hook-based
per-example gradients, flat clipping, Poisson sampling; noise multiplier
1, clip 1, SGD lr 0.05), WALL examples per wall second and CPU examples
per CPU second of this process (time.process_time), each over about
LR_EXAMPLES or MLP_EXAMPLES examples after two warm-up steps, at one torch
thread.  Under Poisson sampling the examples counted are the rows of the
batches drawn.  Pixels are scaled to [0, 1] as featurize does.
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


def model_of(name):
    if name == "lr":
        return nn.Linear(784, 10)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def main():
    images, labels = sys.argv[1], sys.argv[2]
    batch, repeats = int(sys.argv[3]), int(sys.argv[4])
    examples = {"lr": int(sys.argv[5]), "mlp": int(sys.argv[6])}
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x = torch.from_numpy(idx(images, 16).reshape(-1, 784).astype(np.float32) / 255)
    y = torch.from_numpy(idx(labels, 8).astype(np.int64))
    data = torch.utils.data.TensorDataset(x, y)

    from opacus import PrivacyEngine
    warnings.simplefilter("ignore")
    for _ in range(repeats):
        for name in ("lr", "mlp"):
            model = model_of(name)
            opt = torch.optim.SGD(model.parameters(), lr=0.05)
            loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
            print("%s torch %.1f %.1f" % ((name,) + rate(model, opt, loader,
                  examples[name])), flush=True)

            model = model_of(name)
            opt = torch.optim.SGD(model.parameters(), lr=0.05)
            loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
            model, opt, loader = PrivacyEngine().make_private(
                module=model, optimizer=opt, data_loader=loader,
                noise_multiplier=1.0, max_grad_norm=1.0)
            print("%s opacus %.1f %.1f" % ((name,) + rate(model, opt, loader,
                  examples[name])), flush=True)


main()
