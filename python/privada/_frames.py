"""The compression layer of a tensor stream (formats/tensor-stream.md, section 2).

frames(f) reads the input bytes of a file object and yields the stream bytes
in pieces of bounded size (at most MAX_PIECE bytes plus one zstd block), after
checking every zstd frame header before decoding it: the content checksum
flag, no skippable frame, no dictionary, a window of at most 2^27 bytes.  The
frames are cut by their block headers (RFC 8878, 3.1.1.2), so a piece never
holds more than the blocks fed to the decoder at once, whatever the
compression ratio: memory stays flat on streams larger than memory.
"""

import zstandard

from ._errors import FormatError, TRUNCATED, FORMAT, LIMIT, ZSTD, CHECKSUM, IO

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
WINDOW_MAX = 1 << 27
BLOCK_MAX = 1 << 17
READ_SIZE = 1 << 20
MAX_PIECE = 1 << 23     # stream bytes fed to the decoder at once (at most)


class _Input:
    """Input bytes with a position (the offset of buf[pos] is base + pos)."""

    def __init__(self, f):
        self.f = f
        self.buf = b""
        self.pos = 0
        self.base = 0
        self.eof = False

    def offset(self):
        return self.base + self.pos

    def avail(self):
        return len(self.buf) - self.pos

    def fill(self, n):
        """Have at least n bytes buffered, or all that remain; return avail()."""
        while self.avail() < n and not self.eof:
            try:
                more = self.f.read(max(READ_SIZE, n - self.avail()))
            except OSError as e:
                raise FormatError(IO, self.offset(), "read error: %s" % e,
                    input_offset=self.offset()) from None
            if not more:
                self.eof = True
                break
            rest = self.buf[self.pos:]
            self.base += self.pos
            self.buf = rest + more if rest else more
            self.pos = 0
        return self.avail()

    def take(self, n):
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b


def _frame_header(inp, soff):
    """Check the frame header at the input position; return its length."""
    off = inp.offset()
    if inp.fill(6) < 6:
        raise FormatError(TRUNCATED, soff, "input ends inside a frame header",
            input_offset=off)
    b = inp.buf[inp.pos:inp.pos + 6]
    fhd = b[4]
    fcs_flag = fhd >> 6
    single = (fhd >> 5) & 1
    reserved = (fhd >> 3) & 1
    checksum = (fhd >> 2) & 1
    did_flag = fhd & 3
    if not checksum:
        raise FormatError(CHECKSUM, soff, "zstd frame without content "
            "checksum (writers must set it)", input_offset=off)
    if reserved:
        raise FormatError(ZSTD, soff, "zstd frame header: reserved bit set",
            input_offset=off)
    did_len = (0, 1, 2, 4)[did_flag]
    fcs_len = (single, 2, 4, 8)[fcs_flag]
    hlen = 5 + (0 if single else 1) + did_len + fcs_len
    if inp.fill(hlen) < hlen:
        raise FormatError(TRUNCATED, soff, "input ends inside a frame header",
            input_offset=off)
    h = inp.buf[inp.pos:inp.pos + hlen]
    p = 5
    window = None
    if not single:
        wd = h[p]
        p += 1
        wlog = 10 + (wd >> 3)
        wbase = 1 << wlog
        window = wbase + (wbase >> 3) * (wd & 7)
    did = int.from_bytes(h[p:p + did_len], "little")
    p += did_len
    if did != 0:
        raise FormatError(ZSTD, soff, "zstd frame needs dictionary %d "
            "(dictionaries are not used)" % did, input_offset=off)
    fcs = int.from_bytes(h[p:p + fcs_len], "little")
    if fcs_len == 2:
        fcs += 256
    if single:
        window = fcs
    if window > WINDOW_MAX:
        raise FormatError(LIMIT, soff, "zstd frame window of %d bytes "
            "exceeds the limit %d" % (window, WINDOW_MAX), input_offset=off)
    return hlen


def frames(f, counter):
    """Yield the stream bytes of file object f in pieces.

    counter is a one-element list holding the stream offset reached (the
    caller's), used in messages about the compression layer."""
    inp = _Input(f)
    dctx = zstandard.ZstdDecompressor(max_window_size=WINDOW_MAX)
    first = True
    while True:
        off = inp.offset()
        n = inp.fill(5)
        if n == 0:
            if first:
                raise FormatError(TRUNCATED, 0, "empty input",
                    input_offset=0)
            return
        if n < 4:
            raise FormatError(TRUNCATED, counter[0], "input ends after "
                "%d bytes of a frame magic" % n, input_offset=off)
        magic = inp.buf[inp.pos:inp.pos + 4]
        mv = int.from_bytes(magic, "little")
        if 0x184D2A50 <= mv <= 0x184D2A5F:
            raise FormatError(FORMAT, counter[0], "skippable zstd frame "
                "(not allowed in a tensor stream)", input_offset=off)
        if magic != ZSTD_MAGIC:
            if first:
                raise FormatError(FORMAT, 0, "not a zstd stream "
                    "(a tensor stream is zstd-compressed)",
                    input_offset=off)
            raise FormatError(FORMAT, counter[0], "trailing bytes after "
                "a zstd frame", input_offset=off)
        if n == 4:
            raise FormatError(TRUNCATED, counter[0], "input ends inside "
                "a frame header", input_offset=off)
        first = False
        hlen = _frame_header(inp, counter[0])
        dobj = dctx.decompressobj()
        pending = [inp.take(hlen)]
        pending_out = 0
        last = False
        while not last:
            boff = inp.offset()
            if inp.fill(3) < 3:
                raise FormatError(TRUNCATED, counter[0], "input ends "
                    "inside a zstd frame", input_offset=boff)
            bh = int.from_bytes(inp.buf[inp.pos:inp.pos + 3], "little")
            last = bool(bh & 1)
            btype = (bh >> 1) & 3
            bsize = bh >> 3
            if btype == 3:
                raise FormatError(ZSTD, counter[0], "corrupt zstd data "
                    "(reserved block type)", input_offset=boff)
            if bsize > BLOCK_MAX:
                raise FormatError(ZSTD, counter[0], "corrupt zstd data "
                    "(block of %d bytes)" % bsize, input_offset=boff)
            plen = 3 + (1 if btype == 1 else bsize)
            if last:
                plen += 4       # the content checksum
            if inp.fill(plen) < plen:
                raise FormatError(TRUNCATED, counter[0], "input ends "
                    "inside a zstd frame", input_offset=boff)
            pending.append(inp.take(plen))
            pending_out += bsize
            if last or pending_out >= MAX_PIECE:
                try:
                    out = dobj.decompress(b"".join(pending))
                except zstandard.ZstdError as e:
                    code = CHECKSUM if "checksum" in str(e) else ZSTD
                    raise FormatError(code, counter[0], "zstd: %s" % e,
                        input_offset=boff) from None
                pending = []
                pending_out = 0
                if out:
                    yield out
        if not dobj.eof or dobj.unused_data:
            raise FormatError(ZSTD, counter[0], "corrupt zstd frame",
                input_offset=inp.offset())
