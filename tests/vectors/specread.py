#!/usr/bin/env python3
"""specread.py: an independent reader of the decompressed layer of a tensor
stream, written from formats/tensor-stream.md (sections 3 to 9) alone, to
check that the spec is enough and that the vectors say what they claim.

Usage: specread.py FILE, where FILE holds the stream bytes (the output of
zstd -dc).  On success, prints one line per tensor ("name dtype [dims]
values...", values only for tensors of at most 16 elements) and one per
metadata entry, and exits 0; otherwise prints "specread: offset N: what"
on stderr and exits 1.  With several files, prints "FILE: ok" or
"FILE: offset N: what" for each and exits 0.
"""
import re
import struct
import sys

MAGIC = b"\x93TNS\r\n\x1a\n"
DTYPES = {1: ("f32", "<f", 4), 2: ("f64", "<d", 8), 3: ("i32", "<i", 4),
          4: ("i64", "<q", 8), 5: ("u8", "<B", 1)}
KEY = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*$")
NAME = re.compile(r"^[A-Za-z0-9_./-]+$")
U64 = 2**64 - 1
MAX_HEADER, MAX_ELEMS, MAX_META, MAX_VALUE = 2**24, 2**40, 65536, 2**20


class Bad(Exception):
    def __init__(self, off, what):
        super().__init__("offset %d: %s" % (off, what))


class Cursor:
    def __init__(self, data, off, end):
        self.d, self.off, self.end = data, off, end

    def take(self, n, what):
        if self.end - self.off < n:
            raise Bad(self.off, what + " runs past the end")
        b = self.d[self.off:self.off + n]
        self.off += n
        return b

    def uint(self, n, what):
        return int.from_bytes(self.take(n, what), "little")


