"""write and Writer: numpy arrays to a tensor stream, the ledger carried."""

import os
import shlex
import struct
import sys
import tempfile

import numpy as np
import zstandard

from ._reader import (MAGIC, NAME_RE, KEY_RE, MAX_HEADER, MAX_NAME,
                      MAX_NDIM, MAX_ELEMS, MAX_ROWS, MAX_TENSORS, MAX_META,
                      MAX_KEY, MAX_VALUE, U64_MAX, META, TENSOR, CHUNK,
                      TENSOR_END, END, STREAMED, DTYPES)
from ._errors import LedgerError
from ._stream import read_meta
from .ledger import Ledger, merge_split

KINDS = {("f", 4): 1, ("f", 8): 2, ("i", 4): 3, ("i", 8): 4, ("u", 1): 5}
DT = {c: DTYPES[c] for c in DTYPES}
CHUNK_BYTES = 1 << 22
TOOL = "privada.py"
RESERVED = ("dp", "prov", "split")


def _version():
    from . import __version__
    return __version__


def _umask():
    u = os.umask(0)
    os.umask(u)
    return u


def _code(dtype):
    """The dtype code and the little-endian numpy dtype of dtype."""
    dt = np.dtype(dtype)
    c = KINDS.get((dt.kind, dt.itemsize))
    if c is None:
        raise TypeError("dtype %s has no tensor-stream code (f32, f64, i32, "
                        "i64 and u8 only; convert explicitly)" % dtype)
    return c, DT[c]


def _meta_block(meta, what):
    if len(meta) > MAX_META:
        raise ValueError("%s: %d metadata entries (at most %d)"
                         % (what, len(meta), MAX_META))
    out = [struct.pack("<I", len(meta))]
    for k, v in meta.items():
        kb = k.encode("ascii", "replace") if isinstance(k, str) else k
        if not 1 <= len(kb) <= MAX_KEY or not KEY_RE.match(kb):
            raise ValueError("%s: bad metadata key %r (dotted lower_snake_"
                             "case, 1 to 255 bytes)" % (what, k))
        if not isinstance(v, str):
            v = str(v)
        vb = v.encode("utf-8")
        if b"\0" in vb or len(vb) > MAX_VALUE:
            raise ValueError("%s: key '%s': value with NUL or above 1 MiB"
                             % (what, k))
        out.append(struct.pack("<H", len(kb)) + kb +
                   struct.pack("<BI", 1, len(vb)) + vb)
    return b"".join(out)


def _check_name(name, seen):
    nb = name.encode("ascii", "replace")
    if not 1 <= len(nb) <= MAX_NAME or not NAME_RE.match(nb) or \
            nb[:1] in (b".", b"/"):
        raise ValueError("bad tensor name %r ([A-Za-z0-9_./-], 1 to 255, "
                         "not starting with . or /)" % name)
    if name in seen:
        raise ValueError("duplicate tensor name %r" % name)
    if len(seen) >= MAX_TENSORS:
        raise ValueError("more than %d tensors" % MAX_TENSORS)
    seen.add(name)
    return nb


def _check_user_meta(meta, what):
    for k in meta:
        if k.split(".")[0] in RESERVED:
            raise LedgerError("%s: key '%s': the dp., prov. and split. keys "
                              "are the ledger's and the provenance's, never "
                              "given by hand (use inherit=)" % (what, k))


