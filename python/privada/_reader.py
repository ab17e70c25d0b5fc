"""The record layer of a tensor stream (formats/tensor-stream.md, 3 to 11).

events(f, label) parses a stream front to back without seeking and yields
("tensor", info), ("rows", info, src, n), ("tensor_end", info) and finally
("end", stream_metadata).  Every limit is checked on the header that
declares a size, before anything is allocated for it.  A "rows" event
hands the consumer the n data bytes of a chunk: it reads them from src
(src.readinto(memoryview, what) in pieces of its choice, or src.skip(n,
what)) before it asks for the next event, so the rows are decoded straight
into the consumer's buffer, and a consumer that does not keep them reads in
flat memory.  Rows are only known to be good
when the generator has finished without an exception (section 7).
"""

import re

import numpy as np
import zstandard

from ._errors import (FormatError, TRUNCATED, FORMAT, VERSION, LIMIT,
                      OVERFLOW)
from ._frames import FrameSource, zstd_error, READ_SIZE, WINDOW_MAX

MAGIC = b"\x93TNS\r\n\x1a\n"
MAJOR, MINOR = 1, 0
U64_MAX = (1 << 64) - 1
MAX_HEADER = 1 << 24
MAX_NAME = 255
MAX_NDIM = 8
MAX_ELEMS = 1 << 40
MAX_ROWS = 1 << 40
MAX_TENSORS = 65536
MAX_META = 65536
MAX_KEY = 255
MAX_VALUE = 1 << 20

META, TENSOR, CHUNK, TENSOR_END, END = 1, 2, 3, 4, 5
STREAMED = 1

DTYPES = {1: np.dtype("<f4"), 2: np.dtype("<f8"), 3: np.dtype("<i4"),
          4: np.dtype("<i8"), 5: np.dtype("u1")}
DTYPE_NAMES = {1: "f32", 2: "f64", 3: "i32", 4: "i64", 5: "u8"}

NAME_RE = re.compile(rb"[A-Za-z0-9_.\-][A-Za-z0-9_./\-]*\Z")
KEY_RE = re.compile(rb"[a-z0-9_]+(\.[a-z0-9_]+)*\Z")


def u16(b, o):
    return int.from_bytes(b[o:o + 2], "little")


def u32(b, o):
    return int.from_bytes(b[o:o + 4], "little")


def u64(b, o):
    return int.from_bytes(b[o:o + 8], "little")


class TensorInfo:
    """A tensor's header: name, dtype, shape (dims[0] is None while a
    streamed tensor's rows are unknown), streamed, meta, rows seen."""

    def __init__(self, name, code, dims, streamed, meta):
        self.name = name
        self.code = code
        self.dtype = DTYPES[code]
        self.dims = dims
        self.streamed = streamed
        self.meta = meta
        self.row_shape = tuple(dims[1:])
        re_ = 1
        for d in dims[1:]:
            re_ *= d
        self.row_elems = re_
        self.row_bytes = re_ * self.dtype.itemsize
        self.rows = 0

    @property
    def shape(self):
        if not self.dims:
            return ()
        d0 = None if self.streamed and self._open else self.dims[0]
        return (d0,) + self.row_shape

    _open = True

    def __repr__(self):
        return "TensorInfo(%r, %s, %r%s)" % (
            self.name, DTYPE_NAMES[self.code], self.shape,
            ", streamed" if self.streamed else "")


class _Bytes:
    """The stream bytes: the zstd decoder reading a FrameSource."""

    STEP = 1 << 23

    def __init__(self, f):
        self.counter = [0]          # stream offset of the next byte
        self.z = zstandard.ZstdDecompressor(
            max_window_size=WINDOW_MAX).stream_reader(
                FrameSource(f, self.counter), read_size=READ_SIZE,
                read_across_frames=True)

    @property
    def off(self):
        return self.counter[0]

    def _read(self, n):
        try:
            return self.z.read(n)
        except zstandard.ZstdError as e:
            raise zstd_error(e, self.counter) from None

    def read(self, n, what):
        """Exactly n bytes (n bounded by the caller's limits)."""
        parts = []
        got = 0
        while got < n:
            b = self._read(n - got)
            if not b:
                raise FormatError(TRUNCATED, self.off,
                                  "stream ends inside %s" % what)
            parts.append(b)
            got += len(b)
            self.counter[0] += len(b)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readinto(self, mv, what):
        """Fill the writable memoryview mv."""
        got, n = 0, len(mv)
        while got < n:
            try:
                k = self.z.readinto(mv[got:])
            except zstandard.ZstdError as e:
                raise zstd_error(e, self.counter) from None
            if not k:
                raise FormatError(TRUNCATED, self.off,
                                  "stream ends inside %s" % what)
            got += k
            self.counter[0] += k

    def skip(self, n, what):
        while n:
            b = self._read(min(n, self.STEP))
            if not b:
                raise FormatError(TRUNCATED, self.off,
                                  "stream ends inside %s" % what)
            n -= len(b)
            self.counter[0] += len(b)

    def at_end(self):
        """True when no stream bytes follow (reads the rest of the input:
        the remaining frames are checked, their checksums verified)."""
        return not self._read(1)


