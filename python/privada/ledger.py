"""The privacy ledger (formats/tensor-stream.md, section 10.1).

Ledger.from_meta(meta) gives the dp.* entries of a stream's metadata as
objects: raw marks (dp.raw.DATASET), releases (dp.release.ID.FIELD, one
Release per id), the unknown-provenance mark (dp.provenance) and any other
dp.* key (kept, not interpreted).  merge() unites ledgers as the tools do
(10.1 rules 1 to 3: raw marks by strength, releases by id, a conflict is an
error); merge_split() merges the split.* keys (10.1.2, partitions);
report() composes per dataset as an accountant must (10.1.2) and as
rdp-account ledger does, with the improved RDP conversion.
"""

import math
import re

from ._errors import LedgerError

RAW_STRENGTH = {"row-local": 1, "aggregate": 2}
ID_RE = re.compile(r"[0-9a-f]{32}\Z")
DATASET_RE = re.compile(r"[a-z0-9_]{1,64}\Z")


def _num(s, what):
    s = s.strip()
    if s == "inf":
        return math.inf
    try:
        v = float(s)
    except ValueError:
        raise LedgerError("%s: not a number: %r" % (what, s)) from None
    if math.isnan(v):
        raise LedgerError("%s: NaN" % what)
    return v


class Release:
    """One release: its id and fields (dataset, mechanism, neighbours,
    seeded, tool, orders, rdp, epsilon, delta, param.*, ...) as text, with
    parsed views as properties."""

    def __init__(self, rid, fields=None):
        self.id = rid
        self.fields = dict(fields or {})

    def __repr__(self):
        return "Release(%s, %s, %s, %s)" % (
            self.id[:8], self.dataset, self.mechanism, self.neighbours)

    def _get(self, k, default=None):
        return self.fields.get(k, default)

    dataset = property(lambda s: s._get("dataset"))
    mechanism = property(lambda s: s._get("mechanism"))
    neighbours = property(lambda s: s._get("neighbours"))
    tool = property(lambda s: s._get("tool"))
    seeded = property(lambda s: s._get("seeded") == "true")
    data_dependent = property(lambda s: s._get("data_dependent") == "true")
    assumed_raw = property(lambda s: s._get("assumed_raw") == "true")

    @property
    def params(self):
        return {k[6:]: v for k, v in self.fields.items()
                if k.startswith("param.")}

    @property
    def orders(self):
        o = self._get("orders")
        if o is None:
            return None
        return [_num(x, "release %s: orders" % self.id) for x in o.split(",")]

    @property
    def rdp(self):
        r = self._get("rdp")
        if r is None:
            return None
        return [_num(x, "release %s: rdp" % self.id) for x in r.split(",")]

    @property
    def epsilon(self):
        e = self._get("epsilon")
        return None if e is None else _num(e, "release %s: epsilon" % self.id)

    @property
    def delta(self):
        return _num(self._get("delta", "0"), "release %s: delta" % self.id)

    @property
    def tv(self):
        t = self._get("tv")
        return None if t is None else _num(t, "release %s: tv" % self.id)

    @property
    def tv_epsilon(self):
        t = self._get("tv_epsilon")
        return None if t is None else _num(t, "release %s: tv_epsilon"
                                           % self.id)

    def check(self):
        for k in ("dataset", "mechanism", "neighbours", "seeded", "tool"):
            if k not in self.fields:
                raise LedgerError("release %s: no field '%s'" % (self.id, k))
        if not DATASET_RE.match(self.dataset):
            raise LedgerError("release %s: bad dataset %r"
                              % (self.id, self.dataset))
        if self.neighbours not in ("add_remove", "replace_one"):
            raise LedgerError("release %s: neighbours %r"
                              % (self.id, self.neighbours))
        o, r = self.orders, self.rdp
        if (o is None) != (r is None):
            raise LedgerError("release %s: orders and rdp go together"
                              % self.id)
        if o is not None:
            if len(o) != len(r):
                raise LedgerError("release %s: %d orders, %d rdp values"
                                  % (self.id, len(o), len(r)))
            if any(a <= 1 for a in o) or any(x < 0 for x in r):
                raise LedgerError("release %s: orders must be > 1, rdp >= 0"
                                  % self.id)
        if o is None and self.epsilon is None:
            raise LedgerError("release %s: neither rdp nor epsilon" % self.id)
        if self.tv is not None and self.tv_epsilon is None:
            raise LedgerError("release %s: tv without tv_epsilon" % self.id)


