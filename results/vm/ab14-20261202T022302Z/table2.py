#!/usr/bin/env python3
"""Best-variant table new/old from ab2.sh's rounds. usage: table2.py OUTDIR
Merges each side's rounds into OUTDIR/merged-{old,new}-K.json (iteration records only), runs
`specbench compare` on them for the verdicts, and prints a markdown table."""
import copy, glob, json, os, re, statistics, subprocess, sys
out = sys.argv[1]
SB = "/work/main/build/bin/specbench"
kernels = sorted({m.group(2) for p in glob.glob(os.path.join(out, "*-r*.json"))
                  if (m := re.fullmatch(r"(old|new)-(.+)-r\d+\.json", os.path.basename(p)))})
def merge(side, k):
    files = sorted(glob.glob(os.path.join(out, f"{side}-{k}-r*.json")))
    base = None
    for f in files:
        d = json.load(open(f))
        if base is None:
            base = copy.deepcopy(d); base["benchmarks"] = []
        base["benchmarks"] += [b for b in d.get("benchmarks", []) if b.get("run_type") == "iteration"]
    path = os.path.join(out, f"merged-{side}-{k}.json")
    json.dump(base, open(path, "w"), indent=1)
    return path, base
rows = []
print("| kernel | backend | sizes | old best (variant) | new best (variant) | new/old | spread old / new | n | verdict (same variant) |")
print("|---|---|---|---|---|---|---|---|---|")
for k in kernels:
    (op, o), (np_, n) = merge("old", k), merge("new", k)
    def reps(d):
        r = {}
        for b in d["benchmarks"]:
            if not b.get("verified", True):
                continue
            sz = ",".join(f"{a}={v}" for a, v in sorted(b["sizes"].items()))
            r.setdefault((b["backend"], sz), {}).setdefault(b["variant"], []).append(b["real_time"])
        return r
    ro, rn = reps(o), reps(n)
    cmp = subprocess.run([SB, "compare", op, np_, "--json", "-"], capture_output=True, text=True)
    verdicts = {}
    try:
        for b in json.loads(cmp.stdout)["benchmarks"]:
            verdicts[(b["backend"], b["variant"], ",".join(sorted(b["sizes"].split(","))))] = (
                b["verdict"], b.get("p_value"), b.get("noisy"))
    except Exception as e:
        print(f"<!-- compare failed for {k}: {e}: {cmp.stderr[:300]} -->")
    for key in sorted(set(ro) & set(rn)):
        def best(m):
            v = min(m, key=lambda v: statistics.median(m[v]))
            xs = sorted(m[v]); med = statistics.median(xs)
            q = statistics.quantiles(xs, n=4) if len(xs) >= 4 else [xs[0], med, xs[-1]]
            return v, med, (q[2] - q[0]) / med, len(xs)
        ov, ot, osp, on = best(ro[key]); nv, nt, nsp, nn = best(rn[key])
        ver = verdicts.get((key[0], nv, key[1]))
        vs = (f"{ver[0]} (p={ver[1]:.3g}{', noisy' if ver[2] else ''})"
              if ver and ver[1] is not None else (ver[0] if ver else "-"))
        rows.append((k, key[0], nt / ot))
        print(f"| {k} | {key[0]} | {key[1]} | {ot/1e6:.4g} ms ({ov}) | {nt/1e6:.4g} ms ({nv}) | "
              f"{nt/ot:.3f} | {osp:.1%} / {nsp:.1%} | {on}/{nn} | {vs} |")
if rows:
    rs = [r[2] for r in rows]
    print(f"\n{len(rs)} best-variant ratios: median {statistics.median(rs):.3f}, "
          f"min {min(rs):.3f}, max {max(rs):.3f}; spread = interquartile range / median")
