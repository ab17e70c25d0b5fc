"""Errors of the tensor-stream reader (formats/tensor-stream.md, 12)."""

IO = "TS_E_IO"
NOMEM = "TS_E_NOMEM"
ZSTD = "TS_E_ZSTD"
TRUNCATED = "TS_E_TRUNCATED"
FORMAT = "TS_E_FORMAT"
VERSION = "TS_E_VERSION"
LIMIT = "TS_E_LIMIT"
OVERFLOW = "TS_E_OVERFLOW"
CHECKSUM = "TS_E_CHECKSUM"


class FormatError(ValueError):
    """A stream that breaks a rule of the format.

    code is the name of the spec's error code (TS_E_FORMAT, ...), offset
    the offset in the stream bytes (the decompressed bytes) of the field
    at fault or reached, input_offset the offset in the input (compressed)
    bytes for errors of the compression layer, else None; label names the
    input.  str() gives the spec's message form "LABEL: offset N: what"."""

    def __init__(self, code, offset, what, input_offset=None, label=None):
        self.code = code
        self.offset = offset
        self.what = what
        self.input_offset = input_offset
        self.label = label
        super().__init__(self._msg())

    def _msg(self):
        s = "offset %d: " % self.offset
        if self.input_offset is not None:
            s += "input byte %d: " % self.input_offset
        s += self.what
        if self.label is not None:
            s = "%s: %s" % (self.label, s)
        return s

    def __str__(self):
        return self._msg()


class LedgerError(ValueError):
    """A ledger that cannot be merged or accounted (a conflict, a malformed
    entry, a dp.* key given by hand)."""