def _utf8(b):
    if b"\0" in b:
        return None
    try:
        return b.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return None


def parse_meta(body, start, base, where):
    """Parse a metadata block at body[start:]; return (dict, end).
    base is the stream offset of body[0]."""
    def err(code, o, what):
        raise FormatError(code, base + o, where + what)

    n = len(body)
    o = start
    if o + 4 > n:
        err(FORMAT, o, "metadata count runs past the end of the record")
    count = u32(body, o)
    if count > MAX_META:
        err(LIMIT, o, "%d metadata entries exceed the limit %d"
            % (count, MAX_META))
    o += 4
    meta = {}
    for _ in range(count):
        if o + 2 > n:
            err(FORMAT, o, "metadata entry runs past the end of the record")
        klen = u16(body, o)
        if klen < 1 or klen > MAX_KEY:
            err(FORMAT, o, "key length %d (allowed 1 to %d)"
                % (klen, MAX_KEY))
        if o + 2 + klen + 5 > n:
            err(FORMAT, o, "metadata entry runs past the end of the record")
        kb = body[o + 2:o + 2 + klen]
        if not KEY_RE.match(kb):
            err(FORMAT, o + 2, "bad metadata key %r (dotted lower_snake_"
                "case)" % kb)
        key = kb.decode("ascii")
        p = o + 2 + klen
        vtype = body[p]
        if vtype != 1:
            err(FORMAT, p, "key '%s': value type %d (only 1, UTF-8 text)"
                % (key, vtype))
        vlen = u32(body, p + 1)
        if vlen > MAX_VALUE:
            err(LIMIT, p + 1, "key '%s': value of %d bytes exceeds the "
                "limit %d" % (key, vlen, MAX_VALUE))
        if p + 5 + vlen > n:
            err(FORMAT, p + 1, "key '%s': value runs past the end of the "
                "record" % key)
        val = _utf8(body[p + 5:p + 5 + vlen])
        if val is None:
            err(FORMAT, p + 5, "key '%s': value is not UTF-8 without NUL"
                % key)
        if key in meta:
            err(FORMAT, o, "duplicate metadata key '%s'" % key)
        meta[key] = val
        o = p + 5 + vlen
    return meta, o


