#!/usr/bin/env bats
# dpsgd-train --arch: convolutional models.  Forward passes, gradients and
# the clipped step are checked against numpy code written here from the
# definitions (man/dpsgd-train.1, lib/ml/conv.h: rows are H x W x C,
# channel last; W of a convolution is [K K C_in, N]); the audit fixes its
# seeds and fails for a correct mechanism with probability at most 2e-7
# (tests/audit.bash).

load test_helper
load audit

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# 40 random 6x6x2 images of 3 classes, and the loader.
	"$PY" - <<'EOF'
import numpy as np
r = np.random.default_rng(5)
X = r.uniform(-1, 1, (40, 72))
y = r.integers(0, 3, 40)
with open("img.csv", "w") as f:
    f.write(",".join("x%d" % j for j in range(72)) + ",label\n")
    for i in range(40):
        f.write(",".join("%.6f" % v for v in X[i]) + ",%d\n" % y[i])
EOF
	featurize --label label --dataset img img.csv > img.tns
	cat > load.py <<EOF
import sys
import numpy as np
sys.path.insert(0, "$TOP/tests/vectors")
from tnsload import read, release
def load(path):
    T, M, S = read(path); return T, S, release(S)
EOF
	# An independent numpy CNN: forward and per-example gradients.
	cat > cnnref.py <<'EOF'
import numpy as np
def parse(arch):
    shape, layers = arch[4:].split(":")
    h, w, c = (int(v) for v in shape.split("x"))
    out = []
    for it in layers.split(","):
        kind, rest = it[0], it[1:]
        vals = {}
        key, num = "n", ""
        for ch in rest:
            if ch.isdigit():
                num += ch
            else:
                vals[key] = int(num); key, num = ch, ""
        vals[key] = int(num)
        out.append((kind, vals))
    return (h, w, c), out
def patches(a, k, s, p):
    # a: (h, w, c) -> (T, k*k*c), rows in (ty, tx) order, cols (ky, kx, c)
    h, w, c = a.shape
    ap = np.zeros((h + 2 * p, w + 2 * p, c)); ap[p:p + h, p:p + w] = a
    ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    P = np.array([ap[ty * s:ty * s + k, tx * s:tx * s + k].ravel()
        for ty in range(ho) for tx in range(wo)])
    return P, ho, wo
def forward(T, S, x, upto=None):
    """Logits (or layer upto's output) of one example, and the cache."""
    shape, layers = parse(S["model.arch"])
    an = S.get("model.activation", "relu")
    if an.startswith("tsigmoid:"):
        # the tempered sigmoid s sigmoid(T z) - o (Papernot et al. 2021)
        ts, tt, to = (float(v) for v in an.split(":")[1:])
        act = lambda z: ts / (1 + np.exp(-tt * z)) - to
    else:
        act = np.tanh if an == "tanh" else (lambda z: np.maximum(z, 0))
    a = x.reshape(shape).astype(np.float64); cache = []
    for l, (kind, v) in enumerate(layers):
        last = l == len(layers) - 1
        # a convolution followed by a group norm leaves it the activation
        gn_next = not last and layers[l + 1][0] == "g"
        if kind == "c":
            W = T["model/conv%d/W" % (l + 1)].astype(np.float64)
            b = T["model/conv%d/b" % (l + 1)].astype(np.float64)
            P, ho, wo = patches(a, v["k"], v["s"], v["p"])
            z = P @ W + b; cache.append(("c", P, z, a.shape, v, gn_next))
            a = (z if gn_next else act(z)).reshape(ho, wo, v["n"])
        elif kind == "g":
            G = v["n"]; h, w, c = a.shape; cg = c // G
            gam = T["model/gn%d/W" % (l + 1)].astype(np.float64).ravel()
            bet = T["model/gn%d/b" % (l + 1)].astype(np.float64)
            ag = a.reshape(h * w, G, cg)
            mu = ag.mean((0, 2)); var = ag.var((0, 2))
            r = 1 / np.sqrt(var + 1e-5)
            xh = ((ag - mu[None, :, None]) * r[None, :, None]).reshape(h, w, c)
            z = xh * gam + bet; cache.append(("g", xh, r, G, z, gam))
            a = act(z)
        elif kind in "am":
            k, s = v["n"], v["s"]; h, w, c = a.shape
            ho, wo = (h - k) // s + 1, (w - k) // s + 1
            o = np.zeros((ho, wo, c))
            for ty in range(ho):
                for tx in range(wo):
                    win = a[ty * s:ty * s + k, tx * s:tx * s + k]
                    o[ty, tx] = win.max((0, 1)) if kind == "m" else win.mean((0, 1))
            cache.append((kind, a, k, s)); a = o
        else:
            W = T["model/fc%d/W" % (l + 1)].astype(np.float64)
            b = T["model/fc%d/b" % (l + 1)].astype(np.float64)
            z = a.ravel() @ W + b; cache.append(("d", a.ravel(), z))
            a = z if last else act(z)
        if upto is not None and l + 1 == upto:
            return a.ravel(), cache
    return a.ravel(), cache
