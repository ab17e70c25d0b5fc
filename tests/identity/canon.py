#!/usr/bin/python3
"""canon.py: helper of tests/identity/check.

  canon.py gen DIR
      write the generated inputs of the check into DIR (numpy, fixed
      seeds; the same bytes for both builds, as they are made once).
  canon.py compare OLD NEW
      compare the runs of the command list in the run directories OLD and
      NEW (made by check: cmd/<i>.{cmd,rc,out,err,files,stderr-too}, and
      the command outputs under work/), print "same|DIFF  <command>" per
      command, then "N same, M different", and exit 1 on a difference.
  canon.py show FILE
      print the canonical form of FILE (a tensor stream or text), to see
      what compare compares.

Canonical forms ("byte-identical up to what is random by design"):
  * tensor stream: every tensor in order, with its name, dtype, shape,
    streamed flag, tensor metadata and the SHA-256 of its bytes; and the
    stream metadata as a map, without the prov.* keys (prov.version and
    prov.args may change), with the values of split.parent and split.id
    masked, and the release ids (dp.release.<id>.*) renamed canonically:
    ID0, ID1, ... in the order of their entries' contents (the id excluded,
    and 'sanitizes', which names another id), as tests/test_helper.bash's
    same_but_ids does.  The stream is read here from the format spec
    (formats/tensor-stream.md), not with either build's tns.
  * text (stdout, reports, CSV, ...): the release ids (32 hexadecimal
    digits) renamed R0, R1, ... and the split ids and file digests of the
    run (16 hexadecimal digits: split.parent and split.id values seen in
    any stream of the two runs, and the xxh64 that tns info prints)
    renamed S0, S1, ... in order of first appearance; lines holding a
    prov.* key dropped.  JSON text (tns info --format json) is compared as
    JSON, its metadata canonicalised like a stream's.
  * anything else: bytes.
"""
import hashlib
import json
import os
import re
import struct
import subprocess
import sys

MAGIC = b"\x93TNS\r\n\x1a\n"
ZSTD = b"\x28\xb5\x2f\xfd"
DT = {1: "f32", 2: "f64", 3: "i32", 4: "i64", 5: "u8"}
SIZE = {1: 4, 2: 8, 3: 4, 4: 8, 5: 1}
RID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")
HEX16 = re.compile(r"(?<![0-9a-f])[0-9a-f]{16}(?![0-9a-f])")
HEX8 = re.compile(r"(?<![0-9a-f])[0-9a-f]{8}(?![0-9a-f])")
WARNING = re.compile(r"^[a-z-]+: warning: ")
MASKED_KEYS = ("split.parent", "split.id")


class NotStream(Exception):
    pass


# ---- tensor streams ----

def decompress(path):
    r = subprocess.run(["zstd", "-dcq", "--", path], capture_output=True)
    if r.returncode != 0:
        raise NotStream("zstd: " + r.stderr.decode(errors="replace").strip())
    return r.stdout


def meta_block(d, off):
    n, = struct.unpack_from("<I", d, off)
    off += 4
    m = []
    for _ in range(n):
        kl, = struct.unpack_from("<H", d, off)
        k = d[off + 2:off + 2 + kl].decode("utf-8", "replace")
        off += 2 + kl + 1
        vl, = struct.unpack_from("<I", d, off)
        v = d[off + 4:off + 4 + vl].decode("utf-8", "replace")
        off += 4 + vl
        m.append((k, v))
    return m, off


