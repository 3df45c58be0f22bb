#!/usr/bin/env python3
"""The records of tests/fortran/oasis_semantics.F90 (semantics_<comp>_<rank>.txt), checked.

  compare_semantics.py RUN_DIR [REFERENCE_RUN_DIR]
  compare_semantics.py --same RUN_DIR REFERENCE_RUN_DIR
  compare_semantics.py --restart-cdl FIELD | --weights-cdl [hot]   (the files run_semantics.sh
                                                                   writes)

RUN_DIR against OASIS3-MCT's rules, every value within 1e-12 relative:
- at a coupling date t of an entry of period p and lag L, the atmosphere receives the time
  operation (INSTANT: the last; AVERAGE, ACCUMUL, T_MIN, T_MAX) over the ocean's puts of the
  dates in (t - L - p, t - L] (clipped at 0; a lagged entry's date 0 comes from its restart
  file: the value of date -3600); through the weights file, 3/4 of a point and 1/4 of another;
  with CONSERV, the corrections described at CONSERVED below;
- a put returns OASIS_Sent when its date + L is a coupling date, OASIS_ToRest when it is
  $RUNTIME (and writes the restart file, checked), OASIS_LocTrans otherwise (OASIS_Ok for
  INSTANT); a get returns OASIS_Recvd at a coupling date and OASIS_Ok between them; EXPOUT:
  OASIS_SentOut and OASIS_RecvOut; the first field of a two-field entry: OASIS_Waitgroup; OUTPUT:
  OASIS_Output; the EXPOUT and OUTPUT files hold what was sent at each coupling date.
With REFERENCE_RUN_DIR (the same program built against the real OASIS3-MCT), the two runs must
also agree call by call and value by value (any rank layouts). --same: only that agreement
(runs that went on from restart files, where the rules above do not hold at the first coupling
dates). Exit 1 on any difference, each printed."""
import glob
import math
import os
import sys

DT, NDATES, RUNTIME = 3600, 12, 43200
# field -> (k of the analytic function, period, operation, lag): run_semantics.sh's namcouple
ENTRIES = {"INS": (1, 7200, "INSTANT", 0), "AVG": (2, 7200, "AVERAGE", 0),
           "ACC": (3, 10800, "ACCUMUL", 0), "MIN": (4, 7200, "T_MIN", 0),
           "MAX": (5, 10800, "T_MAX", 0), "LAG": (6, 7200, "INSTANT", 3600),
           "MPD": (7, 7200, "INSTANT", 0), "MPS": (8, 7200, "INSTANT", 0),
           "OUT": (9, 7200, "AVERAGE", 0), "CNS": (10, 7200, "INSTANT", 0),
           "CNP": (11, 7200, "INSTANT", 0), "CNB": (12, 7200, "INSTANT", 0),
           "CBP": (13, 7200, "INSTANT", 0), "AMC": (14, 7200, "AVERAGE", 0),
           "LAV": (15, 7200, "AVERAGE", 3600), "MF1": (16, 10800, "ACCUMUL", 0),
           "MF2": (17, 10800, "ACCUMUL", 0), "OPT": (18, 7200, "AVERAGE", 0),
           "HOI": (19, 7200, "INSTANT", 0), "HOA": (20, 7200, "AVERAGE", 0),
           "HOL": (21, 7200, "INSTANT", 3600)}
# through w_mix.nc: destination d gets 3/4 of source d, 1/4 of mix(d)
MAPPED = ("MPD", "MPS", "CNS", "CNP", "CNB", "CBP", "AMC")
# CONSERV (OASIS3-MCT's), making the mapped field's integral over the active destination cells
# (areas.nc, masks.nc) the source's over its active cells (GLOBAL, GLBPOS), or that times the
# ratio of the destination's active area to the source's (BASBAL, BASPOS): GLOBAL and BASBAL
# add one constant to the active points, GLBPOS and BASPOS multiply them by one factor; masked
# points keep the mapped value. AMC: the time average first, then the mapping, then GLOBAL.
CONSERVED = {"CNS": ("add", False), "CNP": ("scale", False), "CNB": ("add", True),
             "CBP": ("scale", True), "AMC": ("add", False)}