def grads(T, S, x, y):
    """Per-example gradient {name: array} of the cross-entropy (tanh only,
    no max pools: enough for the tests that call it)."""
    z, cache = forward(T, S, x)
    p = np.exp(z - z.max()); p /= p.sum(); g = p; g[y] -= 1
    shape, layers = parse(S["model.arch"])
    out = {}
    for l in range(len(layers) - 1, -1, -1):
        kind, v = layers[l]; c = cache[l]; last = l == len(layers) - 1
        if kind == "d":
            a, zz = c[1], c[2]
            gz = g if last else g * (1 - np.tanh(zz) ** 2)
            out["model/fc%d/W" % (l + 1)] = np.outer(a, gz)
            out["model/fc%d/b" % (l + 1)] = gz
            W = T["model/fc%d/W" % (l + 1)].astype(np.float64)
            g = W @ gz
        elif kind == "g":
            _, xh, r, G, zz, gam = c; h, w, ch = xh.shape; cg = ch // G
            gy = g.reshape(h, w, ch) * (1 - np.tanh(zz) ** 2)
            out["model/gn%d/W" % (l + 1)] = (gy * xh).sum((0, 1))[None, :]
            out["model/gn%d/b" % (l + 1)] = gy.sum((0, 1))
            d = (gy * gam).reshape(h * w, G, cg); xg = xh.reshape(h * w, G, cg)
            m1 = d.mean((0, 2)); m2 = (d * xg).mean((0, 2))
            g = (r[None, :, None] * (d - m1[None, :, None] - xg * m2[None, :, None])).ravel()
        elif kind == "a":
            a, k, s = c[1], c[2], c[3]; h, w, ch = a.shape
            ho, wo = (h - k) // s + 1, (w - k) // s + 1
            gi = np.zeros(a.shape); gg = g.reshape(ho, wo, ch)
            for ty in range(ho):
                for tx in range(wo):
                    gi[ty * s:ty * s + k, tx * s:tx * s + k] += gg[ty, tx] / (k * k)
            g = gi.ravel()
        else:
            _, P, zz, ishape, vv, gn_next = c
            gz = g.reshape(zz.shape) * (1 if gn_next else 1 - np.tanh(zz) ** 2)
            out["model/conv%d/W" % (l + 1)] = P.T @ gz
            out["model/conv%d/b" % (l + 1)] = gz.sum(0)
            W = T["model/conv%d/W" % (l + 1)].astype(np.float64)
            gP = gz @ W.T
            h, w, ch = ishape; k, s, pd = vv["k"], vv["s"], vv["p"]
            ho, wo = (h + 2 * pd - k) // s + 1, (w + 2 * pd - k) // s + 1
            gi = np.zeros((h + 2 * pd, w + 2 * pd, ch)); t = 0
            for ty in range(ho):
                for tx in range(wo):
                    gi[ty * s:ty * s + k, tx * s:tx * s + k] += gP[t].reshape(k, k, ch); t += 1
            g = gi[pd:pd + h, pd:pd + w].ravel()
    return out
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

