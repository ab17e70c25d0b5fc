"""The compression layer of a tensor stream (formats/tensor-stream.md, 2).

FrameSource(f) hands the input bytes of a file object to the zstd decoder
after checking every zstd frame header before any of its frame is decoded
(the content checksum flag, no skippable frame, no dictionary, a window of
at most 2^27 bytes) and following the frames' block headers (RFC 8878,
3.1.1.2), so that truncation and trailing bytes are found at the input
offset where they are.
"""

from ._errors import FormatError, TRUNCATED, FORMAT, LIMIT, ZSTD, CHECKSUM, IO

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
WINDOW_MAX = 1 << 27
BLOCK_MAX = 1 << 17
READ_SIZE = 1 << 20


class _Input:
    """Input bytes with a position (the offset of buf[pos] is base + pos)."""

    def __init__(self, f):
        self.f = f
        self.buf = b""
        self.mv = memoryview(self.buf)
        self.pos = 0
        self.base = 0
        self.eof = False
        self.ahead = None           # input read ahead of buf

    def offset(self):
        return self.base + self.pos

    def avail(self):
        return len(self.buf) - self.pos

    def fill(self, n):
        """At least n bytes buffered, or all that remain; return avail()."""
        while self.avail() < n and not self.eof:
            more = self._get(max(READ_SIZE, n - self.avail()))
            if not more:
                self.eof = True
                break
            rest = self.buf[self.pos:]
            self.base += self.pos
            self.buf = rest + more if rest else more
            self.mv = memoryview(self.buf)
            self.pos = 0
        return self.avail()

    def _get(self, n):
        if self.ahead is not None:
            more, self.ahead = self.ahead, None
            return more
        try:
            return self.f.read(n)
        except OSError as e:
            raise FormatError(IO, self.offset(), "read error: %s" % e,
                              input_offset=self.offset()) from None

    def more_follows(self):
        """True when input follows the buffered bytes (read ahead and kept
        for the next fill, which then replaces the buffer)."""
        if self.ahead is None and not self.eof:
            more = self._get(READ_SIZE)
            if more:
                self.ahead = more
            else:
                self.eof = True
        return self.ahead is not None

    def take(self, n):
        """The next n bytes, as a view of the buffer."""
        b = self.mv[self.pos:self.pos + n]
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


class FrameSource:
    """The input bytes of file object f, handed to the zstd decoder (as its
    source) only after the frame structure they belong to has been
    checked: each frame header before any of the frame is handed over,
    and each block header (RFC 8878, 3.1.1.2), so frame ends, truncation,
    skippable frames and trailing bytes are found here, the decoder
    verifying the content and checksums.  counter[0] is the stream offset
    the caller has reached, for messages."""

    def __init__(self, f, counter):
        self.inp = _Input(f)
        self.counter = counter
        self.state = "start"
        self.remain = 0
        self.last = False
        self.first = True

    def _start(self):
        """At a frame boundary: the frame header, or None at the end."""
        inp, soff = self.inp, self.counter[0]
        off = inp.offset()
        n = inp.fill(5)
        if n == 0:
            if self.first:
                raise FormatError(TRUNCATED, 0, "empty input",
                                  input_offset=0)
            return None
        if n < 4:
            raise FormatError(TRUNCATED, soff, "input ends after %d bytes "
                              "of a frame magic" % n, input_offset=off)
        magic = inp.buf[inp.pos:inp.pos + 4]
        mv = int.from_bytes(magic, "little")
        if 0x184D2A50 <= mv <= 0x184D2A5F:
            raise FormatError(FORMAT, soff, "skippable zstd frame (not "
                              "allowed in a tensor stream)", input_offset=off)
        if magic != ZSTD_MAGIC:
            if self.first:
                raise FormatError(FORMAT, 0, "not a zstd stream (a tensor "
                                  "stream is zstd-compressed)",
                                  input_offset=off)
            raise FormatError(FORMAT, soff, "trailing bytes after a zstd "
                              "frame", input_offset=off)
        if n == 4:
            raise FormatError(TRUNCATED, soff, "input ends inside a frame "
                              "header", input_offset=off)
        self.first = False
        hlen = _frame_header(inp, soff)
        self.state = "block"
        return inp.take(hlen)

    def _block(self):
        inp, soff = self.inp, self.counter[0]
        off = inp.offset()
        if inp.fill(3) < 3:
            raise FormatError(TRUNCATED, soff, "input ends inside a zstd "
                              "frame", input_offset=off)
        bh = int.from_bytes(inp.buf[inp.pos:inp.pos + 3], "little")
        btype = (bh >> 1) & 3
        bsize = bh >> 3
        if btype == 3:
            raise FormatError(ZSTD, soff, "corrupt zstd data (reserved "
                              "block type)", input_offset=off)
        if bsize > BLOCK_MAX:
            raise FormatError(ZSTD, soff, "corrupt zstd data (block of %d "
                              "bytes)" % bsize, input_offset=off)
        self.last = bool(bh & 1)
        self.remain = (1 if btype == 1 else bsize) + (4 if self.last else 0)
        self.state = "body"
        return inp.take(3)

    def read(self, n=-1):
        if n is None or n < 0:
            n = READ_SIZE
        out = []
        got = 0
        while got < n:
            if got and self.inp.avail() < 32 and self.inp.more_follows():
                # A short read rather than a copy (below): the next read
                # starts in the next buffer.  (Not at the end of the input,
                # where truncation is found in this read, as before.)
                break
            if self.state == "start":
                h = self._start()
                if h is None:
                    break
            elif self.state == "block":
                h = self._block()
            else:
                if self.remain == 0:
                    self.state = "start" if self.last else "block"
                    continue
                avail = self.inp.fill(1)
                if avail == 0:
                    raise FormatError(TRUNCATED, self.counter[0], "input "
                                      "ends inside a zstd frame",
                                      input_offset=self.inp.offset())
                k = min(n - got, self.remain, avail)
                h = self.inp.take(k)
                self.remain -= k
            if not out:
                buf, start = self.inp.buf, self.inp.pos - len(h)
            out.append(h)
            got += len(h)
        if not out:
            return b""
        if self.inp.buf is buf and self.inp.pos == start + got:
            # All pieces lie one after the other in the same input buffer:
            # hand the decoder a view of them, not a copy.
            return self.inp.mv[start:start + got]
        return b"".join(out)


def zstd_error(e, counter):
    code = CHECKSUM if "checksum" in str(e) else ZSTD
    return FormatError(code, counter[0], "zstd: %s" % e)
