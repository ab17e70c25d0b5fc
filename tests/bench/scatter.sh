#!/usr/bin/env bash
# featurize --scatter 2:8 on the 60,000 Fashion-MNIST training images
# (whole process: gzip IDX in, zstd stream out), on 1 and 2 threads, next
# to the numpy reference (tests/ref/scatter_ref.py: vectorised over
# batches of 500 images, float64 numpy.fft, one thread) timed in the same
# run on the first SCATTER_NREF images, transform only (filter bank and
# I/O excluded), and scaled to rows/s.  Reports rows/s and the ratios.
# Called by tests/bench/run as `bash tests/bench/scatter.sh SCRATCHDIR`.
#
#   SCATTER_NREF (3000): images the numpy side transforms.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: scatter.sh SCRATCHDIR}/scatter
B=build/bin
PY=/usr/bin/python3
FM=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
NREF=${SCATTER_NREF:-3000}
export LC_ALL=C OPENBLAS_NUM_THREADS=1
mkdir -p "$W"
if [ ! -r "$FM" ]; then
	echo "== featurize --scatter: skipped ($FM missing; apt install dataset-fashion-mnist)"
	exit 0
fi

wall() {	# wall CMD: seconds of one bash -c run
	local t0 t1
	t0=$(date +%s.%N)
	bash -c "$1" || return
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

echo "== featurize --scatter 2:8 (81 x 7 x 7), Fashion-MNIST train, 60000 images"
t1=$(wall "$B/featurize -q --scatter 2:8 --threads 1 --dataset fm -o $W/s1.tns $FM")
t2=$(wall "$B/featurize -q --scatter 2:8 --threads 2 --dataset fm -o $W/s2.tns $FM")
tref=$($PY - "$FM" "$NREF" <<'EOF'
import gzip, importlib.util, sys, time
import numpy as np
spec = importlib.util.spec_from_file_location("ref", "tests/ref/scatter_ref.py")
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)
n = int(sys.argv[2])
raw = gzip.open(sys.argv[1]).read()
x = (np.frombuffer(raw[16:16 + n * 784], np.uint8).reshape(n, 28, 28) / 255.0)
phi, psi = ref.filter_bank(36, 36, 2, 8)
t0 = time.perf_counter()
for i in range(0, n, 500):
    ref.scattering(x[i:i + 500], 2, 8, phi, psi)
print("%.3f" % ((time.perf_counter() - t0) * 60000 / n))
EOF
)
r1=$(rate 60000 "$t1"); r2=$(rate 60000 "$t2"); rr=$(rate 60000 "$tref")
printf '%-44s %8s rows/s (%s s)\n' "featurize --scatter 2:8, 1 thread" "$r1" "$t1"
printf '%-44s %8s rows/s (%s s)\n' "featurize --scatter 2:8, 2 threads" "$r2" "$t2"
printf '%-44s %8s rows/s (%s images, scaled)\n' "baseline: numpy reference, 1 thread" "$rr" "$NREF"
printf '%-44s %8s\n' "ratio 1 thread / numpy" "$(ratio "$tref" "$t1")"
printf '%-44s %8s\n' "ratio 2 threads / numpy" "$(ratio "$tref" "$t2")"
rm -f "$W"/s1.tns "$W"/s2.tns