@test "bad --arch strings and combinations are usage errors (64) that name the problem" {
	for a in c16 c16k x4 c0k3 c4k3p3 m0 d0 "c4k3,,d2" "c4k3," "d2,c4k3" c4k9; do
		run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --input-shape 6x6x2 --arch "$a" img.tns
		[[ $stderr == *"--arch"* ]] || { echo "$a: $stderr"; false; }
	done
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --input-shape 6x6x2 --arch c4k3 --hidden 8 img.tns
	[[ $stderr == *"--arch and --hidden"* ]]
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --input-shape 6x6 --arch c4k3 img.tns
	[[ $stderr == *"--input-shape"*"HxWxC"* ]]
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --input-shape 6x6x2 img.tns
	[[ $stderr == *"need --arch"* ]]
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --arch c4k3 img.tns
	[[ $stderr == *"give --input-shape"* ]]
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --mode assoc --arch c4k3 --input-shape 6x6x2 img.tns
	[[ $stderr == *"only --mode classify"* ]]
	run -65 --separate-stderr dpsgd-train --no-dp --epochs 1 --arch c4k3 --input-shape 6x6x3 img.tns
	[[ $stderr == *"72 features"*"6x6x3 has 108"* ]]
}

@test "predict on a CNN equals a numpy forward pass; --features 1 to 3 too" {
	dpsgd-train --no-dp -S 1 --input-shape 6x6x2 --arch c4k3s1p1,g2,m2s1,c4k3s2,a2,d5 \
		--epochs 3 --batch 8 --lr 0.1 img.tns -o m.tns 2>/dev/null
	predict --model m.tns --emit logits img.tns -o z.tns
	predict --model m.tns --features 1 img.tns -o f1.tns
	predict --model m.tns --features 2 img.tns -o f2.tns
	predict --model m.tns --features 3 img.tns -o f3.tns
	run -0 $PY -c '
from load import load
from cnnref import forward
import numpy as np
T, S, E = load("m.tns")
assert S["model.arch"] == "cnn:6x6x2:c4k3s1p1,g2,m2s1,c4k3s2p0,a2s2,d5,d3", S["model.arch"]
assert T["model/conv1/W"].shape == (18, 4) and T["model/conv4/W"].shape == (36, 4)
assert T["model/gn2/W"].shape == (1, 4) and T["model/gn2/b"].shape == (4,)
X = load("img.tns")[0]["X"]
for name, upto in (("z.tns", None), ("f1.tns", 1), ("f2.tns", 2), ("f3.tns", 3)):
    got = load(name)[0]["logits" if upto is None else "X"]
    want = np.array([forward(T, S, x, upto)[0] for x in X])
    assert got.shape == want.shape, (name, got.shape, want.shape)
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < 1e-5, (name, err)
print("ok")'
	[ "$output" = ok ]
}

@test "--activation tsigmoid:S:T:O: stored in the model, predict equals a numpy forward pass; bad values are refused" {
	dpsgd-train --no-dp -S 3 --input-shape 6x6x2 --arch c4k3s1p1,g2,m2s1,c4k3s2,d5 \
		--activation tsigmoid:1.5:3:0.25 --epochs 3 --batch 8 --lr 0.1 img.tns -o m.tns 2>/dev/null
	predict --model m.tns --emit logits img.tns -o z.tns
	predict --model m.tns --features 5 img.tns -o f5.tns
	run -0 $PY -c '
from load import load
from cnnref import forward
import numpy as np
T, S, E = load("m.tns")
assert S["model.activation"] == "tsigmoid:1.5:3:0.25", S["model.activation"]
X = load("img.tns")[0]["X"]
for name, upto in (("z.tns", None), ("f5.tns", 5)):
    got = load(name)[0]["logits" if upto is None else "X"]
    want = np.array([forward(T, S, x, upto)[0] for x in X])
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err < 1e-5, (name, err)
# the dense hidden layer leaves values in (-0.25, 1.25), not tanh-like
f = load("f5.tns")[0]["X"]
assert f.min() > -0.25 and f.max() < 1.25 and f.max() > 0.8, (f.min(), f.max())
print("ok")'
	[ "$output" = ok ]
	for a in sigmoid tsigmoid tsigmoid:1:1 tsigmoid:0:1:0 tsigmoid:1:-2:0 \
		tsigmoid:1:2:3:4 tsigmoid:x:1:0 tsigmoid:1:1:2e6 "tsigmoid: 1:1:0" tsigmoid:nan:1:0; do
		run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --input-shape 6x6x2 \
			--arch c4k3 --activation "$a" img.tns
		[[ $stderr == *"--activation '$a'"* ]] || { echo "$a: $stderr"; false; }
	done
	tns meta set --unsafe-ledger model.activation=tsigmoid:1:0:0 < m.tns > bad.tns
	run -65 --separate-stderr predict --model bad.tns img.tns
	[[ $stderr == *"model.activation 'tsigmoid:1:0:0'"* ]]
}