def meta_block(c, into, where):
    count = c.uint(4, "metadata count")
    if count > MAX_META:
        raise Bad(c.off - 4, where + ": metadata count over the limit")
    for _ in range(count):
        kl = c.uint(2, "key length")
        if not 1 <= kl <= 255:
            raise Bad(c.off - 2, where + ": key length")
        key = c.take(kl, "key").decode("latin-1")
        if not KEY.match(key):
            raise Bad(c.off - kl, where + ": bad key %r" % key)
        if key in into:
            raise Bad(c.off - kl, where + ": duplicate key %r" % key)
        if c.uint(1, "value type") != 1:
            raise Bad(c.off - 1, where + ": value type")
        vl = c.uint(4, "value length")
        if vl > MAX_VALUE:
            raise Bad(c.off - 4, where + ": value length over the limit")
        raw = c.take(vl, "value")
        try:
            val = raw.decode("utf-8", errors="strict")
        except UnicodeDecodeError:
            raise Bad(c.off - vl, where + ": value is not UTF-8")
        if "\0" in val:
            raise Bad(c.off - vl, where + ": NUL in value")
        into[key] = val


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def read(d):
    out = []
    if len(d) < 12:
        raise Bad(len(d), "truncated header")
    if d[:8] != MAGIC:
        raise Bad(0, "bad magic")
    if d[8] != 1:
        raise Bad(8, "major version %d" % d[8])
    if d[9] == 0 and int.from_bytes(d[10:12], "little") != 0:
        raise Bad(10, "header flags")
    off, records, names, total_rows = 12, 0, set(), 0
    smeta = {}
    cur = None  # [name, dtype, dims, streamed, rowbytes, rows, data]
    while True:
        if len(d) - off < 16:
            raise Bad(off, "truncated record header")
        rtype, rflags, blen = struct.unpack_from("<IIQ", d, off)
        at, body = off, off + 16
        if rflags:
            raise Bad(at + 4, "record flags")
        if blen > len(d) - body:
            raise Bad(at + 8, "body runs past the end of the stream")
        off = body + blen
        c = Cursor(d, body, off)
        if rtype == 5 and cur is None:
            if blen != 24:
                raise Bad(at + 8, "end record length")
            if struct.unpack_from("<QQQ", d, body) != \
                    (records, len(names), total_rows):
                raise Bad(body, "end record counts")
            if off != len(d):
                raise Bad(off, "trailing bytes after the end record")
            break
        records += 1
        if rtype & 0x80:
            if blen > MAX_HEADER:
                raise Bad(at + 8, "ancillary record over the limit")
            continue
        if cur is None and rtype == 1:
            if blen > MAX_HEADER:
                raise Bad(at + 8, "record over the limit")
            meta_block(c, smeta, "stream metadata")
            if c.off != off:
                raise Bad(c.off, "bytes after the metadata block")
        elif cur is None and rtype == 2:
            if blen > MAX_HEADER:
                raise Bad(at + 8, "record over the limit")
            nl = c.uint(2, "name length")
            if not 1 <= nl <= 255:
                raise Bad(body, "name length")
            name = c.take(nl, "name").decode("latin-1")
            if not NAME.match(name) or name[0] in "/.":
                raise Bad(body + 2, "bad name %r" % name)
            if name in names:
                raise Bad(body + 2, "duplicate name %r" % name)
            if len(names) >= 65536:
                raise Bad(body, "too many tensors")
            dtype, ndim = c.uint(1, "dtype"), c.uint(1, "ndim")
            flags = c.uint(2, "flags")
            if dtype not in DTYPES:
                raise Bad(c.off - 4, "dtype %d" % dtype)
            if ndim > 8:
                raise Bad(c.off - 3, "ndim %d" % ndim)
            if flags & ~1 or (flags and ndim == 0):
                raise Bad(c.off - 2, "tensor flags")
            dims = [c.uint(8, "dims") for _ in range(ndim)]
            size = DTYPES[dtype][2]
            rowel = prod(dims[1:])
            if flags:
                if dims[0] != U64:
                    raise Bad(c.off, "streamed dims[0]")
                if rowel * size > U64:
                    raise Bad(c.off, "row size overflows")
                if rowel > MAX_ELEMS:
                    raise Bad(c.off, "row elements over the limit")
            else:
                if prod(dims) > U64 or prod(dims) * size > U64:
                    raise Bad(c.off, "size overflows")
                if prod(dims) > MAX_ELEMS:
                    raise Bad(c.off, "elements over the limit")
            tmeta = {}
            meta_block(c, tmeta, "tensor %r" % name)
            if c.off != off:
                raise Bad(c.off, "bytes after the tensor header")
            names.add(name)
            cur = [name, dtype, dims, bool(flags), rowel * size, 0,
                   bytearray(), tmeta]
        elif cur is not None and rtype == 3:
            nrows = c.uint(8, "nrows")
            if 8 + nrows * cur[4] > U64:
                raise Bad(body, "chunk size overflows")
            if blen != 8 + nrows * cur[4]:
                raise Bad(at + 8, "chunk length")
            limit = U64 if cur[3] else (cur[2][0] if cur[2] else 1)
            if cur[5] + nrows > limit:
                raise Bad(body, "more rows than declared")
            cur[5] += nrows
            if len(cur[6]) < 1024:
                cur[6] += d[body + 8:off]
        elif cur is not None and rtype == 4:
            if blen != 8:
                raise Bad(at + 8, "end-of-tensor length")
            n = c.uint(8, "rows")
            if n != cur[5]:
                raise Bad(body, "end-of-tensor count")
            if not cur[3] and n != (cur[2][0] if cur[2] else 1):
                raise Bad(at, "fewer rows than declared")
            total_rows += n
            if total_rows > U64:
                raise Bad(at, "row total overflows")
            out.append(cur)
            cur = None
        else:
            raise Bad(at, "record type %d here" % rtype)
    return out, smeta


def show(out, smeta):
    for name, dtype, dims, streamed, rowbytes, rows, data, tmeta in out:
        if streamed:
            dims = [rows] + dims[1:]
        dn, fmt, size = DTYPES[dtype]
        line = "%s %s [%s]" % (name, dn, ",".join(map(str, dims)))
        if prod(dims) <= 16:
            vals = [struct.unpack_from(fmt, data, i)[0]
                    for i in range(0, len(data), size)]
            line += "".join(" " + repr(v) for v in vals)
        print(line)
        for k, v in tmeta.items():
            print("  %s=%s" % (k, v))
    for k, v in smeta.items():
        print("meta %s=%s" % (k, v))


def main():
    if len(sys.argv) > 2:
        # Several files: one line each, "FILE: ok" or "FILE: offset N: ...".
        for path in sys.argv[1:]:
            with open(path, "rb") as f:
                d = f.read()
            try:
                read(d)
                print("%s: ok" % path)
            except Bad as e:
                print("%s: %s" % (path, e))
        return 0
    with open(sys.argv[1], "rb") as f:
        d = f.read()
    try:
        show(*read(d))
    except Bad as e:
        print("specread: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
