"""Tests of the privada package against the C tools (tns, rdp-account,
featurize, covest, dpsgd-train), which must be on PATH (tests/python.bats
puts build/bin there); tests that need a tool fail without it."""

import glob
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import privada  # noqa: E402

GOOD = os.path.join(TOP, "formats", "testdata", "good")
BAD = os.path.join(TOP, "formats", "testdata", "bad")
DPSGD = os.path.join(TOP, "tests", "data", "dpsgd")
ID1 = "0123456789abcdef0123456789abcdef"
ID2 = "fedcba9876543210fedcba9876543210"
ORDERS = "2,4,8,16,32"


def run(*args, **kw):
    kw.setdefault("check", True)
    return subprocess.run(list(args), capture_output=True, **kw)


def _umask():
    u = os.umask(0)
    os.umask(u)
    return u


def slurp(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def info(path):
    j = json.loads(run("tns", "info", "--format", "json", path).stdout)
    del j["file"], j["xxh64"]
    return j


def npy(path, name):
    return run("tns", "to-npy", "-f", "--tensor", name, path).stdout


def rdp_ledger(paths, delta=1e-5, *extra):
    out = run("rdp-account", "ledger", "--delta", repr(delta), "--format",
              "json", *extra, *paths, check=False)
    return json.loads(out.stdout)["datasets"]


def entry(rid, ds, **kw):
    f = dict(dataset=ds, mechanism="gaussian", neighbours="add_remove",
             seeded="false", tool="covest", orders=ORDERS,
             rdp="0.25,0.5,1,2,4")
    f.update(kw)
    return ["dp.release.%s.%s=%s" % (rid, k.replace("__", "."), v)
            for k, v in f.items() if v is not None]


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="privada-test.")
        self.addCleanup(shutil.rmtree, self.dir)

    def p(self, name):
        return os.path.join(self.dir, name)

    def x_tns(self):
        x = self.p("x.csv")
        with open(x, "w") as f:
            f.write("1,2\n3,4\n")
        run("tns", "from-csv", "-o", self.p("x.tns"), x)
        return self.p("x.tns")

    def ledger_stream(self, name, *kv):
        """x.tns with these ledger keys (tns meta set --unsafe-ledger)."""
        out = self.p(name)
        run("tns", "meta", "set", "--unsafe-ledger", "-i", self.x_tns(),
            "-o", out, *kv)
        return out