def _tensor_header(body, base):
    def err(code, o, what):
        raise FormatError(code, base + o, what)

    n = len(body)
    if n < 2:
        err(FORMAT, 0, "tensor header runs past the end of the record")
    nlen = u16(body, 0)
    if nlen < 1 or nlen > MAX_NAME:
        err(FORMAT, 0, "tensor name length %d (allowed 1 to %d)"
            % (nlen, MAX_NAME))
    if 2 + nlen + 4 > n:
        err(FORMAT, 0, "tensor header runs past the end of the record")
    nb = body[2:2 + nlen]
    if not NAME_RE.match(nb) or nb[0:1] in (b".", b"/"):
        err(FORMAT, 2, "bad tensor name %r" % nb)
    name = nb.decode("ascii")
    w = "tensor '%s': " % name
    p = 2 + nlen
    code = body[p]
    if code not in DTYPES:
        err(FORMAT, p, w + "unknown dtype code %d" % code)
    ndim = body[p + 1]
    if ndim > MAX_NDIM:
        err(FORMAT, p + 1, w + "ndim %d (at most %d)" % (ndim, MAX_NDIM))
    flags = u16(body, p + 2)
    if flags & ~STREAMED:
        err(FORMAT, p + 2, w + "tensor flags 0x%04x (only bit 0, STREAMED)"
            % flags)
    streamed = bool(flags & STREAMED)
    p += 4
    if p + 8 * ndim > n:
        err(FORMAT, p, w + "dims run past the end of the record")
    dims = [u64(body, p + 8 * i) for i in range(ndim)]
    meta, end = parse_meta(body, p + 8 * ndim, base, w)
    if end != n:
        err(FORMAT, end, w + "%d bytes after the tensor metadata"
            % (n - end))
    size = DTYPES[code].itemsize
    if not streamed:
        el = 1
        for d in dims:
            el *= d
            if el > U64_MAX:
                err(OVERFLOW, p, w + "product of dims overflows")
        if el * size > U64_MAX:
            err(OVERFLOW, p, w + "data bytes overflow")
        if el > MAX_ELEMS:
            err(LIMIT, p, w + "%d elements exceed the limit %d"
                % (el, MAX_ELEMS))
        if ndim and dims[0] > MAX_ROWS:
            err(LIMIT, p, w + "%d rows exceed the limit %d"
                % (dims[0], MAX_ROWS))
    else:
        if ndim == 0:
            err(FORMAT, p - 2, w + "a scalar cannot be streamed")
        if dims[0] != U64_MAX:
            err(FORMAT, p, w + "streamed tensor with dims[0] %d "
                "(must be UINT64_MAX)" % dims[0])
        re_ = 1
        for d in dims[1:]:
            re_ *= d
            if re_ > U64_MAX:
                err(OVERFLOW, p, w + "product of row dims overflows")
        if re_ * size > U64_MAX:
            err(OVERFLOW, p, w + "row bytes overflow")
        if re_ > MAX_ELEMS:
            err(LIMIT, p, w + "%d row elements exceed the limit %d"
                % (re_, MAX_ELEMS))
    return TensorInfo(name, code, dims, streamed, meta)


def events(f, label=None):
    try:
        yield from _events(f)
    except FormatError as e:
        e.label = label
        raise