class Ledger:
    """The dp.* entries of one stream (or of several, merged)."""

    def __init__(self):
        self.raw = {}           # dataset -> "row-local" | "aggregate"
        self.releases = {}      # id -> Release
        self.provenance = None  # "unknown" (any value counts) or None
        self.other = {}         # other dp.* keys, kept as they are

    def __repr__(self):
        return "Ledger(raw=%r, releases=%r%s)" % (
            self.raw, list(self.releases.values()),
            ", provenance=%r" % self.provenance if self.provenance else "")

    def __bool__(self):
        return bool(self.raw or self.releases or self.provenance is not None
                    or self.other)

    @classmethod
    def from_meta(cls, meta):
        led = cls()
        for k, v in meta.items():
            if not k.startswith("dp."):
                continue
            if k.startswith("dp.raw."):
                led.raw[k[7:]] = v
            elif k.startswith("dp.release."):
                rest = k[11:]
                rid, _, field = rest.partition(".")
                if not field:
                    led.other[k] = v
                    continue
                led.releases.setdefault(rid, Release(rid)).fields[field] = v
            elif k == "dp.provenance":
                led.provenance = v
            else:
                led.other[k] = v
        return led

    def to_meta(self):
        """The ledger as dp.* metadata entries."""
        m = {}
        for d in sorted(self.raw):
            m["dp.raw." + d] = self.raw[d]
        for rid in sorted(self.releases):
            for f, v in sorted(self.releases[rid].fields.items()):
                m["dp.release.%s.%s" % (rid, f)] = v
        if self.provenance is not None:
            m["dp.provenance"] = self.provenance
        m.update(sorted(self.other.items()))
        return m

    def merge(self, other, label="input"):
        """Add other's entries to this ledger (10.1 rules 1 to 3)."""
        for d, v in other.raw.items():
            mine = self.raw.get(d)
            if mine is None or mine == v:
                self.raw[d] = v
            elif mine in RAW_STRENGTH and v in RAW_STRENGTH:
                if RAW_STRENGTH[v] > RAW_STRENGTH[mine]:
                    self.raw[d] = v
            else:
                raise LedgerError("%s: conflicting ledger entry dp.raw.%s: "
                                  "%r and %r" % (label, d, mine, v))
        for rid, r in other.releases.items():
            mine = self.releases.get(rid)
            if mine is None:
                self.releases[rid] = Release(rid, r.fields)
                continue
            for f, v in r.fields.items():
                w = mine.fields.get(f)
                if w is None:
                    mine.fields[f] = v
                elif w != v:
                    raise LedgerError("%s: conflicting ledger entry "
                                      "dp.release.%s.%s: %r and %r"
                                      % (label, rid, f, w, v))
        if other.provenance is not None:
            if self.provenance not in (None, other.provenance):
                raise LedgerError("%s: conflicting ledger entry "
                                  "dp.provenance" % label)
            self.provenance = other.provenance
        for k, v in other.other.items():
            w = self.other.get(k)
            if w is not None and w != v:
                raise LedgerError("%s: conflicting ledger entry %s: %r and %r"
                                  % (label, k, w, v))
            self.other[k] = v
        return self

    def aggregated(self):
        """The ledger of a non-private aggregate of this data: every raw
        mark strengthened to aggregate (10.1 rule 3)."""
        led = Ledger().merge(self)
        for d in led.raw:
            led.raw[d] = "aggregate"
        return led


# Partitions (10.1.2, the split.* keys).

def _partitions(meta, d):
    """Does a stream with metadata meta partition dataset d?"""
    if meta.get("split.raw." + d) == "row-local":
        return True
    if any(k.startswith("split.raw.") for k in meta):
        return False
    return ("dp.raw." + d) in meta


def _split_keys(meta):
    return {k: v for k, v in meta.items() if k.startswith("split.")}