@test "scattering features: --layout hwc rows train as their features.shape, channel last; chw rows are refused" {
	"$PY" -c "
import numpy as np
x = np.random.default_rng(8).random((24, 64))
y = np.arange(24) % 3
np.savetxt('im.csv', np.column_stack([x, y]), delimiter=',', fmt='%.9g')"
	for l in chw hwc; do
		featurize --format csv --header no --label 64 --image 8x8 \
			--scatter 1:4 --layout "$l" --dataset im -o "s$l.tns" im.csv
	done
	# 1 + 4 = 5 channels of 4 x 4.
	run -64 dpsgd-train --no-dp -S 1 --epochs 1 --arch c3k2,d4 schw.tns -o m.tns
	assert_output --partial 'are 5 channels of 4x4 in channel-major order'
	assert_output --partial 'featurize --layout hwc'
	dpsgd-train --no-dp -S 1 --arch c3k2,d4 --epochs 2 --batch 8 --lr 0.1 \
		shwc.tns -o m.tns 2>/dev/null
	predict --model m.tns --emit logits shwc.tns -o z.tns
	run -0 $PY -c '
from load import load
from cnnref import forward
import numpy as np
T, S, E = load("m.tns")
assert S["model.arch"] == "cnn:4x4x5:c3k2s1p0,d4,d3", S["model.arch"]
# The rows are channel last: the channel-major ones, transposed.
a = load("schw.tns")[0]["X"].reshape(24, 5, 4, 4).transpose(0, 2, 3, 1)
X = load("shwc.tns")[0]["X"]
assert np.array_equal(a.reshape(24, -1), X)
got = load("z.tns")[0]["logits"]
want = np.array([forward(T, S, x)[0] for x in X])
err = np.abs(got - want).max() / np.abs(want).max()
assert err < 1e-5, err
print("ok")'
	[ "$output" = ok ]
	# --input-shape still decides.
	run -65 dpsgd-train --no-dp -S 1 --epochs 1 --arch c3k2,d4 --input-shape 4x4x4 \
		shwc.tns -o m.tns
	assert_output --partial 'has 64'
}