class Vectors(unittest.TestCase):
    def test_every_vector_same_verdict_as_tns_verify(self):
        paths = sorted(glob.glob(os.path.join(GOOD, "*.tns")) +
                       glob.glob(os.path.join(BAD, "*.tns")))
        self.assertGreater(len(paths), 100)
        for p in paths:
            c = run("tns", "verify", p, check=False).returncode
            try:
                privada.read(p)
                py = 0
            except privada.FormatError as e:
                py = 65
                self.assertTrue(str(e).startswith(p + ": offset "), str(e))
                self.assertGreaterEqual(e.offset, 0)
            self.assertEqual(py, c, p)
            self.assertEqual(py == 0, "/good/" in p, p)

    def test_worked_example(self):
        s = privada.read(os.path.join(GOOD, "example.tns"))
        self.assertEqual(list(s), ["x", "y"])
        self.assertEqual(s["x"].dtype, np.dtype("<f4"))
        self.assertEqual(s["x"].tolist(), [[1, 2], [3, -0.5]])
        self.assertEqual(s["y"].tolist(), [0, 1])
        self.assertEqual(s.tensor_meta["y"], {"classes": "2"})
        self.assertEqual(s.meta, {"dp.raw.demo": "row-local"})
        self.assertEqual(s.ledger.raw, {"demo": "row-local"})
        self.assertEqual(s.streamed, {"x"})
        self.assertTrue(s["x"].flags.writeable)

    def test_dtypes_and_nonfinite_vectors_bit_exact(self):
        s = privada.read(os.path.join(GOOD, "dtypes.tns"))
        for name, a in s.tensors.items():
            raw = npy(os.path.join(GOOD, "dtypes.tns"), name)
            b = np.load(io.BytesIO(raw))
            self.assertEqual(a.dtype, b.dtype)
            self.assertEqual(a.tobytes(), b.tobytes(), name)
        p = os.path.join(GOOD, "nonfinite.tns")
        for name, a in privada.read(p).tensors.items():
            self.assertEqual(a.tobytes(), np.load(io.BytesIO(npy(p, name)))
                             .tobytes())

    def test_error_codes_and_offsets(self):
        cases = {"version-2": ("TS_E_VERSION", 8),
                 "header-flags": ("TS_E_FORMAT", 10),
                 "dtype-6": ("TS_E_FORMAT", 31),
                 "no-checksum": ("TS_E_CHECKSUM", 0),
                 "bad-checksum": ("TS_E_CHECKSUM", None),
                 "truncated-frame": ("TS_E_TRUNCATED", 0),
                 "window-too-large": ("TS_E_LIMIT", 0),
                 "record-huge": ("TS_E_LIMIT", 20),
                 "elements-limit": ("TS_E_LIMIT", None),
                 "dims-overflow": ("TS_E_OVERFLOW", None),
                 "rows-too-few": ("TS_E_TRUNCATED", None),
                 "end-missing": ("TS_E_TRUNCATED", None)}
        for name, (code, off) in cases.items():
            with self.assertRaises(privada.FormatError) as cm:
                privada.read(os.path.join(BAD, name + ".tns"))
            self.assertEqual(cm.exception.code, code, name)
            if off is not None:
                self.assertEqual(cm.exception.offset, off, name)
            err = slurp(os.path.join(BAD, name + ".err")).strip()
            self.assertTrue(err, name)

    def test_huge_declarations_allocate_nothing(self):
        import tracemalloc
        for name in ("record-huge", "tensor-header-huge", "ancillary-huge",
                     "elements-limit", "rows-limit", "chunk-overflow",
                     "meta-count-limit", "value-length-limit"):
            tracemalloc.start()
            with self.assertRaises(privada.FormatError):
                privada.read(os.path.join(BAD, name + ".tns"))
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            self.assertLess(peak, 4 << 20, name)

    def test_products_overflow_left_to_right(self):
        """dims (1, 2^63, 4, 0): the product overflows before the 0, an
        error as in the reference reader; (1, 0, 2^63, 4) never overflows,
        is valid, and numpy cannot shape it: TS_E_LIMIT (a lower limit)."""
        import struct
        import zstandard

        def rec(t, body):
            return struct.pack("<IIQ", t, 0, len(body)) + body

        def stream(dims):
            body = (struct.pack("<H", 1) + b"x" +
                    struct.pack("<BBH", 1, len(dims), 0) +
                    b"".join(struct.pack("<Q", d) for d in dims) +
                    struct.pack("<I", 0))
            s = (b"\x93TNS\r\n\x1a\n\x01\x00\x00\x00" + rec(2, body) +
                 rec(3, struct.pack("<Q", 1)) + rec(4, struct.pack("<Q", 1))
                 + rec(5, struct.pack("<QQQ", 3, 1, 1)))
            return zstandard.ZstdCompressor(write_checksum=True).compress(s)

        for dims, code, c in (([1, 1 << 63, 4, 0], "TS_E_OVERFLOW", 65),
                              ([1, 0, 1 << 63, 4], "TS_E_LIMIT", 0)):
            path = os.path.join(tempfile.mkdtemp(prefix="privada-test."),
                                "ov.tns")
            with open(path, "wb") as f:
                f.write(stream(dims))
            self.assertEqual(run("tns", "verify", path,
                                 check=False).returncode, c)
            with self.assertRaises(privada.FormatError) as cm:
                privada.read(path)
            self.assertEqual(cm.exception.code, code)
            shutil.rmtree(os.path.dirname(path))
        self.assertEqual(privada.read_meta(io.BytesIO(stream(
            [1, 0, 1 << 63, 4]))).info["x"].dims, [1, 0, 1 << 63, 4])

    def test_truncation_anywhere_is_detected(self):
        data = slurp(os.path.join(GOOD, "example.tns"), "rb")
        for n in range(len(data)):
            with self.assertRaises(privada.FormatError) as cm:
                privada.read(io.BytesIO(data[:n]))
            self.assertIn(cm.exception.code, ("TS_E_TRUNCATED",
                                              "TS_E_CHECKSUM", "TS_E_ZSTD"))