class Writer:
    """Write a tensor stream (formats/tensor-stream.md) front to back.

        with Writer("out.tns", inherit=[stream]) as w:
            w.tensor("X", X)                  # rows known
            w.begin("p", "f32", (10,))         # rows streamed
            for block in blocks: w.rows(block)
            w.end()

    meta: stream metadata (application keys; dp.*, prov.* and split.* are
    refused).  inherit: the streams (Stream objects or paths) the data
    derives from; their ledgers are merged into the output as the tools
    merge them (raw marks by strength, releases by id, a conflict is a
    LedgerError), their split.* keys by the partition rules, their other
    stream metadata copied (the first input's value kept).  Without
    inherit, the output carries dp.provenance = unknown, which accountants
    and DP tools treat as not private.  row_local: the caller declares
    every output row a function of one input row (a per-row transform);
    otherwise the raw marks (dp.raw.*) become 'aggregate', as for any value
    computed from several records without privacy.

    Stream metadata is written last, after the tensors, in one META record.
    A path is written as a hidden temporary file beside it, renamed into
    place by close(); an exception inside the with block removes it (a
    file object is left without its END record, so that every reader
    rejects what was written)."""

    def __init__(self, dst, meta=None, inherit=(), row_local=False,
                 level=3):
        meta = dict(meta or {})
        _check_user_meta(meta, "meta")
        inputs = []
        for s in inherit:
            if not hasattr(s, "meta"):
                s = read_meta(s)
            inputs.append(s)
        led = Ledger()
        smeta = {}
        for s in inputs:
            led.merge(s.ledger, s.name or "input")
            for k, v in s.meta.items():
                if k.split(".")[0] not in RESERVED:
                    smeta.setdefault(k, v)
        if not inputs:
            led.provenance = "unknown"
        elif not row_local:
            led = led.aggregated()
        smeta.update(meta)
        smeta.update(merge_split([(s.name or "<stream>", s.meta)
                                  for s in inputs], TOOL))
        smeta.update(led.to_meta())
        smeta["prov.tool"] = TOOL
        smeta["prov.version"] = _version()
        args = " ".join(shlex.quote(a) if a else "''" for a in sys.argv[1:])
        smeta["prov.args"] = args
        for i, s in enumerate(inputs):
            smeta["prov.input.%d.name" % i] = s.name or "<stream>"
        self._meta_body = _meta_block(smeta, "stream metadata")
        if len(self._meta_body) > MAX_HEADER:
            raise ValueError("stream metadata above 16 MiB")
        self.meta = smeta
        self._tmp = None
        if isinstance(dst, (str, bytes, os.PathLike)):
            dst = os.fsdecode(dst)
            if os.path.exists(dst) and not os.path.isfile(dst):
                self._f = open(dst, "wb")      # a device or a FIFO
            else:
                d, b = os.path.split(dst)
                fd, self._tmp = tempfile.mkstemp(
                    prefix="." + b + ".privada-tmp.", dir=d or ".")
                os.fchmod(fd, 0o666 & ~_umask())
                self._f = os.fdopen(fd, "wb")
                self._dst = dst
            self._close = True
        else:
            self._f = dst
            self._close = False
        cctx = zstandard.ZstdCompressor(level=level, write_checksum=True)
        self._z = cctx.stream_writer(self._f, closefd=False)
        self._z.write(MAGIC + b"\x01\x00\x00\x00")
        self._names = set()
        self._records = self._tensors = self._rows = 0
        self._cur = None
        self._done = False

    def _record(self, rtype, body_parts, length):
        self._z.write(struct.pack("<IIQ", rtype, 0, length))
        for p in body_parts:
            self._z.write(p)
        if rtype != END:
            self._records += 1

    def _header(self, name, dtype, dims, streamed, meta):
        if self._cur is not None:
            raise RuntimeError("tensor '%s' not ended" % self._cur[0])
        meta = dict(meta or {})
        for k in meta:
            if k.startswith("dp."):
                raise LedgerError("tensor '%s': key '%s': dp. keys live in "
                                  "the stream metadata, written from "
                                  "inherit= only" % (name, k))
        nb = _check_name(name, self._names)
        code, dt = _code(dtype)
        if len(dims) > MAX_NDIM:
            raise ValueError("tensor '%s': %d dims (at most %d)"
                             % (name, len(dims), MAX_NDIM))
        row = 1
        for d in dims[1:]:
            row *= d
        if row > MAX_ELEMS or (not streamed and dims and
                               (dims[0] * row > MAX_ELEMS or
                                dims[0] > MAX_ROWS)):
            raise ValueError("tensor '%s': above the element limit 2^40"
                             % name)
        ddims = list(dims)
        if streamed:
            ddims[0] = U64_MAX
        body = (struct.pack("<H", len(nb)) + nb +
                struct.pack("<BBH", code, len(dims), STREAMED if streamed
                            else 0) +
                b"".join(struct.pack("<Q", d) for d in ddims) +
                _meta_block(meta, "tensor '%s'" % name))
        if len(body) > MAX_HEADER:
            raise ValueError("tensor '%s': header above 16 MiB" % name)
        self._record(TENSOR, [body], len(body))
        self._tensors += 1
        self._cur = [name, dt, tuple(dims[1:]), streamed, 0,
                     dims[0] if dims else 1]

    def begin(self, name, dtype, row_shape=(), meta=None):
        """Start a streamed tensor of rows of row_shape: its row count is
        written at end()."""
        self._header(name, dtype, [0] + list(row_shape), True, meta)

    def rows(self, a):
        """Append rows (an array of shape (k,) + row_shape) to the tensor
        begun with begin()."""
        name, dt, rshape, streamed, n, want = self._cur
        a = np.asarray(a)
        if a.dtype != dt and _code(a.dtype)[1] != dt:
            raise TypeError("tensor '%s': rows of dtype %s, the tensor is %s"
                            % (name, a.dtype, dt))
        if a.shape[1:] != rshape:
            raise ValueError("tensor '%s': rows of shape %s, rows are %s"
                             % (name, a.shape[1:], rshape))
        a = np.ascontiguousarray(a, dtype=dt)
        self._chunks(a, a.shape[0])

    def _chunks(self, a, nrows):
        c = self._cur
        if not c[3] and c[4] + nrows > c[5]:
            raise ValueError("tensor '%s': more rows than its shape" % c[0])
        if c[4] + nrows > MAX_ROWS:
            raise ValueError("tensor '%s': above 2^40 rows" % c[0])
        flat = a.reshape(-1).view(np.uint8) if a.size else \
            np.empty(0, np.uint8)
        rb = (flat.size // nrows) if nrows else 0
        step = max(1, CHUNK_BYTES // rb) if rb else nrows
        i = 0
        while i < nrows:
            k = min(step, nrows - i)
            part = flat[i * rb:(i + k) * rb]
            self._record(CHUNK, [struct.pack("<Q", k), memoryview(part)],
                         8 + k * rb)
            i += k
        c[4] += nrows

    def end(self):
        """End the current tensor."""
        name, dt, rshape, streamed, n, want = self._cur
        if not streamed and n != want:
            raise ValueError("tensor '%s': %d rows written, %d declared"
                             % (name, n, want))
        self._record(TENSOR_END, [struct.pack("<Q", n)], 8)
        self._rows += n
        self._cur = None

    def tensor(self, name, a, meta=None):
        """Write a whole tensor (numpy array; ndim 0 is a scalar)."""
        a = np.asarray(a)
        code, dt = _code(a.dtype)
        a = np.asarray(a, dtype=dt)
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        self._header(name, dt, list(a.shape), False, meta)
        self._chunks(a.reshape((1,) + a.shape) if a.ndim == 0 else a,
                     1 if a.ndim == 0 else a.shape[0])
        self.end()

    def close(self):
        """Write the stream metadata and the END record, end the frame."""
        if self._done:
            return
        if self._cur is not None:
            raise RuntimeError("tensor '%s' not ended" % self._cur[0])
        self._record(META, [self._meta_body], len(self._meta_body))
        self._record(END, [struct.pack("<QQQ", self._records, self._tensors,
                                       self._rows)], 24)
        self._z.flush(zstandard.FLUSH_FRAME)
        self._z.close()
        if self._close:
            self._f.close()
        if self._tmp is not None:
            os.replace(self._tmp, self._dst)
        self._done = True

    def abort(self):
        """Stop without the END record: the output is rejected by readers."""
        if self._done:
            return
        try:
            self._z.flush(zstandard.FLUSH_FRAME)
            self._z.close()
        finally:
            if self._close:
                self._f.close()
            if self._tmp is not None:
                os.unlink(self._tmp)
            self._done = True

    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        if et is None:
            self.close()
        else:
            self.abort()
        return False


def write(dst, tensors, meta=None, inherit=(), tensor_meta=None,
          row_local=False, level=3):
    """Write tensors (name -> numpy array, in order) to dst (a path or a
    binary file object) as a tensor stream.

    A value that is an iterator (a generator of row blocks) is written as a
    streamed tensor, its dtype and row shape taken from its first block.
    tensor_meta: name -> dict of tensor metadata.  meta, inherit and
    row_local: see Writer.  Returns the stream metadata written."""
    tensor_meta = tensor_meta or {}
    with Writer(dst, meta=meta, inherit=inherit, row_local=row_local,
                level=level) as w:
        for name, v in tensors.items():
            tm = tensor_meta.get(name)
            if hasattr(v, "__next__"):
                first = next(v, None)
                if first is None:
                    raise ValueError("tensor '%s': a streamed tensor needs "
                                     "at least one block (its dtype)" % name)
                first = np.asarray(first)
                w.begin(name, first.dtype, first.shape[1:], tm)
                w.rows(first)
                for b in v:
                    w.rows(b)
                w.end()
            else:
                w.tensor(name, v, tm)
    return w.meta