# clipped_step PATHS: one clipped step, the convolutions' paths forced
# (PRIVADA_TEST_CONV_PATH, modelcli.h), against numpy.
clipped_step() {
	# Convolution 1 (T 36, kd 18, co 4), then a group norm, convolution 4
	# (T 4, kd 16, co 8); each takes the path of PATHS: direct norms and
	# materialised gradients, or ghost norms and the DGEMM sum.
	# Every example is clipped (C far below the gradients), so the step is
	# -(lr / N) C' sum_i g_i / |g_i| with C' = C / (1 + margin): the
	# update is that direction, scaled by C' / C in (0.99, 1] (lr 1000: the
	# update is far above the float rounding of the parameters).
	dpsgd-train --no-dp -S 2 --input-shape 6x6x2 --arch c4k3s1p1,g2,a2,c8k2s1,d4 \
		--activation tanh --epochs 1 --batch 8 --lr 0.1 img.tns -o m0.tns 2>/dev/null
	PRIVADA_TEST_CONV_PATH=$1 run -0 --separate-stderr dpsgd-train --init m0.tns --sigma 0 --clip 0.001 \
		--batch full --epochs 1 --lr 1000 --classes 3 --public-records 40 -S 1 img.tns -o m1.tns
	[[ $stderr == *"NOT private"* ]]
	run -0 $PY -c '
from load import load
from cnnref import grads
import numpy as np
T0, S0, _ = load("m0.tns")
T1, S1, _ = load("m1.tns")
D = load("img.tns")[0]
names = sorted(k for k in T0 if k.startswith("model/"))
want = {k: np.zeros(T0[k].shape) for k in names}
for x, y in zip(D["X"], D["y"]):
    g = grads(T0, S0, x, int(y))
    n = np.sqrt(sum((g[k] ** 2).sum() for k in names))
    assert n > 0.01, n
    for k in names:
        want[k] += g[k] * 0.001 / n
w = np.concatenate([(want[k] * -1000 / 40).ravel() for k in names])
got = np.concatenate([(T1[k].astype(np.float64) - T0[k]).ravel() for k in names])
r = got @ w / (w @ w)
res = np.abs(got - r * w).max() / np.abs(w).max()
assert 0.99 < r <= 1 and res < 1e-4, (r, res)
assert S1["train.mode"] == "clip_only" and S1["model.activation"] == "tanh"
print("ok", r, res)'
	[[ $output == "ok "* ]]
}

@test "one clipped step without noise equals the clipped sum of numpy per-example gradients" {
	clipped_step dg
}

@test "the same with the convolutions' paths swapped (conv 1 ghost, conv 4 direct)" {
	clipped_step gd
}

@test "PRIVADA_TEST_CONV_PATH needs one of a, d, g per convolution" {
	run -64 --separate-stderr env PRIVADA_TEST_CONV_PATH=d dpsgd-train --no-dp -S 1 \
		--input-shape 6x6x2 --arch c4k3s1p1,c8k2s1,d4 --epochs 1 img.tns -o m.tns
	[[ $stderr == *"invalid PRIVADA_TEST_CONV_PATH 'd'"*"2 convolutions"* ]]
}

@test "DP-SGD on a CNN writes the same ledger entry as for an MLP" {
	run -0 --separate-stderr dpsgd-train --sigma 1.5 --clip 1 --epochs 2 --batch 10 \
		--classes 3 --public-records 40 -S 3 --input-shape 6x6x2 --arch c3k3,m2,d4 img.tns -o m.tns
	run -0 $PY -c '
from load import load
T, S, E = load("m.tns")
assert E["mechanism"] == "subsampled_gaussian" and E["neighbours"] == "add_remove"
assert float(E["param.sigma"]) == 1.5 and float(E["param.clip"]) == 1
assert float(E["param.steps"]) == 8 and abs(float(E["param.q"]) - 0.25) < 1e-12
assert S["model.arch"] == "cnn:6x6x2:c3k3s1p0,m2s2,d4,d3" and "dp.raw.img" not in S
print("ok")'
	[ "$output" = ok ]
}