def merge_split(inputs, tool):
    """The split.* keys of an output from its inputs, in order.

    inputs: (name, stream metadata) pairs.  Applies the four rules of
    10.1.2 (partitions); returns the output's split.* keys."""
    out = {}
    out_raw = {}        # dataset -> True when it came from a part of it

    def mix(name):
        out["split.part"] = "mixed"
        out.setdefault("split.mixed_by", "%s: %s" % (tool, name))

    def is_part_of(meta, d):
        part = meta.get("split.part", "")
        return part not in ("", "mixed") and _partitions(meta, d)

    for name, meta in inputs:
        raw = [k[7:] for k in meta if k.startswith("dp.raw.")]
        part = meta.get("split.part")
        if not raw:
            if "split.part" not in out:
                out.update(_split_keys(meta))
            elif part is not None and part != out.get("split.part") and \
                    not out_raw:
                mix(name)
            continue
        pds = [d for d in raw if is_part_of(meta, d)]
        if pds:
            other = out.get("split.part") is not None and any(
                out.get(k) != meta.get(k)
                for k in ("split.part", "split.parent", "split.id"))
            whole = any(d in out_raw and not out_raw[d] for d in pds)
            if other or whole:
                mix(name)
            else:
                out.update(_split_keys(meta))
            for d in raw:
                out_raw[d] = out_raw.get(d, True) and d in pds
            continue
        if part == "mixed":
            if out.get("split.part") != "mixed":
                out.update({k: v for k, v in _split_keys(meta).items()
                            if k not in out})
                out["split.part"] = "mixed"
                if "split.mixed_by" in meta:
                    out["split.mixed_by"] = meta["split.mixed_by"]
                else:
                    mix(name)
        elif out.get("split.part") not in (None, "mixed"):
            has_sraw = any(k.startswith("split.raw.") for k in out)
            for d in raw:
                if out.get("split.raw." + d) == "row-local" or \
                        (not has_sraw and out_raw.get(d)):
                    mix(name)
                    break
        for d in raw:
            out_raw[d] = False
    return out


# Accounting (10.1.2).

def rdp_to_eps(orders, rdp, delta):
    """The improved conversion (Balle et al. 2020; Canonne, Kamath and
    Steinke 2020) as Google's dp_accounting computes it: the smallest
    epsilon over the orders and the order reaching it (the first one on a
    tie); (inf, None) when no order gives a finite bound."""
    best, border = math.inf, (orders[0] if orders else None)
    for a, r in zip(orders, rdp):
        if math.isinf(r):
            continue
        if delta * delta + math.expm1(-r) > 0:
            e = 0.0
        elif a > 1.01:
            e = r + math.log1p(-1.0 / a) - math.log(delta * a) / (a - 1)
        else:
            continue
        if e < best:
            best, border = e, a
    return (best if best > 0 else 0.0), border


class DatasetReport(dict):
    """One dataset's line of the report (a dict with the keys of
    rdp-account ledger --format json)."""

    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k) from None


def _charge(eps, tv):
    """(1 + e^eps) tv, rounded upward (a bound on the samplers' total
    variation charge; rounded as the reference accountant rounds it)."""
    up = math.inf
    f = math.nextafter(math.nextafter(math.exp(eps), up), up)
    f = math.nextafter(1 + f, up)
    return math.nextafter(math.nextafter(f * tv, up), up)


def _entry_delta(e, eps):
    """An entry's delta when the composition's epsilon is eps: its TV
    charge raised from tv_epsilon to eps when eps is larger (rule 5)."""
    tv, te = e.tv, e.tv_epsilon
    if tv is None or not tv > 0 or not eps > te:
        return e.delta
    c1 = _charge(eps, tv)
    rest = e.delta - _charge(te, tv)
    if not rest > 0:
        return c1
    return math.nextafter(math.nextafter(rest + c1, math.inf), math.inf)


TV_ITER = 64
TV_RAISE = 1 + 2.0 ** -20