class RoundTrip(Tmp):
    def c_streams(self):
        """Streams written by the C tools: every dtype and shape through
        from-npy, good vectors, featurize's streamed output."""
        rng = np.random.default_rng(5)
        out = []
        for dt in ("<f4", "<f8", "<i4", "<i8", "|u1"):
            for k, shape in enumerate([(7,), (5, 3), (2, 3, 4), (0, 3), ()]):
                f = self.p("a%s%d.npy" % (dt[1:], k))
                np.save(f, (rng.standard_normal(shape) * 50).astype(dt))
                run("tns", "from-npy", "-o", f[:-4] + ".tns", f)
                out.append(f[:-4] + ".tns")
        for v in ("f32-streamed", "dtypes", "nonfinite", "zero-rows",
                  "scalar", "multi-frame", "metadata-utf8", "example"):
            out.append(os.path.join(GOOD, v + ".tns"))
        run("featurize", "--label", "label", "--dataset", "blobs",
            "--classes", "3", "-o", self.p("blobs.tns"),
            os.path.join(DPSGD, "blobs.csv"))
        out.append(self.p("blobs.tns"))
        run("covest", "--epsilon", "1", "--delta", "1e-6", "--clip", "1",
            "-q", "-o", self.p("cov.tns"), self.p("blobs.tns"))
        out.append(self.p("cov.tns"))
        run("gmm-fit", "--by-label", "--classes", "3", "--epsilon", "1",
            "--delta", "1e-5", "--clip", "3", "-q", "-o", self.p("gmm.tns"),
            self.p("blobs.tns"))
        run("gmm-fit", "sample", "--model", self.p("gmm.tns"), "--n", "500",
            "-o", self.p("synth.tns"))
        out += [self.p("gmm.tns"), self.p("synth.tns")]
        return out

    def test_c_to_python_to_c(self):
        for src in self.c_streams():
            s = privada.read(src)
            dst = self.p("py.tns")
            with privada.Writer(dst, inherit=[s], row_local=True) as w:
                for name, a in s.tensors.items():
                    if name in s.streamed:
                        w.begin(name, a.dtype, a.shape[1:],
                                s.tensor_meta[name])
                        for i in range(0, len(a), 2):
                            w.rows(a[i:i + 2])
                        w.end()
                    else:
                        w.tensor(name, a, s.tensor_meta[name])
            run("tns", "verify", dst)
            a, b = info(src), info(dst)
            self.assertEqual(a["tensors"], b["tensors"], src)
            led = {k: v for k, v in a["metadata"].items()
                   if not k.startswith("prov.")}
            got = {k: v for k, v in b["metadata"].items()
                   if not k.startswith("prov.")}
            self.assertEqual(led, got, src)
            for t in a["tensors"]:
                self.assertEqual(npy(src, t["name"]), npy(dst, t["name"]))
            self.assertEqual(rdp_ledger([src]), rdp_ledger([dst]), src)

    def test_python_to_c_to_python(self):
        rng = np.random.default_rng(9)
        t = {}
        for dt in ("<f4", "<f8", "<i4", "<i8", "u1"):
            t["m_" + dt[1:]] = (rng.standard_normal((6, 2, 3)) * 90
                                ).astype(dt)
        t["scalar"] = np.float64(-0.0)
        t["empty"] = np.zeros((0, 4), np.int32)
        t["nonfinite"] = np.array([np.nan, -np.inf, np.inf, -0.0, 5e-324])
        nan_payload = np.array([0x7fc00001, 0xffbfffff, 0x7f800001],
                               np.uint32).view("<f4")
        t["payloads"] = nan_payload
        blocks = [rng.integers(-9, 9, (k, 5)).astype("<i8")
                  for k in (3, 0, 1, 7)]
        t["streamed"] = iter(blocks)
        t["streamed_f"] = (b.astype("<f4") for b in blocks)
        cov = self.ledger_stream("rel.tns", *entry(ID1, "mnist"),
                                 "dp.raw.usps=aggregate")
        privada.write(self.p("py.tns"), t, meta={"units": "m"},
                      inherit=[cov], tensor_meta={"m_f4": {"a.b": "c"}})
        run("tns", "cat", "-o", self.p("c.tns"), self.p("py.tns"))
        back = privada.read(self.p("c.tns"))
        self.assertEqual(back.streamed, {"streamed", "streamed_f"})
        want = dict(t)
        want["streamed"] = np.concatenate(blocks)
        want["streamed_f"] = np.concatenate(blocks).astype("<f4")
        self.assertEqual(list(back), list(want))
        for k, a in want.items():
            a = np.asarray(a)
            self.assertEqual(back[k].dtype, a.dtype.newbyteorder("<"), k)
            self.assertEqual(back[k].shape, a.shape, k)
            self.assertEqual(back[k].tobytes(), a.tobytes(), k)
        self.assertEqual(back.tensor_meta["m_f4"], {"a.b": "c"})
        self.assertEqual(back.meta["units"], "m")
        self.assertEqual(back.ledger.raw, {"usps": "aggregate"})
        self.assertEqual(set(back.ledger.releases), {ID1})
        self.assertEqual(rdp_ledger([self.p("py.tns")]),
                         rdp_ledger([self.p("c.tns")]))
        self.assertEqual(rdp_ledger([self.p("c.tns")]),
                         rdp_ledger([cov]))

    def test_iter_rows_equals_read(self):
        src = os.path.join(GOOD, "f32-streamed.tns")
        whole = privada.read(src)
        for name, a in whole.tensors.items():
            for chunk in (1, 2, 3, 100):
                blocks = list(privada.iter_rows(src, name, chunk))
                self.assertTrue(all(len(b) <= chunk for b in blocks))
                self.assertEqual(np.concatenate(blocks).tobytes(),
                                 a.tobytes())
        with self.assertRaises(KeyError):
            list(privada.iter_rows(src, "nope"))

    def test_large_input_in_any_pieces(self):
        """A stream of several MiB of input (more than one input buffer
        and one decoder read), from the C writer and from Python, read
        whole, through a file object that returns short reads of any
        length, truncated and damaged at buffer boundaries: the same rows,
        or an error, never other rows."""
        rng = np.random.default_rng(7)
        a = rng.integers(0, 256, (3000, 1234), dtype=np.uint8)
        np.save(self.p("big.npy"), a)
        run("tns", "from-npy", "-o", self.p("c.tns"), self.p("big.npy"))
        privada.write(self.p("py.tns"), {"big": a}, inherit=[])

        class Dribble(io.RawIOBase):
            def __init__(self, data, seed):
                self.data, self.pos = data, 0
                self.rng = np.random.default_rng(seed)

            def readable(self):
                return True

            def readinto(self, b):
                n = min(len(b), int(self.rng.integers(1, 1 << 17)),
                        len(self.data) - self.pos)
                b[:n] = self.data[self.pos:self.pos + n]
                self.pos += n
                return n

        for path in (self.p("c.tns"), self.p("py.tns")):
            data = slurp(path, "rb")
            self.assertGreater(len(data), 3 << 20)
            name = "big" if path.endswith("py.tns") else "x"
            self.assertEqual(privada.read(path)[name].tobytes(), a.tobytes())
            for seed in range(3):
                s = privada.read(Dribble(data, seed))
                self.assertEqual(s[name].tobytes(), a.tobytes())
            for mb in (1, 2, 3):
                for d in (-33, -32, -31, -3, -1, 0, 1, 2, 31, 32, 33):
                    n = (mb << 20) + d
                    with self.assertRaises(privada.FormatError) as cm:
                        privada.read(io.BytesIO(data[:n]))
                    self.assertEqual(cm.exception.code, "TS_E_TRUNCATED",
                                     "%s cut at %d" % (path, n))
                    bad = bytearray(data)
                    bad[n] ^= 0x10
                    with self.assertRaises(privada.FormatError,
                                           msg="%s byte %d" % (path, n)):
                        privada.read(io.BytesIO(bytes(bad)))

    def test_iter_rows_error_after_rows(self):
        """A stream damaged after its rows: rows come, then the error."""
        rows = np.arange(40000, dtype="<f8").reshape(-1, 4)
        privada.write(self.p("a.tns"), {"x": rows}, inherit=[])
        data = bytearray(slurp(self.p("a.tns"), "rb"))
        data[-1] ^= 0xff               # the content checksum
        got = []
        with self.assertRaises(privada.FormatError) as cm:
            for b in privada.iter_rows(io.BytesIO(bytes(data)), "x", 1000):
                got.append(b)
        self.assertEqual(cm.exception.code, "TS_E_CHECKSUM")
        self.assertEqual(np.concatenate(got).tobytes(), rows.tobytes())


