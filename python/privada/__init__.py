"""privada: read and write privada tensor streams (.tns) from Python.

A second implementation of formats/tensor-stream.md, pure Python on numpy
and zstandard:

    read(path)                      -> Stream (tensors as numpy arrays,
                                       metadata, the ledger)
    read_meta(path)                 -> Stream without tensors (flat memory)
    iter_rows(path, tensor, chunk)  -> row blocks in flat memory
    write(path, tensors, meta=None, inherit=(...))
    Writer                          -> the same, tensor by tensor, streamed
    ledger_report(paths, delta)     -> rdp-account ledger's totals
    FormatError, LedgerError
"""

__version__ = "0.1.0"

from ._errors import FormatError, LedgerError  # noqa: E402
from ._stream import Stream, read, read_meta, iter_rows  # noqa: E402
from ._writer import Writer, write  # noqa: E402
from .ledger import Ledger, Release, report as _report  # noqa: E402


def ledger_report(paths, delta, public=()):
    """Per-dataset privacy totals of the ledgers of the streams at paths
    (paths, file objects or Stream objects), computed in Python exactly as
    rdp-account ledger --delta delta does (formats/tensor-stream.md,
    10.1.2; the improved RDP conversion).  Every stream is read and checked
    to its end, rows skipped.  Returns a list of dicts (attribute access
    too) with the keys of rdp-account ledger --format json: dataset,
    releases, epsilon (None: no epsilon; inf: raw-derived), order,
    eps_rdp, eps_basic, delta_extra, neighbours, seeded, raw,
    data_dependent, public, assumed_raw, verdict."""
    if isinstance(paths, (str, bytes)) or hasattr(paths, "read"):
        paths = [paths]
    streams = [p if hasattr(p, "meta") else read_meta(p) for p in paths]
    return _report(streams, delta, public)


__all__ = ["FormatError", "LedgerError", "Stream", "read", "read_meta",
           "iter_rows", "Writer", "write", "Ledger", "Release",
           "ledger_report", "__version__"]
