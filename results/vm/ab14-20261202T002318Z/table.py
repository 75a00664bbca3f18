#!/usr/bin/env python3
"""Best-variant table new/old from ab.sh's alternating results files.
usage: table.py OUTDIR  (reads old-K.json/new-K.json, runs `specbench compare` per kernel)"""
import json, os, statistics, subprocess, sys, glob
out = sys.argv[1]
rows = []
def reps(path):
    d = json.load(open(path))
    r = {}
    for b in d.get("benchmarks", []):
        if b.get("run_type") != "iteration" or not b.get("verified", True):
            continue
        sz = ",".join(f"{k}={v}" for k, v in sorted(b["sizes"].items()))
        r.setdefault((b["backend"], sz), {}).setdefault(b["variant"], []).append(b["real_time"])
    return r, d["context"].get("git_commit", "?")[:7]
print("| kernel | backend | sizes | old best (variant) | new best (variant) | new/old | spread old / new | verdict (same variant) |")
print("|---|---|---|---|---|---|---|---|")
for newf in sorted(glob.glob(os.path.join(out, "new-*.json"))):
    k = os.path.basename(newf)[4:-5]
    oldf = os.path.join(out, f"old-{k}.json")
    if not os.path.exists(oldf):
        continue
    o, oc = reps(oldf); n, nc = reps(newf)
    cmp = subprocess.run(["/work/main/build/bin/specbench", "compare", oldf, newf, "--json", "-"],
                         capture_output=True, text=True)
    verdicts = {}
    try:
        for b in json.loads(cmp.stdout)["benchmarks"]:
            verdicts[(b["backend"], b["variant"], ",".join(sorted(b["sizes"].split(","))))] = (b["verdict"], b.get("p_value"), b.get("noisy"))
    except Exception as e:
        pass
    for key in sorted(set(o) & set(n)):
        def best(m):
            v = min(m, key=lambda v: statistics.median(m[v]))
            return v, statistics.median(m[v]), (max(m[v]) - min(m[v])) / statistics.median(m[v])
        ov, ot, osp = best(o[key]); nv, nt, nsp = best(n[key])
        ver = verdicts.get((key[0], nv, key[1]))
        vs = f"{ver[0]} (p={ver[1]:.3g}{', noisy' if ver[2] else ''})" if ver and ver[1] is not None else (ver[0] if ver else "-")
        rows.append((k, key[0], key[1], nt / ot))
        print(f"| {k} | {key[0]} | {key[1]} | {ot/1e6:.4g} ms ({ov}) | {nt/1e6:.4g} ms ({nv}) | {nt/ot:.3f} | {osp:.1%} / {nsp:.1%} | {vs} |")
if rows:
    rs = [r[3] for r in rows]
    print(f"\n{len(rs)} best-variant ratios: median {statistics.median(rs):.3f}, min {min(rs):.3f}, max {max(rs):.3f}")