MASKED_SRC, MASKED_DST = 0, 47  # oasis_semantics.F90 masks one cell on each side
# Higher-order terms (oasis_put's fld2, fld3) through w_hot.nc (3 weights per link, MAPPING src
# sum): destination d gets the weights HOT_WEIGHTS[0] of source d's field, fld2, fld3, and
# HOT_WEIGHTS[1] of mix(d)'s. The ocean puts fld2 = value(k + 20), fld3 = value(k + 40): HOI
# (INSTANT) both, except fld3 at the steps 4 n + 2 (zeros then: a term once given stays on);
# HOA (AVERAGE) fld2 at odd steps only, fld3 never (averaged over all the field's puts); HOL
# (INSTANT, lagged by a step) fld2 at every step, and in its restart file (av2_O_HOL).
HOT = ("HOI", "HOA", "HOL")
# What OASIS3-MCT 2.0 does differently, on purpose of neither: it reads a lagged entry's
# higher-order terms from its restart file (av2_O_HOL) but does not apply them at date 0 (its
# oasis_advance_run switches a term on only outside that restart call); 4.0 applies them, and
# so does isthmus. The reference is checked against 2.0's rule there, and the two runs are not
# compared at those (field, date).
OASIS2_RESTART_TERMS_IGNORED = {("HOL", 0)}
HOT_WEIGHTS = ((0.75, 0.125, 0.0625), (0.25, 0.375, -0.03125))


def term_given(f, j, date):  # oasis_semantics.F90's rule
    step = date // DT
    if j == 1:
        return True
    if f == "HOI":
        return j == 2 or step % 4 != 2
    if f == "HOL":
        return j == 2
    return j == 2 and step % 2 == 1


def sent_term(f, j, g, date, oasis2=False):
    """What the ocean sends of term j (1: the field, 2: fld2, 3: fld3) of a HOT entry (oasis2:
    as OASIS3-MCT 2.0, without the restart file's terms)."""
    k, period, op, lag = ENTRIES[f]
    last = date - lag  # before date 0: the restart file's, that of date -3600
    dates = range(max(0, last - period + DT), last + 1, DT) if last >= 0 else [last]
    v = [value(g, d, k + 20 * (j - 1)) if term_given(f, j, d) and not (oasis2 and d < 0 and j > 1)
         else 0.0 for d in dates]
    return v[-1] if op == "INSTANT" else sum(v) / len(v)


def cell_area(ocean, g):  # oasis_semantics.F90's cell_area()
    return 1.0 + g // 8 + 0.125 * (g % 8) if ocean else 2.0 + 0.5 * (g // 8)


def mix(d):
    return (7 * d + 3) % 48


OK, RECVD, SENT, LOCTRANS, TOREST, OUTPUT, SENTOUT, RECVOUT, WAITGROUP = 0, 3, 4, 5, 6, 7, 8, 12, 14
OUTPUTS = ("OPT",)  # OUTPUT: the ocean's field to a file (put: OASIS_Output), no get
# a two-field entry (O_MF1:O_MF2): the group is sent at the last field's put, the others wait
WAITING = ("MF1",)
EXPOUT = ("OUT",)  # EXPOUT: both sides also write the field at each coupling date to a file