def parse(d):
    """-> (tensors, stream metadata as a list of (key, value))."""
    if d[:8] != MAGIC:
        raise NotStream("bad magic")
    off, smeta, tensors, cur = 12, [], [], None
    while True:
        if len(d) - off < 16:
            raise NotStream("truncated")
        rtype, _, blen = struct.unpack_from("<IIQ", d, off)
        body, off = off + 16, off + 16 + blen
        if rtype == 5 and cur is None:
            break
        if rtype & 0x80:
            continue
        if rtype == 1 and cur is None:
            smeta += meta_block(d, body)[0]
        elif rtype == 2 and cur is None:
            nl, = struct.unpack_from("<H", d, body)
            name = d[body + 2:body + 2 + nl].decode("utf-8", "replace")
            p = body + 2 + nl
            dtype, ndim, flags = struct.unpack_from("<BBH", d, p)
            dims = list(struct.unpack_from("<%dQ" % ndim, d, p + 4))
            tmeta = meta_block(d, p + 4 + 8 * ndim)[0]
            cur = {"name": name, "dtype": DT.get(dtype, dtype), "dims": dims,
                   "streamed": bool(flags & 1), "meta": tmeta, "rows": 0,
                   "h": hashlib.sha256()}
        elif rtype == 3 and cur is not None:
            nrows, = struct.unpack_from("<Q", d, body)
            cur["rows"] += nrows
            cur["h"].update(d[body + 8:off])
        elif rtype == 4 and cur is not None:
            if cur["streamed"]:
                cur["dims"][0] = cur["rows"]
            cur["sha256"] = cur.pop("h").hexdigest()
            tensors.append(cur)
            cur = None
        else:
            raise NotStream("record type %d" % rtype)
    return tensors, smeta


def release_names(meta):
    """Release id -> ID<n>, in the order of the entries' contents."""
    ids = {k.split(".")[2] for k in meta if k.startswith("dp.release.")}

    def body(i):
        p = "dp.release.%s." % i
        return json.dumps(sorted((k[len(p):], v) for k, v in meta.items()
                                 if k.startswith(p)
                                 and k[len(p):] != "sanitizes"))
    return {i: "ID%d" % n for n, i in enumerate(sorted(ids, key=body))}


def rename(obj, names):
    text = json.dumps(obj, sort_keys=True)
    for i, r in names.items():
        text = text.replace(i, r)
    return json.loads(text)


def canon_meta(meta):
    """A metadata map: prov.* dropped, split ids masked, ids renamed."""
    m = {k: ("<masked>" if k in MASKED_KEYS else v) for k, v in meta.items()
         if not k.startswith("prov.")}
    return rename(m, release_names(m)), release_names(m)


def canon_stream(path):
    tensors, smeta = parse(decompress(path))
    meta, names = canon_meta(dict(smeta))
    ts = [{k: t[k] for k in ("name", "dtype", "dims", "streamed", "sha256")}
          | {"meta": rename(dict(t["meta"]), names)} for t in tensors]
    return {"tensors": ts, "metadata": meta}


def random_values(path):
    """The values of a stream that are random by design: its split ids
    (16 hexadecimal digits) and its release ids (32)."""
    try:
        _, smeta = parse(decompress(path))
    except (NotStream, struct.error, IndexError):
        return set()
    return {v for k, v in smeta if k in MASKED_KEYS} | {
        k.split(".")[2] for k, _ in smeta if k.startswith("dp.release.")}


# ---- text ----

def canon_text(data, randoms, warnings=True):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not warnings:
        text = "\n".join(l for l in text.split("\n") if not WARNING.match(l))
    s = text.lstrip()
    if s[:1] in "{[":
        # JSON, or JSON lines (tns info --format json, one line a file)
        try:
            text = canon_json(json.loads(text))
        except ValueError:
            try:
                text = "\n".join(canon_json(json.loads(l))
                                 for l in text.split("\n") if l.strip())
            except ValueError:
                pass
    ids, hx = {}, {}

    def rid(m):
        return ids.setdefault(m.group(0), "R%d" % len(ids))

    def h16(m):
        if m.group(0) in randoms:
            return hx.setdefault(m.group(0), "S%d" % len(hx))
        return m.group(0)

    def h8(m):
        # rdp-account ledger -v shows the first 8 digits of a release id
        full = prefixes(randoms).get(m.group(0))
        return ids.setdefault(full, "R%d" % len(ids)) if full else m.group(0)
    out = []
    for line in text.split("\n"):
        if re.search(r"(?<![a-z0-9_.])prov\.[a-z0-9_]", line):
            continue
        line = re.sub(r"^(\s*xxh64\s+)[0-9a-f]{16}$", r"\1<xxh64>", line)
        out.append(HEX8.sub(h8, HEX16.sub(h16, RID.sub(rid, line))))
    return "\n".join(out)


