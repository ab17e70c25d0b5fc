"""read, read_meta, iter_rows: tensor streams as numpy arrays."""

import mmap
import os

import numpy as np

from ._errors import FormatError, LIMIT
from ._reader import events, DTYPE_NAMES
from .ledger import Ledger


class Stream:
    """A tensor stream read whole.

    tensors: name -> numpy array (in stream order; dtype and shape from the
    stream, little-endian, writable, built on the decoded bytes without a
    further copy); tensor_meta: name -> dict; meta: the stream metadata
    (dict, str -> str); ledger: its dp.* entries as a Ledger; streamed: the
    names of the tensors written with STREAMED (row count unknown up
    front); name: the path or label read."""

    def __init__(self, name=None):
        self.name = name
        self.tensors = {}
        self.tensor_meta = {}
        self.meta = {}
        self.streamed = set()
        self.info = {}

    @property
    def ledger(self):
        return Ledger.from_meta(self.meta)

    def __getitem__(self, name):
        return self.tensors[name]

    def __contains__(self, name):
        return name in self.tensors

    def __iter__(self):
        return iter(self.tensors)

    def keys(self):
        return self.tensors.keys()

    def __repr__(self):
        ts = ", ".join("%s: %s%s" % (n, DTYPE_NAMES[i.code], list(i.dims))
                       for n, i in self.info.items())
        return "Stream(%r, {%s}, %d metadata keys)" % (self.name, ts,
                                                        len(self.meta))


def _open(src):
    """(file object, label, close?) for a path or a binary file object."""
    if isinstance(src, (str, bytes, os.PathLike)):
        return open(src, "rb", buffering=0), os.fsdecode(src), True
    return src, getattr(src, "name", "<file>"), False


class _Grow:
    """A buffer that grows with the data actually present (a private
    anonymous mapping resized by mremap: no copy, and the untouched tail
    takes no memory), never to a size a header declares."""

    STEP = 1 << 23

    def __init__(self):
        self.mm = None
        self.n = 0

    def _huge(self):
        """Ask for transparent huge pages (where the kernel offers them
        on request): the decoder then writes into pages faulted in 2 MiB
        at a time, not 4 KiB, which takes most of the system time of a
        large read (numpy asks the same for its large arrays)."""
        if hasattr(mmap, "MADV_HUGEPAGE"):
            try:
                self.mm.madvise(mmap.MADV_HUGEPAGE)
            except OSError:
                pass

    def fill(self, src, left):
        while left:
            k = min(left, self.STEP)
            need = self.n + k
            if self.mm is None:
                self.mm = mmap.mmap(-1, max(need, 1 << 20),
                                    flags=mmap.MAP_PRIVATE)
                self._huge()
            elif need > len(self.mm):
                self.mm.resize(max(need, 2 * len(self.mm)))
                self._huge()
            with memoryview(self.mm) as mv:
                src.readinto(mv[self.n:need], "a CHUNK record")
            self.n = need
            left -= k

    def array(self, info):
        if self.n == 0:
            return np.empty(tuple(info.dims), dtype=info.dtype)
        if self.n != len(self.mm):
            self.mm.resize(self.n)
        a = np.frombuffer(self.mm, dtype=info.dtype)
        return a.reshape(tuple(info.dims))


NP_MAX_DIM = (1 << 63) - 1


def _numpy_limit(info):
    """numpy cannot shape an array with a dim above 2^63-1 (a valid but
    empty tensor can have one): such a tensor is refused, TS_E_LIMIT (a
    reader's lower limit, section 11)."""
    dims = info.dims[1:] if info.streamed else info.dims
    if any(d > NP_MAX_DIM for d in dims):
        raise FormatError(LIMIT, info.offset, "tensor '%s': a dim above "
                          "2^63-1, which numpy cannot represent" % info.name)


def _parse(src, keep):
    """Read src; keep(name) says which tensors' rows to store."""
    f, label, close = _open(src)
    st = Stream(label)
    bufs = {}
    try:
        for ev in events(f, label):
            kind, info = ev[0], ev[1]
            if kind == "rows":
                b = bufs.get(info.name)
                if b is not None:
                    b.fill(ev[2], ev[3])
                else:
                    ev[2].skip(ev[3], "a CHUNK record")
            elif kind == "tensor":
                st.info[info.name] = info
                st.tensor_meta[info.name] = info.meta
                if info.streamed:
                    st.streamed.add(info.name)
                if keep(info.name):
                    _numpy_limit(info)
                    bufs[info.name] = _Grow()
            elif kind == "tensor_end":
                b = bufs.pop(info.name, None)
                if b is not None:
                    st.tensors[info.name] = b.array(info)
            else:
                st.meta = info
    except FormatError as e:
        if e.label is None:
            e.label = label
        raise
    finally:
        if close:
            f.close()
    return st


def read(src, tensors=None):
    """Read a tensor stream (path or binary file object) whole.

    tensors: names of the tensors to load (default all; the others are
    checked and skipped).  Raises FormatError on any breach of the format,
    after which nothing read is to be trusted."""
    want = None if tensors is None else set(tensors)
    return _parse(src, lambda n: want is None or n in want)


def read_meta(src):
    """The stream's metadata, tensor headers and ledger, rows checked and
    skipped (flat memory): a Stream without tensors."""
    return _parse(src, lambda n: False)


def iter_rows(src, tensor, chunk=65536):
    """Yield the rows of one tensor in arrays of at most chunk rows, as they
    arrive, in flat memory (the other tensors are checked and skipped).

    The rows are only known to be good when the generator has finished:
    a FormatError raised at any point (also after the last rows) makes the
    whole read a failure (formats/tensor-stream.md, section 7).  Raises
    KeyError at the end when the stream has no such tensor."""
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    f, label, close = _open(src)
    found = False
    try:
        cur = None
        buf = None
        fill = 0
        for ev in events(f, label):
            kind, info = ev[0], ev[1]
            if kind == "tensor" and info.name == tensor:
                _numpy_limit(info)
                found = True
                cur = info
                step = chunk * info.row_bytes
                buf = np.empty(step, dtype=np.uint8)
                fill = 0
            elif kind == "rows" and info is cur:
                src, left = ev[2], ev[3]
                while left:
                    k = min(step - fill, left)
                    src.readinto(memoryview(buf)[fill:fill + k],
                                 "a CHUNK record")
                    fill += k
                    left -= k
                    if fill == step:
                        yield buf.view(cur.dtype).reshape(
                            (chunk,) + cur.row_shape)
                        buf = np.empty(step, dtype=np.uint8)
                        fill = 0
            elif kind == "rows":
                ev[2].skip(ev[3], "a CHUNK record")
            elif kind == "tensor_end" and info is cur:
                if cur.row_bytes == 0:
                    left = cur.rows
                    while left:
                        k = min(chunk, left)
                        yield np.empty((k,) + cur.row_shape, cur.dtype)
                        left -= k
                elif fill:
                    n = fill // cur.row_bytes
                    yield buf[:fill].view(cur.dtype).reshape(
                        (n,) + cur.row_shape)
                cur = None
    except FormatError as e:
        if e.label is None:
            e.label = label
        raise
    finally:
        if close:
            f.close()
    if not found:
        raise KeyError("no tensor '%s' in %s" % (tensor, label))