def value(g, date, k):  # oasis_semantics.F90's value()
    return 100.0 * math.sin(0.37 * g + 0.11 * (date // DT) + 0.7 * k) + k


def sent(f, g, date):
    """What the ocean sends of field f for point g at the coupling date `date`: the entry's time
    operation over its puts of (date - L - p, date - L] (clipped at 0; before date 0: the restart
    file's value of date -3600)."""
    k, period, op, lag = ENTRIES[f]
    last = date - lag
    dates = range(max(0, last - period + DT), last + 1, DT) if last >= 0 else [last]
    v = [value(g, d, k) for d in dates]
    return {"INSTANT": v[-1], "AVERAGE": sum(v) / len(v), "ACCUMUL": sum(v),
            "T_MIN": min(v), "T_MAX": max(v)}[op]


def load(d):
    calls, values = {}, {}
    paths = sorted(glob.glob(os.path.join(d, "semantics_*.txt")))
    if not paths:
        sys.exit(f"{d}: no semantics_*.txt records")
    for path in paths:
        comp = os.path.basename(path).split("_")[1]
        key = None
        for line in open(path):
            w = line.split()
            if w[0] in ("put", "get"):
                key = (comp, w[0], w[1][2:], int(w[2]))
                calls.setdefault(key, set()).add(int(w[3]))
            else:
                values[key[2], key[3], int(w[0])] = float(w[1])
    return calls, values


def close(a, b):
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def check_expected(run_dir, calls, values, bad, label):
    for f, (_, period, op, lag) in ENTRIES.items():
        for date in range(0, NDATES * DT, DT):
            lagged = date + lag
            want_put = (TOREST if lagged == RUNTIME else SENT if lagged % period == 0
                        else OK if op == "INSTANT" else LOCTRANS)
            coupling = date % period == 0
            want_get = RECVD if coupling else OK
            if f in WAITING and want_put == SENT:
                want_put = WAITGROUP
            if f in EXPOUT:
                want_put = SENTOUT if want_put == SENT else want_put
                want_get = RECVOUT if want_get == RECVD else want_get
            checks = [("ocn", "put", want_put), ("atm", "get", want_get)]
            if f in OUTPUTS:
                checks = [("ocn", "put", OUTPUT if want_put == SENT else want_put)]
                if ("atm", "get", f, date) in calls:
                    bad.append(f"{label}: a get of the OUTPUT field {f}")
            for comp, call, want in checks:
                got = calls.get((comp, call, f, date))
                if got != {want}:
                    bad.append(f"{label}: {call} of {f} at date {date}: kinfo {got}, expected {want}")
            if not coupling or f in OUTPUTS:
                continue
            points = sorted(g for (ff, d, g) in values if ff == f and d == date)
            if len(points) != 48:
                bad.append(f"{label}: {f} at date {date}: {len(points)} points received, expected 48")

            def mapped(g):
                if f in HOT:
                    return sum(w[j - 1] * sent_term(f, j, s, date, label == "reference")
                               for s, w in ((g, HOT_WEIGHTS[0]), (mix(g), HOT_WEIGHTS[1]))
                               for j in (1, 2, 3))
                return 0.75 * sent(f, g, date) + 0.25 * sent(f, mix(g), date)

            shift, factor = 0.0, 1.0
            if f in CONSERVED:
                active_src = [g for g in range(48) if g != MASKED_SRC]
                active_dst = [g for g in range(48) if g != MASKED_DST]
                target = sum(cell_area(True, g) * sent(f, g, date) for g in active_src)
                how, basin = CONSERVED[f]
                if basin:
                    target *= (sum(cell_area(False, g) for g in active_dst) /
                               sum(cell_area(True, g) for g in active_src))
                now = sum(cell_area(False, g) * mapped(g) for g in active_dst)
                if how == "add":
                    shift = (target - now) / sum(cell_area(False, g) for g in active_dst)
                else:
                    factor = target / now
                got = sum(cell_area(False, g) * values.get((f, date, g), 0.0) for g in active_dst)
                if not close(got, target):
                    bad.append(f"{label}: {f} at date {date}: integral {got!r}, expected {target!r}")
            for g in points:
                want = sent(f, g, date)
                if f in MAPPED or f in HOT:
                    want = mapped(g)
                    if f in CONSERVED and g != MASKED_DST:
                        want = want * factor + shift
                if not close(values[f, date, g], want):
                    bad.append(f"{label}: {op} of {f} at date {date}, point {g}: "
                               f"{values[f, date, g]!r}, expected {want!r}")
    # the files of the EXPOUT and OUTPUT entries (OASIS3-MCT's names: field_component_entry.nc):
    # what was sent, one record per coupling date
    from netCDF4 import Dataset
    for name, f in (("O_OUT_ocn_09", "OUT"), ("A_OUT_atm_09", "OUT"), ("O_OPT_ocn_17", "OPT")):
        period = ENTRIES[f][1]
        path = os.path.join(run_dir, name + ".nc")
        if not os.path.exists(path):
            bad.append(f"{label}: no {name}.nc")
            continue
        with Dataset(path) as nc:
            times = [int(t) for t in nc["time"][:]]
            data = nc[name[:5]][:]
        if times != list(range(0, NDATES * DT, period)):
            bad.append(f"{label}: {name}.nc has the times {times}")
            continue
        for i, t in enumerate(times):
            rec = [float(x) for x in data[i].ravel()]
            for g in range(48):
                if not close(rec[g], sent(f, g, t)):
                    bad.append(f"{label}: {name}.nc at time {t}, point {g}: {rec[g]!r}, "
                               f"expected {sent(f, g, t)!r}")
                    break
    # the lagged entry's last put (date RUNTIME - lag) went to its restart file
    with Dataset(os.path.join(run_dir, "r_LAG.nc")) as nc:
        saved = [float(x) for x in nc["O_LAG"][:].ravel()]
    want = [value(g, RUNTIME - ENTRIES["LAG"][3], 6) for g in range(48)]
    if len(saved) != 48 or not all(close(a, b) for a, b in zip(saved, want)):
        bad.append(f"{label}: r_LAG.nc holds {saved[:3]}..., expected the put of date "
                   f"{RUNTIME - ENTRIES['LAG'][3]}: {want[:3]}...")


if sys.argv[1] == "--weights-cdl":
    # the mapped entries' weights file, SCRIP's layout; --weights-cdl hot: w_hot.nc, 3 weights
    hot = sys.argv[2:] == ["hot"]
    if hot:
        links = [(s, d, w) for d in range(48) for s, w in ((d, HOT_WEIGHTS[0]), (mix(d), HOT_WEIGHTS[1]))]
    else:
        links = [(s, d, (w,)) for d in range(48) for s, w in ((d, 0.75), (mix(d), 0.25))]
    print(f"netcdf w_{'hot' if hot else 'mix'} {{\ndimensions:\n  src_grid_size = 48 ;\n  dst_grid_size = 48 ;\n"
          "  src_grid_rank = 2 ;\n  dst_grid_rank = 2 ;\n"
          f"  num_links = {len(links)} ;\n  num_wgts = {3 if hot else 1} ;\nvariables:\n"
          "  int src_grid_dims(src_grid_rank) ;\n  int dst_grid_dims(dst_grid_rank) ;\n"
          "  int src_address(num_links) ;\n  int dst_address(num_links) ;\n"
          "  double remap_matrix(num_links, num_wgts) ;\n"
          '  :title = "isthmus semantics test: 3/4 of a point and 1/4 of another" ;\n'
          '  :normalization = "none" ;\n  :map_method = "test" ;\n  :conventions = "SCRIP" ;\n'
          "data:\n  src_grid_dims = 8, 6 ;\n  dst_grid_dims = 8, 6 ;\n"
          f"  src_address = {', '.join(str(s + 1) for s, _, _ in links)} ;\n"
          f"  dst_address = {', '.join(str(d + 1) for _, d, _ in links)} ;\n"
          f"  remap_matrix = {', '.join(repr(x) for _, _, w in links for x in w)} ;\n}}")
    sys.exit(0)
if sys.argv[1] == "--restart-cdl":
    # a lagged entry's restart file (FIELD, e.g. LAG): its field at date -DT, OASIS3-MCT's layout
    # (and for a HOT entry its fld2 as av2_O_<FIELD>, OASIS3-MCT's name)
    f = sys.argv[2]
    names = [("O_" + f, ENTRIES[f][0])] + ([("av2_O_" + f, ENTRIES[f][0] + 20)] if f in HOT else [])
    dims = "".join(f"  {n}_nx = 8 ;\n  {n}_ny = 6 ;\n" for n, _ in names)
    decls = "".join(f"  double {n}({n}_ny, {n}_nx) ;\n" for n, _ in names)
    datas = "".join(f"  {n} =\n    " + ",\n    ".join(f"{value(g, -DT, k)!r}" for g in range(48)) + " ;\n"
                    for n, k in names)
    print(f"netcdf r_{f} {{\ndimensions:\n" + dims + "variables:\n" + decls + "data:\n" + datas + "}")
    sys.exit(0)
same = sys.argv[1] == "--same"
args = sys.argv[2:] if same else sys.argv[1:]
bad = []
calls, values = load(args[0])
if not same:
    check_expected(args[0], calls, values, bad, "run")
if len(args) > 1:
    ref_calls, ref_values = load(args[1])
    if not same:
        check_expected(args[1], ref_calls, ref_values, bad, "reference")
    for key in sorted(set(calls) | set(ref_calls)):
        if calls.get(key) != ref_calls.get(key):
            bad.append(f"{key}: kinfo {calls.get(key)} against the reference's {ref_calls.get(key)}")
    for key in sorted(set(values) | set(ref_values)):
        if key[:2] in OASIS2_RESTART_TERMS_IGNORED:
            continue
        a, b = values.get(key), ref_values.get(key)
        if a is None or b is None or not close(a, b):
            bad.append(f"{key[0]} at date {key[1]}, point {key[2]}: {a!r} against the reference's {b!r}")
print(f"{len(calls)} calls and {len(values)} received values checked"
      f"{' against the reference run' if same else ' against the reference run too' if len(args) > 1 else ''}"
      f": {len(bad)} differences")
for b in bad[:40]:
    print("  " + b)
sys.exit(1 if bad else 0)
