#!/usr/bin/env python3
"""The GPU summary of one specbench results file, as Markdown on stdout.

It only formats what the run recorded (the file's "summary", "failed", "verification" and
context): per kernel and size, the best variant of each GPU backend, its rate against the
measured triad and against the memory's theoretical peak (the memory_peak probe), x vs the
vendor libraries, and the native CUDA column against every other GPU language (Mojo GPU).
With --strict (as harness/scripts/gpu-check.sh runs it on a GPU machine) the exit status is 1
when any GPU case failed or was skipped: there, a skip means the device was not used.
usage: gpu_summary.py [--strict] RESULTS.json
       gpu_summary.py --backends - < RECORDS.json   (the timed GPU backends' names)
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = os.path.join(HERE, "..", "report", "backends.json")


def gpu_backends(records=None):
    """The timed GPU backends of the backend records (default: harness/report/backends.json):
    (native, vendors, others, languages)."""
    if records is None:
        with open(BACKENDS, encoding="utf-8") as f:
            records = json.load(f)
    gpu = [r for r in records if r["device"] == "gpu" and r["timed"]]
    native = [r["name"] for r in gpu if r["native"]]
    vendors = [r["name"] for r in gpu if r["vendor"]]
    others = [r["name"] for r in gpu if not r["native"] and not r["vendor"]]
    return native, vendors, others, {r["name"]: r["language"] for r in gpu}


def fmt_time(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_pct(x):
    return "-" if x is None or not math.isfinite(x) else f"{100 * x:.0f}%"


def probe_rate(probes, name):
    p = probes.get("gpu", {}).get(name, {})
    if not p.get("ok"):
        return None, p.get("reason", "not run")
    return p.get("gbps", p.get("gflops")), p.get("detail", "")


def main(argv):
    if argv[1:] == ["--backends", "-"]:
        # The names alone, one per line, from the records on stdin (`specbench list
        # --backends-json`): what gpu-check.sh and gpu-offline.sh run and pack.
        native, vendors, others, _ = gpu_backends(json.load(sys.stdin))
        print("\n".join(native + vendors + others))
        return 0
    strict = "--strict" in argv[1:]
    argv = [a for a in argv if a != "--strict"]
    if len(argv) != 2:
        print("\n".join(__doc__.strip().splitlines()[-2:]), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    native, vendors, others, language = gpu_backends()
    ctx = doc.get("context", {})
    probes = ctx.get("probes", {})
    out = []
    out.append("# specbench GPU summary")
    out.append("")
    out.append(f"- results: `{os.path.basename(argv[1])}`, commit {ctx.get('git_commit', '?')}")
    out.append(f"- gpu: {ctx.get('gpu', '?')}; nvcc: {ctx.get('nvcc', '?')}")
    for name in ("triad", "memory_peak", "sgemm"):
        rate, detail = probe_rate(probes, name)
        unit = "GFLOP/s" if name == "sgemm" else "GB/s"
        shown = f"{rate:.0f} {unit} ({detail})" if rate else f"skipped: {detail}"
        out.append(f"- probe {name}: {shown}")
    triad, _ = probe_rate(probes, "triad")
    peak, _ = probe_rate(probes, "memory_peak")
    if triad and peak:
        out.append(f"- the triad reaches {100 * triad / peak:.0f}% of the memory's theoretical peak")
    v = doc.get("verification")
    if v:
        out.append(f"- verification (every backend of the run): {v.get('checks')} checks, "
                   f"{v.get('passed')} passed, {v.get('failed')} failed, {v.get('skipped')} skipped")
    gpu_names = set(native) | set(vendors) | set(others)
    failed = [p for p in doc.get("failed", []) if p.get("backend") in gpu_names]
    skipped = [p for p in doc.get("skipped", []) if p.get("backend") in gpu_names]
    out.append(f"- GPU failures: {len(failed)}; GPU cases skipped: {len(skipped)}")
    missing = [b for b in ("mojo_gpu",) if b not in gpu_names]
    for b in missing:
        out.append(f"- {b}: not a backend of this build, so no Mojo GPU column")
    out.append("")

    rows = {}
    order = []
    for e in doc.get("summary", []):
        if e.get("backend") not in gpu_names:
            continue
        key = (e["kernel"], e["sizes"])
        if key not in rows:
            rows[key] = {}
            order.append(key)
        rows[key][e["backend"]] = e

    # ptxas's facts per variant (every architecture the run compiled): the most registers and
    # the lowest occupancy over its kernels, and whether any spills.
    facts = {}
    for f in doc.get("kernel_facts", []) or []:
        key = (f.get("kernel"), f.get("backend"), f.get("variant"))
        facts.setdefault(key, []).append(f)

    def facts_cell(kernel, backend, variant):
        rows = facts.get((kernel, backend, variant))
        if not rows:
            return "-"
        regs = max(r.get("registers") or 0 for r in rows)
        occ = [r["occupancy"] for r in rows if r.get("occupancy") is not None]
        cell = f"{regs} regs"
        if occ:
            bound = "<=" if any(r.get("occupancy_is_upper_bound") for r in rows) else ""
            cell += f", {bound}{100 * min(occ):.0f}% occ"
        if any((r.get("spill_store_bytes") or 0) + (r.get("spill_load_bytes") or 0) for r in rows):
            cell += ", spills"
        return cell

    head = ["kernel", "size"]
    for b in native:
        head += [f"best {b}", "time", "rate", "% of triad", "% of peak", "x vs vendor",
                 "ptxas"]
    for b in vendors:
        head += [f"best {b}", "time"]
    for b in others:
        head += [f"best {b}", "time", f"{'/'.join(native)} time / {b} time", "ptxas"]
    head.append("flags")
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for key in order:
        r = rows[key]
        cells = [key[0], key[1]]
        flags = []
        base = None
        for b in native:
            e = r.get(b)
            if not e:
                cells += ["-"] * 7
                continue
            base = e
            rate = e.get("rate")
            unit = e.get("unit", "")
            pct_peak = None
            if e.get("bound") == "memory" and peak and e.get("gbps"):
                pct_peak = e["gbps"] / peak
            vs = e.get("vs_vendor")
            cells += [e["variant"], fmt_time(e.get("seconds")),
                      f"{rate:.4g} {unit}" if rate else "-", fmt_pct(e.get("roofline_fraction")),
                      fmt_pct(pct_peak), f"{vs:.2f}x" if vs else "-",
                      facts_cell(key[0], b, e["variant"])]
            if e.get("suspect"):
                flags.append(f"{b}: SUSPECT ({e['suspect']})")
            if e.get("noisy"):
                flags.append(f"{b}: noisy")
        for b in vendors:
            e = r.get(b)
            cells += [e["variant"], fmt_time(e.get("seconds"))] if e else ["-", "-"]
        for b in others:
            e = r.get(b)
            if not e:
                cells += ["-", "-", "-", "-"]
                continue
            ratio = "-"
            if base and e.get("seconds"):
                ratio = f"{base['seconds'] / e['seconds']:.2f}"
            cells += [e["variant"], fmt_time(e.get("seconds")), ratio,
                      facts_cell(key[0], b, e["variant"])]
            if e.get("suspect"):
                flags.append(f"{b}: SUSPECT ({e['suspect']})")
        cells.append("; ".join(flags))
        out.append("| " + " | ".join(cells) + " |")
    if failed:
        out.append("")
        out.append("## GPU failures")
        out.append("")
        for p in failed:
            sizes = p.get("sizes", "")
            if isinstance(sizes, dict):
                sizes = ",".join(f"{k}={v}" for k, v in sizes.items())
            reason = str(p.get("reason", "")).replace("\n", " ")[:300]
            out.append(f"- {p.get('kernel')}/{p.get('backend')}/{p.get('variant')} {sizes}: {reason}")
    if skipped:
        out.append("")
        out.append("## GPU cases skipped")
        out.append("")
        reasons = {}
        for p in skipped:
            reasons.setdefault(str(p.get("reason", "")), []).append(p)
        for reason, ps in reasons.items():
            out.append(f"- {len(ps)} cases: {reason[:300]}")
    print("\n".join(out))
    if strict and (failed or skipped):
        print(f"gpu_summary: {len(failed)} GPU failures and {len(skipped)} GPU cases skipped "
              "on a machine with a GPU", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