class Writer(Tmp):
    def test_no_inherit_is_unknown_provenance(self):
        privada.write(self.p("a.tns"), {"x": np.ones((2, 2), "<f4")})
        s = privada.read(self.p("a.tns"))
        self.assertEqual(s.meta["dp.provenance"], "unknown")
        r = rdp_ledger([self.p("a.tns")])
        self.assertEqual([d["verdict"] for d in r], ["unknown_provenance"])
        out = run("rdp-account", "ledger", "--delta", "1e-5", "--budget",
                  "10", self.p("a.tns"), check=False)
        self.assertEqual(out.returncode, 1)

    def test_refuses_reserved_keys_by_hand(self):
        for k in ("dp.raw.mnist", "dp.release.%s.dataset" % ID1,
                  "dp.provenance", "prov.tool", "split.part"):
            with self.assertRaises(privada.LedgerError):
                privada.write(self.p("a.tns"), {"x": np.ones(2)},
                              meta={k: "x"})
            self.assertFalse(os.path.exists(self.p("a.tns")))
        with self.assertRaises(privada.LedgerError):
            with privada.Writer(self.p("b.tns")) as w:
                w.tensor("x", np.ones(2), meta={"dp.raw.a": "row-local"})

    def test_refuses_what_the_format_cannot_hold(self):
        for bad in ({"x": np.ones(2, np.float16)},
                    {"x": np.ones(2, bool)},
                    {"bad name": np.ones(2)},
                    {".x": np.ones(2)},
                    {"x": np.ones((1,) * 9)}):
            with self.assertRaises((TypeError, ValueError)):
                privada.write(self.p("a.tns"), bad)
        with self.assertRaises(ValueError):
            privada.write(self.p("a.tns"), {"x": np.ones(2)},
                          meta={"Bad": "1"})

    def test_big_endian_input_is_written_little_endian(self):
        a = np.arange(5, dtype=">i4")
        privada.write(self.p("a.tns"), {"x": a})
        self.assertEqual(np.load(io.BytesIO(npy(self.p("a.tns"), "x")))
                         .tolist(), a.tolist())

    def test_failure_leaves_nothing_or_a_stream_readers_reject(self):
        with self.assertRaises(RuntimeError):
            with privada.Writer(self.p("a.tns")) as w:
                w.tensor("x", np.ones((3, 2)))
                raise RuntimeError("stop")
        self.assertEqual(os.listdir(self.dir), [])
        with open(self.p("b.tns"), "wb") as f:
            with self.assertRaises(RuntimeError):
                with privada.Writer(f) as w:
                    w.tensor("x", np.ones((3, 2)))
                    raise RuntimeError("stop")
        self.assertEqual(run("tns", "verify", self.p("b.tns"),
                             check=False).returncode, 65)
        with self.assertRaises(privada.FormatError):
            privada.read(self.p("b.tns"))
        with self.assertRaises(ValueError):
            privada.write(self.p("c.tns"), {"x": np.ones(2), "y z": 1})
        self.assertEqual(sorted(os.listdir(self.dir)), ["b.tns"])
        privada.write(self.p("d.tns"), {"x": np.ones(2)})
        self.assertEqual(oct(os.stat(self.p("d.tns")).st_mode & 0o777),
                         oct(0o666 & ~_umask()))

    def test_ledger_merge_by_strength_and_id(self):
        a = self.ledger_stream("a.tns", *entry(ID1, "mnist"),
                               "dp.raw.usps=row-local")
        b = self.ledger_stream("b.tns", *entry(ID1, "mnist"),
                               *entry(ID2, "usps"),
                               "dp.raw.usps=aggregate")
        privada.write(self.p("o.tns"), {"x": np.ones(1)}, inherit=[a, b],
                      row_local=True)
        s = privada.read(self.p("o.tns"))
        self.assertEqual(s.ledger.raw, {"usps": "aggregate"})
        self.assertEqual(set(s.ledger.releases), {ID1, ID2})
        self.assertNotIn("dp.provenance", s.meta)
        # The C tools merge the same way.
        run("tns", "pick", "-i", b, "-o", self.p("b2.tns"), "--rename",
            "x=y", "x")
        run("tns", "cat", "-o", self.p("c.tns"), a, self.p("b2.tns"))
        c = privada.read(self.p("c.tns"))
        self.assertEqual(c.ledger.to_meta(), s.ledger.to_meta())
        self.assertEqual(rdp_ledger([self.p("o.tns")]),
                         rdp_ledger([a, b]))

    def test_row_local_marks_become_aggregate_by_default(self):
        run("featurize", "--label", "label", "--dataset", "blobs",
            "--classes", "3", "-o", self.p("f.tns"),
            os.path.join(DPSGD, "blobs.csv"))
        privada.write(self.p("o.tns"), {"p": np.ones(60, "<i4")},
                      inherit=[self.p("f.tns")])
        self.assertEqual(privada.read(self.p("o.tns")).meta["dp.raw.blobs"],
                         "aggregate")

    def test_conflict_is_an_error_and_writes_nothing(self):
        a = self.ledger_stream("a.tns", *entry(ID1, "mnist"))
        b = self.ledger_stream("b.tns", *entry(ID1, "mnist",
                                               rdp="1,1,1,1,1"))
        with self.assertRaises(privada.LedgerError) as cm:
            privada.write(self.p("o.tns"), {"x": np.ones(1)},
                          inherit=[a, b])
        self.assertIn("dp.release.%s.rdp" % ID1, str(cm.exception))
        self.assertFalse(os.path.exists(self.p("o.tns")))
        run("tns", "pick", "-i", b, "-o", self.p("b2.tns"), "--rename",
            "x=y", "x")
        self.assertEqual(run("tns", "cat", "-o", self.p("c.tns"), a,
                             self.p("b2.tns"), check=False).returncode, 65)

    def test_two_parts_of_a_split_mix(self):
        run("featurize", "--label", "label", "--dataset", "blobs",
            "--classes", "3", "-o", self.p("f.tns"),
            os.path.join(DPSGD, "blobs.csv"))
        run("tns", "split", "--parts", "2", "--prefix",
            self.p("part-"), self.p("f.tns"))
        p0, p1 = self.p("part-0.tns"), self.p("part-1.tns")
        privada.write(self.p("one.tns"), {"x": np.ones(1)}, inherit=[p0])
        one = privada.read(self.p("one.tns")).meta
        m0 = privada.read_meta(p0).meta
        for k in ("split.part", "split.parent", "split.id"):
            self.assertEqual(one[k], m0[k])
        privada.write(self.p("two.tns"), {"x": np.ones(1)},
                      inherit=[p0, p1])
        two = privada.read(self.p("two.tns")).meta
        self.assertEqual(two["split.part"], "mixed")
        self.assertEqual(two["split.mixed_by"], "privada.py: " + p1)
        # A part with a DP release of the whole dataset stays the part.
        rel = self.ledger_stream("rel.tns", *entry(ID1, "blobs"))
        privada.write(self.p("pr.tns"), {"x": np.ones(1)},
                      inherit=[p0, rel])
        self.assertEqual(privada.read(self.p("pr.tns")).meta["split.part"],
                         m0["split.part"])
        # The whole dataset with a part mixes it, in either order.
        for order in ([p0, self.p("f.tns")], [self.p("f.tns"), p0]):
            privada.write(self.p("w.tns"), {"x": np.ones(1)},
                          inherit=order)
            self.assertEqual(privada.read(self.p("w.tns"))
                             .meta["split.part"], "mixed")