def _compose(entries, delta):
    """epsilon, order, eps_rdp, eps_basic, delta_extra of a dataset's
    entries (10.1.2 rules 2, 3 and 5); epsilon None when none can be
    given (no shared order, delta not above the entries' deltas, a TV
    charge that does not settle)."""
    orders = total = None
    eps_basic = 0.0
    delta_extra = 0.0
    has_tv = False
    for e in entries:
        has_tv = has_tv or (e.tv is not None and e.tv > 0)
        delta_extra += e.delta
        if e.orders is None:
            eps_basic += e.epsilon
            continue
        if orders is None:
            orders, total = list(e.orders), list(e.rdp)
            continue
        pos = {}
        for a, r in zip(e.orders, e.rdp):
            pos.setdefault(a, r)
        keep = [(a, s + pos[a]) for a, s in zip(orders, total) if a in pos]
        orders = [a for a, _ in keep]
        total = [s for _, s in keep]
        if not orders:
            return None, None, None, eps_basic, delta_extra
    charge = delta_extra
    eps_rdp, order = 0.0, None
    for it in range(TV_ITER + 1):
        delta_rdp = delta - charge
        delta_extra = charge
        if not delta_rdp > 0:
            return None, None, None, eps_basic, delta_extra
        if orders is not None:
            eps_rdp, order = rdp_to_eps(orders, total, delta_rdp)
        eps = eps_rdp + eps_basic
        if not has_tv or not math.isfinite(eps):
            break
        nxt = 0.0
        for e in entries:
            nxt += _entry_delta(e, eps)
        if nxt <= charge:
            break
        if it == TV_ITER:
            return None, None, None, eps_basic, delta_extra
        charge = nxt * TV_RAISE
    return eps, order, eps_rdp, eps_basic, delta_extra


def report(streams, delta, public=()):
    """Per-dataset totals of the ledgers of streams (Stream objects or
    metadata dicts), as rdp-account ledger --delta delta computes them.

    Returns a list of DatasetReport, one per dataset named by a release or
    a raw mark, in rdp-account's order (the datasets of the releases as
    the releases first appear, then those with raw marks only), then a
    line '(unknown)' when a stream is of unknown provenance.  An empty
    list: no stream carries a ledger, which is not private either
    (10.1.2, rule 6)."""
    if not 0 < delta < 1:
        raise ValueError("delta must be in (0, 1)")
    led = Ledger()
    unknown = False
    for i, s in enumerate(streams):
        meta = s.meta if hasattr(s, "meta") else s
        one = Ledger.from_meta(meta)
        unknown = unknown or one.provenance is not None
        led.merge(one, getattr(s, "name", "stream %d" % i))
    for r in led.releases.values():
        if not ID_RE.match(r.id):
            raise LedgerError("bad release id %r" % r.id)
        r.check()
    names = []
    for d in [r.dataset for r in led.releases.values()] + list(led.raw):
        if d not in names:
            names.append(d)
    out = []
    for d in names:
        entries = [r for r in led.releases.values() if r.dataset == d]
        nb = []
        for r in entries:
            if r.neighbours not in nb:
                nb.append(r.neighbours)
        rep = DatasetReport(
            dataset=d, releases=len(entries), epsilon=None, order=None,
            eps_rdp=None, eps_basic=None, delta_extra=None,
            neighbours=("mixed" if len(nb) > 1 else nb[0]) if nb else "none",
            seeded=any(r.seeded for r in entries), raw=led.raw.get(d),
            data_dependent=any(r.data_dependent for r in entries),
            public=d in public,
            assumed_raw=any(r.assumed_raw for r in entries))
        mixed = len(nb) > 1
        eps, order, er, eb, dx = _compose(entries, delta)
        if eps is not None and not mixed:
            rep.update(epsilon=eps, order=order, eps_rdp=er, eps_basic=eb,
                       delta_extra=dx)
        # The verdict is the most severe that applies (rdp-account's
        # order: private, data_dependent, no_epsilon, not_private).
        if rep["public"] and not entries:
            rep["verdict"] = "public"
        elif rep["raw"] is not None or rep["seeded"]:
            rep["verdict"] = "not_private"
        elif rep["epsilon"] is None:
            rep["verdict"] = "no_epsilon"
        elif rep["data_dependent"]:
            rep["verdict"] = "data_dependent"
        else:
            rep["verdict"] = "private"
        if rep["raw"] is not None and rep["verdict"] != "public":
            rep["epsilon"] = math.inf
        out.append(rep)
    if unknown:
        out.append(DatasetReport(dataset="(unknown)", releases=0,
                                 epsilon=None, verdict="unknown_provenance"))
    return out
