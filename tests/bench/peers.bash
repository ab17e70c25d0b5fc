# peers.bash: sourced by the benches that run Opacus in the same run
# (tests/bench/cnn.sh, tests/bench/dpsgd.sh).  Sets OPACUS_GIT,
# OPT_EINSUM_GIT (git clones; override to point elsewhere), P (where the
# sources are extracted, build/peers) and PY, and defines peer.

# peer SRC TAG DIR: extract tag TAG of the git clone SRC into DIR
peer() {
	[ -d "$1" ] || { echo "no git clone at $1"; return 1; }
	rm -rf "$3" && mkdir -p "$3" &&
		nice git --git-dir="$1" archive "$2" | tar -x -C "$3" ||
		{ echo "cannot extract $2 from $1"; return 1; }
}
OPACUS_GIT=${OPACUS_GIT:-/work/.mirror/pytorch+opacus/repo}
OPT_EINSUM_GIT=${OPT_EINSUM_GIT:-/work/.mirror/dgasmith+opt_einsum/repo}
# P and PY are used by the bench that sources this file.
# shellcheck disable=SC2034
P=build/peers
# shellcheck disable=SC2034
PY=/usr/bin/python3