class LedgerReport(Tmp):
    KEYS = ("dataset", "releases", "epsilon", "order", "eps_rdp",
            "eps_basic", "delta_extra", "neighbours", "seeded", "raw",
            "data_dependent", "verdict", "public", "assumed_raw")

    def same(self, paths, delta=1e-5, public=()):
        extra = ["--public", ",".join(public)] if public else []
        c = rdp_ledger(paths, delta, *extra)
        p = privada.ledger_report(paths, delta, public=public)
        self.assertEqual([d["dataset"] for d in c],
                         [d["dataset"] for d in p])
        n = 0
        for a, b in zip(c, p):
            for k in self.KEYS:
                if k not in b or a["dataset"].startswith("("):
                    continue
                x, y = a.get(k), b.get(k)
                if y == math.inf:
                    y = None        # JSON has no infinity: null
                if isinstance(x, float) and isinstance(y, float):
                    self.assertLessEqual(abs(x - y), 1e-12 * max(1, abs(x)),
                                         (a["dataset"], k, x, y))
                    n += 1
                elif k in ("order", "eps_rdp", "eps_basic", "delta_extra") \
                        and y is None:
                    continue        # no epsilon: C prints its zeros
                else:
                    self.assertEqual(x, y, (a["dataset"], k))
            self.assertEqual(a["verdict"], b["verdict"], a["dataset"])
        return c, p, n

    def test_tools_outputs(self):
        fx = os.path.join(DPSGD, "blobs.csv")
        run("featurize", "--label", "label", "--dataset", "blobs",
            "--classes", "3", "-o", self.p("b.tns"), fx)
        run("featurize", "--label", "label", "--dataset", "tiny",
            "--classes", "3", "-o", self.p("t.tns"),
            os.path.join(DPSGD, "tiny.csv"))
        run("dpsgd-train", "--epsilon", "2", "--delta", "1e-5", "--epochs",
            "2", "--batch", "8", "--classes", "3", "--public-records", "60",
            "-q", "-o", self.p("m.tns"), self.p("b.tns"))
        run("dpsgd-train", "--sigma", "1", "--epochs", "2", "--batch", "8",
            "--classes", "3", "--public-records", "60", "-S", "7", "-q",
            "-o", self.p("seeded.tns"), self.p("b.tns"))
        run("covest", "--epsilon", "1", "--delta", "1e-6", "--clip", "1",
            "-q", "-o", self.p("c.tns"), self.p("t.tns"))
        run("covest", "--epsilon", "0.5", "--delta", "1e-6", "--clip", "1",
            "-q", "-o", self.p("c2.tns"), self.p("b.tns"))
        m, c, c2 = self.p("m.tns"), self.p("c.tns"), self.p("c2.tns")
        total = 0
        for paths in ([m], [c], [m, c], [m, c2], [m, c, c2, m],
                      [m, self.p("seeded.tns")], [m, self.p("b.tns")],
                      [c, self.p("t.tns")]):
            for delta in (1e-5, 1e-3, 0.3):
                total += self.same(paths, delta)[2]
        self.same([m, self.p("b.tns")], 1e-5, public=("blobs",))
        self.same([c, self.p("b.tns")], 1e-5, public=("blobs",))
        self.assertGreater(total, 40)
        r = privada.ledger_report([m, c2], 1e-5)
        self.assertEqual(r[0].dataset, "blobs")
        self.assertEqual(r[0].releases, 2)
        self.assertEqual(r[0].verdict, "private")

    def test_crafted_ledgers(self):
        cases = [
            (entry(ID1, "a"), entry(ID2, "a", rdp="1,2,3,4,5")),
            (entry(ID1, "a", orders="2,3,4", rdp="0.1,0.2,0.3"),
             entry(ID2, "a")),
            (entry(ID1, "a", orders=None, rdp=None, epsilon="0.7",
                   delta="1e-7"), entry(ID2, "a", delta="1e-8")),
            (entry(ID1, "a", neighbours="replace_one"), entry(ID2, "a")),
            (entry(ID1, "a", seeded="true"), entry(ID2, "b")),
            (entry(ID1, "a", delta="2e-5"), entry(ID2, "b", rdp="inf,inf,"
                                                  "inf,inf,inf")),
            (entry(ID1, "a", tv="1e-9", tv_epsilon="0.5",
                   delta=repr((1 + math.exp(0.5)) * 1e-9)),
             entry(ID2, "a", rdp="2,4,8,16,32")),
            (entry(ID1, "a", orders=None, rdp=None, epsilon="0.5",
                   delta="2e-5"), entry(ID2, "b", orders=None, rdp=None,
                                        epsilon="0.1", delta="1e-6")),
            (entry(ID1, "a", assumed_raw="true"),
             entry(ID2, "c", data_dependent="true")),
        ]
        for i, (e1, e2) in enumerate(cases):
            a = self.ledger_stream("a%d.tns" % i, *e1)
            b = self.ledger_stream("b%d.tns" % i, *e2)
            for delta in (1e-5, 1e-2):
                self.same([a, b], delta)

    def test_unknown_and_no_ledger(self):
        x = self.x_tns()
        r = privada.ledger_report([x], 1e-5)
        self.assertEqual(r[-1].verdict, "unknown_provenance")
        self.same([x])
        led = self.ledger_stream("l.tns", *entry(ID1, "a"))
        self.same([led, x])


if __name__ == "__main__":
    unittest.main()
