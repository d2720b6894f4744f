#!/usr/bin/env python3
"""Helpers for tests/integration/run.sh: parse valgrind / heaptrack / program
output and heapscope JSON reports, and print one `ok NAME` / `FAIL NAME: why`
line per check.  Stdlib only."""
import json
import re
import sys

FIELDS = ["allocs", "frees", "bytes", "leaked_count", "leaked_bytes"]
JSON_PATH = {
    "allocs": ("allocations",),
    "frees": ("frees",),
    "bytes": ("bytes_allocated",),
    "leaked_count": ("leaked", "count"),
    "leaked_bytes": ("leaked", "bytes"),
}


def num(s):
    return int(s.replace(",", ""))


def vg(path):
    """valgrind HEAP SUMMARY -> allocs frees bytes leaked_count leaked_bytes"""
    txt = open(path, errors="replace").read()
    m1 = re.search(r"in use at exit: ([\d,]+) bytes in ([\d,]+) blocks", txt)
    m2 = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated", txt)
    if not (m1 and m2):
        sys.exit("no HEAP SUMMARY in %s" % path)
    print(num(m2.group(1)), num(m2.group(2)), num(m2.group(3)), num(m1.group(2)), num(m1.group(1)))


def fig(path, prefix=""):
    """a program's own `figures:` line (optionally prefixed, e.g. child:)"""
    for line in open(path, errors="replace"):
        if line.startswith(prefix + "figures:"):
            d = dict(kv.split("=") for kv in line.split("figures:", 1)[1].split())
            print(*(d[f] for f in FIELDS))
            return
    sys.exit("no %sfigures line in %s" % (prefix, path))


def kv(path, key):
    """value of a `key=N` line in a program's stdout"""
    for line in open(path, errors="replace"):
        if line.startswith(key + "="):
            print(line.split("=", 1)[1].strip())
            return
    sys.exit("no %s= line in %s" % (key, path))


def ht(path):
    """heaptrack_print output -> 'calls to allocation functions: N'"""
    m = re.search(r"^calls to allocation functions: (\d+)", open(path, errors="replace").read(), re.M)
    if not m:
        sys.exit("no 'calls to allocation functions' in %s" % path)
    print(m.group(1))


def load(path):
    with open(path) as f:
        return json.load(f)


def dig(d, path):
    for p in path:
        d = d[p]
    return d


def get(path, dotted):
    print(dig(load(path), dotted.split(".")))


def cmp_(name, path, *vals):
    """exact comparison of the five valgrind-style fields; '-' skips one"""
    try:
        r = load(path)
    except Exception as e:  # noqa: BLE001
        print("FAIL %s: report is not valid JSON (%s)" % (name, str(e).splitlines()[0]))
        return
    bad = []
    for f, v in zip(FIELDS, vals):
        if v == "-":
            continue
        try:
            got = dig(r, JSON_PATH[f])
        except (KeyError, TypeError):
            bad.append("%s missing" % ".".join(JSON_PATH[f]))
            continue
        if got != int(v):
            bad.append("%s expected %s got %s" % (".".join(JSON_PATH[f]), v, got))
    print("ok %s" % name if not bad else "FAIL %s: %s" % (name, "; ".join(bad)))


def frames_of(r, lists=("bytes_allocated", "calls", "peak", "leaked")):
    for lst in lists:
        for site in (r.get("top", {}).get(lst) or []):
            for fr in site.get("frames") or []:
                yield lst, site, fr


def sym_site(name, path, func, fname, line):
    """top leaked site must show func in fname at the exact line"""
    try:
        r = load(path)
        sites = r["top"]["leaked"]
    except Exception as e:  # noqa: BLE001
        print("FAIL %s: cannot read top.leaked (%s)" % (name, e))
        return
    if not sites:
        print("FAIL %s: top.leaked is empty" % name)
        return
    fr = sites[0].get("frames") or []
    for f in fr:
        if (f.get("function") or "").startswith(func) and (f.get("file") or "").endswith(fname) \
                and f.get("line") == int(line):
            print("ok %s" % name)
            return
    shown = ["%s %s:%s" % (f.get("function"), f.get("file"), f.get("line")) for f in fr[:6]]
    print("FAIL %s: expected frame %s at %s:%s in top leaked site, got [%s]"
          % (name, func, fname, line, ", ".join(shown)))