# The audit: a tiny CNN (2x2x1 images, c2k2: kd 4, co 2, T 1, the ghost
# norm; then d2) from a fixed model (--init), one full-batch step (q = 1,
# B = 16, lr 1).  D has nine zero images (no gradient on the conv
# weights: their patches are 0), D' adds the canary (1000, 0, 0, 0) of
# label 0, whose gradient is almost all on conv1/W[0, 0] (the dense
# weights of channel 1 are 0, so channel 0 carries it).  So conv1/W[0, 0]
# B / s is N(0, 1) on D and N(c, 1) on D', c <= C' / s: mu <= 1/sigma = 1.
make_audit_inputs() {
	"$PY" - <<'EOF'
import numpy as np
for name, rows in (("ad", 9), ("ad2", 9)):
    with open(name + ".csv", "w") as f:
        f.write("x0,x1,x2,x3,label\n")
        for i in range(rows):
            f.write("0,0,0,0,1\n")
        if name == "ad2":
            f.write("1000,0,0,0,0\n")
np.save("cw.npy", np.zeros((4, 2), np.float32))
np.save("cb.npy", np.zeros(2, np.float32))
np.save("dw.npy", np.array([[1, -1], [0, 0]], np.float32))
np.save("db.npy", np.zeros(2, np.float32))
EOF
	featurize --label label --dataset canary ad.csv > ad.tns
	featurize --label label --dataset canary ad2.csv > ad2.tns
	tns from-npy --name model/conv1/W cw.npy > cw.tns
	tns from-npy --name model/conv1/b cb.npy > cb.tns
	tns from-npy --name model/fc2/W dw.npy > dw.tns
	tns from-npy --name model/fc2/b db.npy > db.tns
	tns cat cw.tns cb.tns dw.tns db.tns |
		tns meta set --unsafe-ledger model.arch=cnn:2x2x1:c2k2s1p0,d2 model.activation=tanh \
		model.classes=2 > init.tns
}

project_cnn() {
	# noise sd sigma C = 1 (to within the grid's margin): W[0, 0] B.
	tns to-csv --tensor model/conv1/W "$1" | awk -F, '{ print $1 * 16 }' > "$2"
}

# audit_cnn PATH SEED1 SEED2: the one-step audit with the convolution's
# path forced (g: ghost norm and DGEMM sum; d: direct norm and the
# materialised gradient; the cost model takes ghost at T 1).
audit_cnn() {
	make_audit_inputs
	export PRIVADA_TEST_CONV_PATH=$1
	dpsgd-train --init init.tns --audit-repeat 100000 --sigma 1 --clip 1 --batch 16 \
		--epochs 1 --lr 1 --classes 2 --public-records 10 -S "$2" ad.tns > a1.tns 2>/dev/null
	dpsgd-train --init init.tns --audit-repeat 100000 --sigma 1 --clip 1 --batch 16 \
		--epochs 1 --lr 1 --classes 2 --public-records 10 -S "$3" ad2.tns > a2.tns 2>/dev/null
	project_cnn a1.tns p1
	project_cnn a2.tns p2
	run -0 --separate-stderr audit_mu_lb p1 p2
	audit_le "$output" 1
	audit_gt "$output" 0.8		# the audit has power
}

@test "one-step DP-SGD on a tiny CNN: the audit's mu lower bound stays at or below 1/sigma" {
	audit_cnn g 21 22
}

@test "the same audit with the direct norm and materialised gradient" {
	audit_cnn d 25 26
}

@test "the audit catches DP-SGD on a tiny CNN without clipping" {
	make_audit_inputs
	export PRIVADA_TEST_UNSAFE=1
	dpsgd-train --init init.tns --unsafe-test-no-clip --audit-repeat 20000 --sigma 1 \
		--clip 1 --batch 16 --epochs 1 --lr 1 --classes 2 --public-records 10 -S 23 ad.tns > a1.tns 2>/dev/null
	dpsgd-train --init init.tns --unsafe-test-no-clip --audit-repeat 20000 --sigma 1 \
		--clip 1 --batch 16 --epochs 1 --lr 1 --classes 2 --public-records 10 -S 24 ad2.tns > a2.tns 2>/dev/null
	project_cnn a1.tns p1
	project_cnn a2.tns p2
	run -0 --separate-stderr audit_mu_lb p1 p2
	audit_gt "$output" 1
}

@test "tools that cannot take a CNN model refuse it" {
	dpsgd-train --no-dp -S 1 --input-shape 6x6x2 --arch c3k3,d4 --epochs 1 img.tns -o k.tns 2>/dev/null
	run -65 --separate-stderr kde-publish -e 1 -d 1e-5 k.tns k.tns
	[[ $stderr == *"k.tns: a convolutional model"* ]]
	run -64 --separate-stderr dpsgd-train --no-dp --epochs 1 --mode assoc --init k.tns \
		--target img.tns img.tns
	[[ $stderr == *"a convolutional model trains with --mode classify only"* ]]
}