_prefixes = {}


def prefixes(randoms):
    key = id(randoms)
    if key not in _prefixes:
        _prefixes[key] = {v[:8]: v for v in randoms if len(v) == 32}
    return _prefixes[key]


def canon_json(j):
    """tns info --format json (one object or a list); other JSON as is,
    with ids renamed."""
    def one(o):
        if isinstance(o, dict) and "metadata" in o and "tensors" in o:
            o = dict(o)
            o.pop("file", None)
            o.pop("xxh64", None)
            meta, names = canon_meta(o["metadata"])
            o["metadata"] = meta
            if "ledger" in o:
                led = rename({k: v for k, v in o["ledger"].items()}, names)
                for g in led.values():
                    if isinstance(g, list):
                        g.sort(key=lambda x: json.dumps(x, sort_keys=True))
                o["ledger"] = led
            o["tensors"] = rename(o["tensors"], names)
            return o
        return o
    if isinstance(j, list):
        j = [one(x) for x in j]
    else:
        j = one(j)
    return json.dumps(j, sort_keys=True, indent=1)


# ---- files ----

def canon_file(path, randoms, warnings=True):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] == ZSTD:
        try:
            return ("stream", canon_stream(path))
        except (NotStream, struct.error, IndexError):
            pass
    t = canon_text(data, randoms, warnings)
    if t is not None:
        return ("text", t)
    return ("bytes", hashlib.sha256(data).hexdigest())


def first_difference(a, b):
    if a[0] != b[0]:
        return "kind %s against %s" % (a[0], b[0])
    if a[0] == "stream":
        x, y = a[1], b[1]
        if len(x["tensors"]) != len(y["tensors"]):
            return "tensors %s against %s" % ([t["name"] for t in x["tensors"]],
                                              [t["name"] for t in y["tensors"]])
        for s, t in zip(x["tensors"], y["tensors"]):
            for k in s:
                if s[k] != t[k]:
                    return "tensor %s: %s %s against %s" % (
                        s["name"], k, short(s[k]), short(t[k]))
        mx, my = x["metadata"], y["metadata"]
        for k in sorted(set(mx) | set(my)):
            if mx.get(k) != my.get(k):
                return "metadata %s: %s against %s" % (
                    k, short(mx.get(k)), short(my.get(k)))
        return "?"
    if a[0] == "text":
        la, lb = a[1].split("\n"), b[1].split("\n")
        for n, (p, q) in enumerate(zip(la, lb)):
            if p != q:
                return "line %d: %s | %s" % (n + 1, short(p), short(q))
        return "%d lines against %d" % (len(la), len(lb))
    return "bytes differ"


def short(v, n=90):
    s = v if isinstance(v, str) else json.dumps(v)
    return s if len(s) <= n else s[:n] + "..."


def read(path, default=""):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None if default is None else default.encode()


