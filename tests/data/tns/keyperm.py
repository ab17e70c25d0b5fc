# keyperm.py SEED N SIZE...: the row order of `tns split` (man/tns.1),
# computed independently of the C code: row r gets the key
# XXH64(r as 8 little-endian bytes, seed SEED), rows are sorted by key and
# then by row number, and part i takes the next SIZE[i] rows of that
# order.  Prints one line per part: the row numbers, space-separated.
import sys

M = (1 << 64) - 1
P1, P2, P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
P4, P5 = 9650029242287828579, 2870177450012600261


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def xxh64_u64(v, seed):
    """XXH64 of the 8 bytes of v, little-endian (input shorter than 32)."""
    h = (seed + P5 + 8) & M
    k = rotl(v * P2 & M, 31) * P1 & M
    h ^= k
    h = (rotl(h, 27) * P1 + P4) & M
    h ^= h >> 33
    h = h * P2 & M
    h ^= h >> 29
    h = h * P3 & M
    h ^= h >> 32
    return h


seed, n = int(sys.argv[1]), int(sys.argv[2])
order = sorted(range(n), key=lambda r: (xxh64_u64(r, seed), r))
at = 0
for size in map(int, sys.argv[3:]):
    print(" ".join(map(str, order[at:at + size])))
    at += size