def sym_frame(name, path, func, fname, line):
    """some top site has a frame of func at fname:line (the call site in func)"""
    try:
        r = load(path)
    except Exception as e:  # noqa: BLE001
        print("FAIL %s: report unreadable (%s)" % (name, e))
        return
    seen = []
    for _, _, f in frames_of(r):
        if (f.get("function") or "").startswith(func):
            if (f.get("file") or "").endswith(fname) and f.get("line") == int(line):
                print("ok %s" % name)
                return
            seen.append("%s:%s" % (f.get("file"), f.get("line")))
    print("FAIL %s: no frame %s at %s:%s; its frames are at [%s]"
          % (name, func, fname, line, ", ".join(sorted(set(seen))[:6]) or "(none)"))


def no_mangled(name, path):
    """no frame of any top site keeps a mangled C++ or Rust name"""
    try:
        r = load(path)
    except Exception as e:  # noqa: BLE001
        print("FAIL %s: report unreadable (%s)" % (name, e))
        return
    bad = sorted({f.get("function") for _, _, f in frames_of(r)
                  if (f.get("function") or "").startswith(("_R", "_Z"))})
    if bad:
        print("FAIL %s: mangled names left: %s" % (name, ", ".join(bad[:5])))
    else:
        print("ok %s" % name)


def sym_any(name, path, needle):
    """some frame of some top site has a function containing needle"""
    try:
        r = load(path)
    except Exception as e:  # noqa: BLE001
        print("FAIL %s: report unreadable (%s)" % (name, e))
        return
    funcs = sorted({f.get("function") or "" for _, _, f in frames_of(r)})
    if any(needle in fn for fn in funcs):
        print("ok %s" % name)
    else:
        print("FAIL %s: no frame function contains %r; functions seen: %s"
              % (name, needle, ", ".join(funcs[:12]) or "(none)"))


def no_hs(name, *paths):
    """tracer frames (hs_* functions, or anything in libheapscope.so) must never appear"""
    bad = set()
    nframes = 0
    for p in paths:
        try:
            r = load(p)
        except Exception as e:  # noqa: BLE001
            print("FAIL %s: report %s unreadable (%s)" % (name, p, e))
            return
        for _, _, f in frames_of(r):
            nframes += 1
            fn = f.get("function") or ""
            mod = f.get("module") or ""
            if fn.startswith("hs_") or mod.endswith("/libheapscope.so"):
                bad.add("%s [%s]" % (fn or f.get("address"), mod.rsplit("/", 1)[-1]))
    if nframes == 0:
        print("FAIL %s: reports contain no frames at all" % name)
    elif bad:
        print("FAIL %s: tracer frames in reports: %s" % (name, ", ".join(sorted(bad))))
    else:
        print("ok %s" % name)


def within(name, path, dotted, truth, tol_pct):
    try:
        got = dig(load(path), dotted.split("."))
    except Exception as e:  # noqa: BLE001
        print("FAIL %s: %s unreadable (%s)" % (name, dotted, e))
        return
    truth = float(truth)
    err = abs(float(got) - truth) / truth * 100 if truth else float("inf")
    if err <= float(tol_pct):
        print("ok %s" % name)
    else:
        print("FAIL %s: %s expected %d +-%s%% got %s (%.2f%% off)" % (name, dotted, truth, tol_pct, got, err))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"vg": vg, "fig": fig, "kv": kv, "ht": ht, "get": get, "cmp": cmp_, "sym_site": sym_site,
     "sym_any": sym_any, "sym_frame": sym_frame, "no_mangled": no_mangled, "no_hs": no_hs,
     "within": within}[cmd](*args)
