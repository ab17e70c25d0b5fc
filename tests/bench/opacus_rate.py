"""The timing loop shared by opacus_cnn.py and opacus_dense.py (make bench
only): SGD steps over a loader, two warm-up steps excluded."""
import time

from torch import nn


def rate(model, opt, loader, examples):
    """examples per wall and per CPU second of SGD steps over loader, two
    warm-up steps excluded."""
    loss = nn.CrossEntropyLoss()
    n, t0, c0, step = 0, None, None, 0
    while True:
        for x, y in loader:
            if step == 2:
                t0, c0 = time.perf_counter(), time.process_time()
            if len(x) > 0:
                opt.zero_grad(set_to_none=True)
                loss(model(x), y).backward()
                opt.step()
            if step >= 2:
                n += len(x)
            step += 1
            if t0 is not None and n >= examples:
                return (n / (time.perf_counter() - t0),
                        n / (time.process_time() - c0))