def _events(f):
    src = _Bytes(f)
    hdr = src.read(12, "the stream header")
    if hdr[:8] != MAGIC:
        raise FormatError(FORMAT, 0, "bad magic")
    major, minor, hflags = hdr[8], hdr[9], u16(hdr, 10)
    if major != MAJOR:
        raise FormatError(VERSION, 8, "version %d.%d: this reader supports "
                          "major version %d" % (major, minor, MAJOR))
    if hflags and minor <= MINOR:
        raise FormatError(FORMAT, 10, "header flags 0x%04x (must be 0)"
                          % hflags)
    smeta = {}
    names = set()
    records = tensors = total_rows = 0
    cur = None
    while True:
        roff = src.off
        rh = src.read(16, "a record header (before the END record)")
        rtype, rflags, rlen = u32(rh, 0), u32(rh, 4), u64(rh, 8)
        if rflags:
            raise FormatError(FORMAT, roff + 4, "record type %d: record "
                              "flags 0x%08x (must be 0)" % (rtype, rflags))
        anc = bool(rtype & 0x80)
        if rtype in (META, TENSOR) or anc:
            if rlen > MAX_HEADER:
                raise FormatError(LIMIT, roff + 8, "record type %d: body of "
                                  "%d bytes exceeds the limit %d"
                                  % (rtype, rlen, MAX_HEADER))
        if anc:
            src.skip(rlen, "an ancillary record")
            records += 1
            continue
        if cur is None:
            if rtype == META:
                body = src.read(rlen, "a META record")
                m, end = parse_meta(body, 0, roff + 16, "")
                if end != rlen:
                    raise FormatError(FORMAT, roff + 16 + end, "%d bytes "
                                      "after the metadata block"
                                      % (rlen - end))
                for k, v in m.items():
                    if k in smeta:
                        raise FormatError(FORMAT, roff, "duplicate metadata "
                                          "key '%s'" % k)
                    smeta[k] = v
            elif rtype == TENSOR:
                if tensors >= MAX_TENSORS:
                    raise FormatError(LIMIT, roff, "more than %d tensors"
                                      % MAX_TENSORS)
                body = src.read(rlen, "a TENSOR record")
                cur = _tensor_header(body, roff + 16)
                cur.offset = roff
                if cur.name in names:
                    raise FormatError(FORMAT, roff + 18, "duplicate tensor "
                                      "name '%s'" % cur.name)
                names.add(cur.name)
                tensors += 1
                yield ("tensor", cur)
            elif rtype == END:
                if rlen != 24:
                    raise FormatError(FORMAT, roff + 8, "END record of %d "
                                      "bytes (must be 24)" % rlen)
                b = src.read(24, "the END record")
                er, et, eo = u64(b, 0), u64(b, 8), u64(b, 16)
                if er != records:
                    raise FormatError(FORMAT, roff + 16, "END record counts "
                                      "%d records, the stream has %d"
                                      % (er, records))
                if et != tensors:
                    raise FormatError(FORMAT, roff + 24, "END record counts "
                                      "%d tensors, the stream has %d"
                                      % (et, tensors))
                if eo != total_rows:
                    raise FormatError(FORMAT, roff + 32, "END record counts "
                                      "%d rows, the stream has %d"
                                      % (eo, total_rows))
                if not src.at_end():
                    raise FormatError(FORMAT, src.off, "trailing bytes after "
                                      "the END record")
                yield ("end", smeta)
                return
            else:
                what = {CHUNK: "CHUNK", TENSOR_END: "TENSOR_END"}.get(rtype)
                if what:
                    raise FormatError(FORMAT, roff, "%s record outside a "
                                      "tensor" % what)
                raise FormatError(FORMAT, roff, "unknown critical record "
                                  "type %d" % rtype)
        else:
            w = "tensor '%s': " % cur.name
            if rtype == CHUNK:
                if rlen < 8:
                    raise FormatError(FORMAT, roff + 8, w + "CHUNK body of "
                                      "%d bytes (at least 8)" % rlen)
                nrows = u64(src.read(8, "a CHUNK record"), 0)
                want = 8 + nrows * cur.row_bytes
                if want > U64_MAX:
                    raise FormatError(OVERFLOW, roff + 16, w + "chunk of %d "
                                      "rows: length overflows" % nrows)
                if want != rlen:
                    raise FormatError(FORMAT, roff + 8, w + "CHUNK body of %d"
                                      " bytes, %d rows need %d"
                                      % (rlen, nrows, want))
                if cur.streamed:
                    limit = MAX_ROWS
                else:
                    limit = cur.dims[0] if cur.dims else 1
                if cur.rows + nrows > limit:
                    if cur.streamed:
                        raise FormatError(LIMIT, roff + 16, w + "%d rows "
                                          "exceed the limit %d"
                                          % (cur.rows + nrows, MAX_ROWS))
                    raise FormatError(FORMAT, roff + 16, w + "chunk brings "
                                      "the rows to %d, above %d declared"
                                      % (cur.rows + nrows, limit))
                cur.rows += nrows
                left = want - 8
                if left:
                    # The consumer reads exactly left bytes from src
                    # (readinto or skip) before asking for the next event.
                    end = src.off + left
                    yield ("rows", cur, src, left)
                    if src.off != end:
                        raise RuntimeError("rows not consumed")
            elif rtype == TENSOR_END:
                if rlen != 8:
                    raise FormatError(FORMAT, roff + 8, w + "TENSOR_END body "
                                      "of %d bytes (must be 8)" % rlen)
                cnt = u64(src.read(8, "a TENSOR_END record"), 0)
                if cnt != cur.rows:
                    raise FormatError(FORMAT, roff + 16, w + "TENSOR_END "
                                      "counts %d rows, the chunks hold %d"
                                      % (cnt, cur.rows))
                want = (cur.dims[0] if cur.dims else 1)
                if not cur.streamed and cnt != want:
                    raise FormatError(TRUNCATED, roff + 16, w + "%d rows, "
                                      "%d declared" % (cnt, want))
                total_rows += cnt
                if total_rows > U64_MAX:
                    raise FormatError(OVERFLOW, roff + 16, "sum of rows "
                                      "overflows")
                cur._open = False
                if cur.streamed:
                    cur.dims[0] = cnt
                yield ("tensor_end", cur)
                cur = None
            else:
                raise FormatError(FORMAT, roff, w + "record type %d inside "
                                  "a tensor" % rtype)
        records += 1