def compare(old, new):
    randoms = set()
    for top in (old, new):
        for dp, _, fs in os.walk(os.path.join(top, "work")):
            for f in fs:
                p = os.path.join(dp, f)
                with open(p, "rb") as fh:
                    if fh.read(4) == ZSTD:
                        randoms |= random_values(p)
    n = len([f for f in os.listdir(os.path.join(old, "cmd")) if f.endswith(".cmd")])
    same = diff = 0
    failing = []
    for i in range(n):
        c = os.path.join("cmd", "%03d." % i)
        cmd = read(os.path.join(old, c + "cmd")).decode().rstrip("\n")
        why = []
        ra = read(os.path.join(old, c + "rc"), None)
        rb = read(os.path.join(new, c + "rc"), None)
        ra = int(ra) if ra is not None else None
        rb = int(rb) if rb is not None else None
        if ra != rb:
            why.append("exit status %s (old) against %s (new)" % (ra, rb))
        outs = [(c + "out", "stdout", True)]
        if ra != 0 or rb != 0:
            outs.append((c + "err", "stderr", True))
        elif os.path.exists(os.path.join(old, c + "stderr-too")):
            # a report on stderr: its warnings may be reworded
            outs.append((c + "err", "stderr", False))
        fa = read(os.path.join(old, c + "files")).decode().split()
        fb = read(os.path.join(new, c + "files")).decode().split()
        if fa != fb:
            why.append("output files %s (old) against %s (new)" % (fa, fb))
        for f in fa:
            if f in fb:
                outs.append((os.path.join("work", f), f, True))
        for rel, label, warnings in outs:
            a = canon_file(os.path.join(old, rel), randoms, warnings)
            b = canon_file(os.path.join(new, rel), randoms, warnings)
            if a != b:
                why.append("%s: %s" % (label, first_difference(a, b)))
        if why:
            diff += 1
            print("DIFF  %s" % cmd)
            for w in why:
                print("        " + w, file=sys.stderr)
        else:
            same += 1
            print("same  %s" % cmd)
        if ra != 0 or rb != 0:
            err = read(os.path.join(new if rb else old, c + "err")).decode(
                errors="replace").strip().split("\n")[-1]
            failing.append("  exit %s/%s  %s\n        %s" % (ra, rb, cmd, err))
        sys.stdout.flush()
    print("%d same, %d different" % (same, diff))
    if failing:
        print("%d commands failed (old/new exit status):" % len(failing))
        for f in failing:
            print(f)
    return 1 if diff else 0


# ---- generated inputs ----

def gen(out):
    import gzip
    import numpy as np
    rng = np.random.default_rng(20261201)

    def csv(name, X, y=None, header=True):
        with open(os.path.join(out, name), "w") as f:
            if header:
                cols = ["f%d" % i for i in range(X.shape[1])]
                f.write(",".join(cols + (["label"] if y is not None else [])) + "\n")
            for i, row in enumerate(X):
                f.write(",".join("%.6f" % v for v in row)
                        + (",%d" % y[i] if y is not None else "") + "\n")

    # Source and target domains, 8 features, 3 classes: the target is the
    # source rotated in two planes, scaled and shifted.
    d, K = 8, 3
    C = rng.normal(0, 2, (K, d))
    R = np.eye(d)
    for a, b, t in ((0, 1, 0.6), (4, 6, -0.5)):
        c, s = np.cos(t), np.sin(t)
        R[[a, a, b, b], [a, b, a, b]] = c, -s, s, c

    def domain(n, target):
        y = rng.integers(0, K, n)
        X = C[y] + rng.normal(0, 1, (n, d))
        if target:
            X = 1.3 * X @ R.T + 0.5
        return X, y
    X, y = domain(160, False)
    csv("src8.csv", X, y)
    X, y = domain(120, True)
    csv("tgt8.csv", X)
    X, y = domain(120, True)
    csv("tgt8-test.csv", X, y)
    # IDX images: 12 images of 6x6 bytes, labels 0..2.
    img = rng.integers(0, 256, (12, 6, 6)).astype(np.uint8)
    lab = (np.arange(12) % 3).astype(np.uint8)
    for name, a, code in (("img.idx.gz", img, 3), ("lab.idx.gz", lab, 1)):
        head = bytes([0, 0, 8, code]) + b"".join(
            int(n).to_bytes(4, "big") for n in a.shape)
        with open(os.path.join(out, name), "wb") as f:
            f.write(gzip.compress(head + a.tobytes(), mtime=0))
    # Public label sets for featurize --label-map.
    with open(os.path.join(out, "iris.map"), "w") as f:
        f.write("virginica\nsetosa\n")
    with open(os.path.join(out, "docs.map"), "w") as f:
        f.write("neg\npos\n")
    # Vote histograms for rdp-account --counts (one query a line).
    with open(os.path.join(out, "counts.txt"), "w") as f:
        f.write("240,4,2,1,1,1,1,0,0,0\n200,20,10,5,5,4,3,1,1,1\n"
                "150,50,20,10,8,5,3,2,1,1\n")
    np.save(os.path.join(out, "w.npy"), rng.normal(0, 1, (5, 3)))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "show":
        k, v = canon_file(sys.argv[2], set())
        print(v if isinstance(v, str) else json.dumps(v, indent=1, sort_keys=True))
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main())
