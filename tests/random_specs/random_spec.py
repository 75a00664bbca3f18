#!/usr/bin/env python3
"""Random well-formed specs, for a differential sweep of every backend against the reference.

    random_spec.py SEED [KINDS]   prints the spec of seed SEED (fz<SEED>) on standard output

A spec is one to three statement templates drawn at random (KINDS: a comma-separated subset of
the names in Gen.ALL_KINDS), over random element types, broadcast, transposed, shifted (under a
boundary rule), stride-2 and gathered reads, elementwise functions, reductions, scans, row
groups, products, stencils, convolutions, pooling, norms, views and attention, with ragged
verify sizes. It lists every strategy of every backend; verify_random_specs.sh drops those that
do not fit, as `gen` says, and verifies the rest. The specs are new to the generator, as a
user's are: a failure is a bug of the generator or the harness (or of this file's templates,
when `gen` rejects a spec for a reason other than a variant)."""
import random
import re
import sys


def pick(r, xs):
    return xs[r.randrange(len(xs))]


class Gen:
    ALL_KINDS = ["elem", "elem_chain", "reduce", "outer", "scan", "rows", "gemm", "stencil",
                 "conv", "scalar", "argmax", "int", "pool", "norm", "bmm", "view", "conv2d",
                 "attn", "misc"]

    def __init__(self, seed, kinds=None):
        self.kinds = kinds or self.ALL_KINDS
        self.r = random.Random(seed)
        self.seed = seed
        self.tensors = {}   # name -> dict
        self.order = []
        self.stmts = []
        self.n = 0

    def fresh(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def tensor(self, name, ty, shape, role, **kw):
        d = {"type": ty, "shape": shape, "role": role}
        d.update(kw)
        self.tensors[name] = d
        self.order.append(name)
        return name

    def ty(self):
        return pick(self.r, ["f32"] * 6 + ["f64"] * 2 + ["bf16", "f16"])

    # an elementwise expression over index vars `iv` (list of (var, size)) of float type
    def leaf(self, iv, ty, depth):
        r = self.r
        k = r.randrange(9)
        names = [v for v, _ in iv]
        shape = [s for _, s in iv]
        cty = "f64" if ty == "f64" else "f32"
        if k == 0 and len(iv) >= 1:
            # broadcast read along one dim
            j = r.randrange(len(iv))
            t = self.tensor(self.fresh("b"), ty, [shape[j]], "in")
            return f"{t}[{names[j]}]"
        if k == 1 and len(iv) == 2:
            t = self.tensor(self.fresh("xt"), ty, [shape[1], shape[0]], "in")
            return f"{t}[{names[1]}, {names[0]}]"
        if k == 2:
            # offset read with a boundary rule
            t = self.tensor(self.fresh("xo"), ty, shape, "in", boundary=pick(r, ["zero", "clamp"]))
            subs = [f"{v} {pick(r, ['+', '-'])} {r.randrange(1, 3)}" if r.random() < 0.6 else v
                    for v in names]
            return f"{t}[{', '.join(subs)}]"
        if k == 3 and len(iv) <= 2:
            # stride-2 read along the last dim
            last = shape[-1]
            t = self.tensor(self.fresh("xs"), ty, shape[:-1] + [f"2 * {last}"], "in")
            subs = names[:-1] + [f"2 * {names[-1]}" + pick(r, ["", " + 1"])]
            return f"{t}[{', '.join(subs)}]"
        if k == 4:
            # gather along the first dim
            if len(iv) >= 1:
                idx = self.tensor(self.fresh("ix"), "i32", [shape[0]], "in", init=[0, "V - 1"])
                t = self.tensor(self.fresh("tab"), ty, ["V"] + shape[1:], "in")
                subs = [f"{idx}[{names[0]}]"] + names[1:]
                return f"{t}[{', '.join(subs)}]"
        if k == 5:
            v = pick(r, names)
            return f"{cty}({v} % 7) * 0.25"
        if k == 6:
            return pick(r, ["0.5", "2", "-1.5", "3"])
        t = self.tensor(self.fresh("x"), ty, shape, "in")
        return f"{t}[{', '.join(names)}]"

    def expr(self, iv, ty, depth=0, extra=()):
        r = self.r
        if depth >= 2 or r.random() < 0.3:
            if extra and r.random() < 0.6:
                return pick(r, list(extra))
            return self.leaf(iv, ty, depth)
        k = r.randrange(8)
        a = self.expr(iv, ty, depth + 1, extra)
        b = self.expr(iv, ty, depth + 1, extra)
        if k == 0:
            return f"({a} + {b})"
        if k == 1:
            return f"({a} * {b})"
        if k == 2:
            return f"({a} - {b})"
        if k == 3:
            return f"{pick(r, ['tanh', 'sigmoid', 'abs', 'sin', 'floor', 'sign'])}({a})"
        if k == 4:
            return f"max({a}, {b})"
        if k == 5:
            return f"select({a} > {b}, {a}, {b} * 0.5)"
        if k == 6:
            return f"exp(min({a}, 4))"
        return f"{a} / (1 + abs({b}))"

    def sizes_for(self, rank):
        return [["N"], ["R", "C"], ["B", "R", "C"]][rank - 1]

    def stmt(self, rank):
        r = self.r
        kind = pick(r, self.kinds)
        ty = self.ty()
        out_role = "out"
        if kind == "elem" or (kind in ("elem_chain",) and not self.stmts):
            dims = self.sizes_for(rank)
            vars_ = ["i", "j", "k"][:rank] if rank > 1 else ["i"]
            iv = list(zip(vars_, dims))
            e = self.expr(iv, ty)
            y = self.tensor(self.fresh("y"), ty, dims, out_role)
            self.stmts.append(f"{y}[{', '.join(vars_)}] = {e}")
        elif kind == "elem_chain":
            # reads an earlier output of the same shape, if any
            prev = [s for s in self.order if self.tensors[s].get("role") == "out"
                    and "view" not in self.tensors[s]]
            p = pick(r, prev)
            pd = self.tensors[p]
            ty = pd["type"]
            dims = pd["shape"]
            if len(dims) == 0:
                return self.stmt(rank)
            vars_ = ["i", "j", "k"][:len(dims)]
            iv = list(zip(vars_, dims))
            e = self.expr(iv, ty, extra=[f"{p}[{', '.join(vars_)}]"])
            if p not in e:
                e = f"({e} + {p}[{', '.join(vars_)}])"
            y = self.tensor(self.fresh("y"), ty, dims, out_role)
            self.stmts.append(f"{y}[{', '.join(vars_)}] = {e}")
        elif kind in ("reduce", "outer"):
            op = pick(r, ["sum", "max", "min", "prod", "sum"])
            if kind == "reduce":
                iv = [("r", "R"), ("c", "C")]
                body = self.expr(iv, ty, 1)
                lo = pick(r, ["0", "0", "1"])
                y = self.tensor(self.fresh("y"), ty, ["R"], out_role)
                wrap = pick(r, ["{}", "{} * 0.5", "sqrt(abs({}))"])
                self.stmts.append(f"{y}[r] = " + wrap.format(f"{op}(c in {lo}..C: {body})"))
            else:
                iv = [("r", "R"), ("c", "C")]
                body = self.expr(iv, ty, 1)
                y = self.tensor(self.fresh("y"), ty, ["C"], out_role)
                self.stmts.append(f"{y}[c] = {op}(r in 0..R: {body})")
            if op == "prod":
                self.prod_stmts.append(len(self.stmts) - 1)
        elif kind == "scan":
            op = pick(r, ["sum", "max", "min", "prod", "sum"])
            excl = r.random() < 0.3
            lo = pick(r, ["0", "0", "1"])
            if rank == 1 or r.random() < 0.4:
                x = self.tensor(self.fresh("x"), ty, ["N"], "in")
                y = self.tensor(self.fresh("y"), ty, ["N"], out_role)
                hi = "i" if excl else "i + 1"
                term = pick(r, [f"{x}[k]", f"{x}[k] * 0.5", f"abs({x}[k])"])
                self.stmts.append(f"{y}[i] = {op}(k in {lo}..{hi}: {term})")
            else:
                x = self.tensor(self.fresh("x"), ty, ["R", "C"], "in")
                y = self.tensor(self.fresh("y"), ty, ["R", "C"], out_role)
                hi = "c" if excl else "c + 1"
                term = pick(r, [f"{x}[r, k]", f"exp({x}[r, k])", f"{x}[r, k] - 0.25"])
                self.stmts.append(f"{y}[r, c] = {op}(k in {lo}..{hi}: {term})")
            if op == "prod":
                self.prod_stmts.append(len(self.stmts) - 1)
        elif kind == "rows":
            x = self.tensor(self.fresh("x"), ty, ["R", "C"], "in")
            m = self.tensor(self.fresh("m"), ty, ["R"], "temp")
            e = self.tensor(self.fresh("e"), ty, ["R", "C"], "temp")
            s = self.tensor(self.fresh("s"), ty, ["R"], "temp")
            y = self.tensor(self.fresh("y"), ty, ["R", "C"], out_role)
            red = pick(r, ["max", "sum"])
            self.stmts.append(f"{m}[r] = {red}(c in 0..C: {x}[r, c])" +
                              (" / f32(C)" if red == "sum" and ty != "f64" else
                               (" / f64(C)" if red == "sum" else "")))
            self.stmts.append(f"{e}[r, c] = exp(min({x}[r, c] - {m}[r], 4))")
            self.stmts.append(f"{s}[r] = sum(c in 0..C: {e}[r, c])")
            self.stmts.append(f"{y}[r, c] = {e}[r, c] / {s}[r]")
        elif kind == "gemm":
            t = pick(r, ["f32", "f32", "f64"])
            ta, tb = r.random() < 0.3, r.random() < 0.3
            a = self.tensor(self.fresh("a"), t, ["K", "R"] if ta else ["R", "K"], "in")
            b = self.tensor(self.fresh("w"), t, ["C", "K"] if tb else ["K", "C"], "in")
            y = self.tensor(self.fresh("y"), t, ["R", "C"], out_role)
            ar = f"{a}[k, i]" if ta else f"{a}[i, k]"
            br = f"{b}[j, k]" if tb else f"{b}[k, j]"
            s = f"sum(k in 0..K: {ar} * {br})"
            if r.random() < 0.4:
                bias = self.tensor(self.fresh("bias"), t, ["C"], "in")
                s = f"max({s} + {bias}[j], 0)"
            self.stmts.append(f"{y}[i, j] = {s}")
        elif kind == "stencil":
            x = self.tensor(self.fresh("x"), ty, ["R", "C"], "in",
                            boundary=pick(r, ["zero", "clamp"]))
            y = self.tensor(self.fresh("y"), ty, ["R", "C"], out_role)
            offs = r.sample([(-1, 0), (1, 0), (0, -1), (0, 1), (0, 0), (-2, 0), (0, 2)], 4)
            terms = [f"{x}[r{'+' if a >= 0 else '-'}{abs(a)}, c{'+' if b >= 0 else '-'}{abs(b)}]"
                     .replace("+0", "").replace("-0", "") for a, b in offs]
            self.stmts.append(f"{y}[r, c] = 0.25 * ({' + '.join(terms)})")
        elif kind == "conv":
            x = self.tensor(self.fresh("x"), ty, ["N + K - 1"], "in")
            w = self.tensor(self.fresh("w"), ty, ["K"], "in")
            y = self.tensor(self.fresh("y"), ty, ["N"], out_role)
            self.stmts.append(f"{y}[i] = sum(k in 0..K: {x}[i + k] * {w}[k])")
        elif kind == "argmax":
            x = self.tensor(self.fresh("x"), ty, ["R", "C"], "in")
            oty = pick(r, ["i32", "i64"])
            y = self.tensor(self.fresh("y"), oty, ["R"], out_role)
            op = pick(r, ["argmax", "argmin"])
            body = pick(r, [f"{x}[r, c]", f"abs({x}[r, c])", f"{x}[r, c] * {x}[r, c]"])
            e = f"{op}(c in 0..C: {body})"
            self.stmts.append(f"{y}[r] = " + (f"i32({e})" if oty == "i32" else e))
        elif kind == "int":
            ity = pick(r, ["i32", "i64"])
            a = self.tensor(self.fresh("ia"), ity, ["R", "C"], "in", init=[-50, 50])
            b = self.tensor(self.fresh("ib"), ity, ["C"], "in", init=[1, 9])
            y = self.tensor(self.fresh("y"), ity, ["R", "C"], out_role)
            e = pick(r, [f"{a}[r, c] / {b}[c] + {a}[r, c] % {b}[c]",
                         f"max({a}[r, c], {b}[c]) * 3 - min({a}[r, c], 0)",
                         f"select({a}[r, c] > 0, {a}[r, c] % 7, -{a}[r, c] / 3)",
                         f"{a}[r, c] * {a}[r, c] + i{ity[1:]}(r) - i{ity[1:]}(c) % 5"])
            self.stmts.append(f"{y}[r, c] = {e}")
            if r.random() < 0.5:
                z = self.tensor(self.fresh("z"), ity, ["R"], out_role)
                self.stmts.append(f"{z}[r] = {pick(r, ['sum', 'max', 'min'])}(c in 0..C: {y}[r, c])")
        elif kind == "pool":
            x = self.tensor(self.fresh("x"), ty, ["B", "R", "C"], "in")
            y = self.tensor(self.fresh("y"), ty, ["B", "(R - 2) / 2 + 1", "(C - 2) / 2 + 1"], out_role)
            op = pick(r, ["max", "sum", "min"])
            self.need_min2 = True
            self.stmts.append(f"{y}[n, i, j] = {op}(a in 0..2: {op}(q in 0..2: {x}[n, 2 * i + a, 2 * j + q]))")
        elif kind == "norm":
            x = self.tensor(self.fresh("x"), ty, ["R", "C"], "in")
            g = self.tensor(self.fresh("g"), ty, ["C"], "in")
            mu = self.tensor(self.fresh("mu"), ty, ["R"], "temp")
            va = self.tensor(self.fresh("va"), ty, ["R"], pick(r, ["temp", "out"]))
            y = self.tensor(self.fresh("y"), ty, ["R", "C"], out_role)
            ct = "f64" if ty == "f64" else "f32"
            self.stmts.append(f"{mu}[r] = sum(c in 0..C: {x}[r, c]) / {ct}(C)")
            self.stmts.append(f"{va}[r] = sum(c in 0..C: ({x}[r, c] - {mu}[r]) * ({x}[r, c] - {mu}[r])) / {ct}(C)")
            self.stmts.append(f"{y}[r, c] = ({x}[r, c] - {mu}[r]) * rsqrt({va}[r] + 1e-5) * {g}[c]")
        elif kind == "bmm":
            t = pick(r, ["f32", "f64"])
            shared = r.random() < 0.4
            a = self.tensor(self.fresh("a"), t, ["B", "R", "K"], "in")
            b = self.tensor(self.fresh("w"), t, ["K", "C"] if shared else ["B", "K", "C"], "in")
            y = self.tensor(self.fresh("y"), t, ["B", "R", "C"], out_role)
            br = f"{b}[k, j]" if shared else f"{b}[n, k, j]"
            self.stmts.append(f"{y}[n, i, j] = sum(k in 0..K: {a}[n, i, k] * {br})")
        elif kind == "view":
            x = self.tensor(self.fresh("x"), ty, ["B", "R", "C"], "in")
            v = self.fresh("xv")
            self.tensors[v] = {"view": x, "shape": ["B * R", "C"]}
            self.order.append(v)
            y = self.tensor(self.fresh("y"), ty, ["B * R"], out_role)
            self.stmts.append(f"{y}[q] = max(c in 0..C: {v}[q, c]) + {v}[q, 0]")
        elif kind == "conv2d":
            t = pick(r, ["f32", "f64"])
            x = self.tensor(self.fresh("x"), t, ["B", "K", "R", "C"], "in", boundary="zero")
            w = self.tensor(self.fresh("w"), t, ["V", "K", "3", "3"], "in")
            y = self.tensor(self.fresh("y"), t, ["B", "V", "R", "C"], out_role)
            self.stmts.append(f"{y}[n, o, i, j] = sum(c in 0..K: sum(a in 0..3: sum(q in 0..3: {x}[n, c, i + a - 1, j + q - 1] * {w}[o, c, a, q])))")
        elif kind == "attn":
            t = "f32"
            q = self.tensor(self.fresh("q"), t, ["B", "R", "K"], "in")
            k_ = self.tensor(self.fresh("k"), t, ["B", "C", "K"], "in")
            v = self.tensor(self.fresh("v"), t, ["B", "C", "K"], "in")
            sc = self.tensor(self.fresh("sc"), t, ["B", "R", "C"], "temp")
            m = self.tensor(self.fresh("mx"), t, ["B", "R"], "temp")
            p_ = self.tensor(self.fresh("p"), t, ["B", "R", "C"], "temp")
            l = self.tensor(self.fresh("l"), t, ["B", "R"], "temp")
            y = self.tensor(self.fresh("y"), t, ["B", "R", "K"], out_role)
            self.stmts.append(f"{sc}[n, i, j] = sum(d in 0..K: {q}[n, i, d] * {k_}[n, j, d]) * 0.125")
            self.stmts.append(f"{m}[n, i] = max(j in 0..C: {sc}[n, i, j])")
            self.stmts.append(f"{p_}[n, i, j] = exp({sc}[n, i, j] - {m}[n, i])")
            self.stmts.append(f"{l}[n, i] = sum(j in 0..C: {p_}[n, i, j])")
            self.stmts.append(f"{y}[n, i, e] = sum(j in 0..C: {p_}[n, i, j] * {v}[n, j, e]) / {l}[n, i]")
        elif kind == "misc":
            t = ty
            ct = "f64" if t == "f64" else "f32"
            c = r.randrange(9)
            if c == 0:  # suffix sums
                x = self.tensor(self.fresh("x"), t, ["N"], "in")
                y = self.tensor(self.fresh("y"), t, ["N"], out_role)
                self.stmts.append(f"{y}[i] = {pick(r, ['sum', 'max'])}(k in i..N: {x}[k])")
            elif c == 1:  # sliding window
                x = self.tensor(self.fresh("x"), t, ["N + 2"], "in")
                y = self.tensor(self.fresh("y"), t, ["N"], out_role)
                self.stmts.append(f"{y}[i] = {pick(r, ['sum', 'max', 'min'])}(k in i..i + 3: {x}[k])")
            elif c == 2:  # wrap-around
                x = self.tensor(self.fresh("x"), t, ["N"], "in")
                y = self.tensor(self.fresh("y"), t, ["N"], out_role)
                self.stmts.append(f"{y}[i] = {x}[(i + 3) % N] - {x}[(i + N - 1) % N]")
            elif c == 3:  # nested full reduction
                x = self.tensor(self.fresh("x"), t, ["R", "C"], "in")
                y = self.tensor(self.fresh("y"), t, [], out_role)
                self.stmts.append(f"{y} = sum(i in 0..R: max(j in 0..C: {x}[i, j]))")
            elif c == 4:  # rank-3 transpose
                x = self.tensor(self.fresh("x"), t, ["B", "R", "C"], "in")
                y = self.tensor(self.fresh("y"), t, ["B", "C", "R"], out_role)
                self.stmts.append(f"{y}[n, j, i] = {x}[n, i, j] * 2")
            elif c == 5:  # i64 gather with a reduction
                idx = self.tensor(self.fresh("ix"), "i64", ["R", "K"], "in", init=[0, "V - 1"])
                tab = self.tensor(self.fresh("tab"), t, ["V", "C"], "in")
                y = self.tensor(self.fresh("y"), t, ["R", "C"], out_role)
                self.stmts.append(f"{y}[r, c] = sum(k in 0..K: {tab}[{idx}[r, k], c])")
            elif c == 6:  # row scan with offset range, in a group
                x = self.tensor(self.fresh("x"), t, ["R", "C"], "in")
                s_ = self.tensor(self.fresh("s"), t, ["R", "C"], "temp")
                y = self.tensor(self.fresh("y"), t, ["R", "C"], out_role)
                self.stmts.append(f"{s_}[r, c] = sum(k in 1..c + 2: {x}[r, k - 1])")
                self.stmts.append(f"{y}[r, c] = {s_}[r, c] / (1 + abs({x}[r, c]))")
            elif c == 7:  # triangular reduction
                x = self.tensor(self.fresh("x"), t, ["R", "R"], "in")
                y = self.tensor(self.fresh("y"), t, ["R"], out_role)
                self.stmts.append(f"{y}[i] = sum(k in 0..i: {x}[i, k] * {x}[k, i])")
            else:  # index arithmetic and integer casts
                y = self.tensor(self.fresh("y"), t, ["R", "C"], out_role)
                self.stmts.append(f"{y}[r, c] = {ct}((r * 7 + c * 3) % 11) - {ct}(c / 2)")
        elif kind == "scalar":
            x = self.tensor(self.fresh("x"), ty, ["N"], "in")
            y = self.tensor(self.fresh("y"), ty, [], out_role)
            op = pick(r, ["sum", "max", "min"])
            self.stmts.append(f"{y} = {op}(i in 0..N: {x}[i] * {x}[i])")

    def build(self):
        r = self.r
        self.prod_stmts = []
        self.need_min2 = False
        rank = pick(r, [1, 2, 2, 3])
        for _ in range(r.randrange(1, 4)):
            self.stmt(rank)
        used = set()
        for s in self.stmts:
            for nm in ["N", "R", "C", "B", "K", "V"]:
                if re.search(r"\b" + nm + r"\b", s) or any(
                        nm in str(self.tensors[t]["shape"]) for t in self.tensors):
                    used.add(nm)
        big = r.random() < 0.04
        sizes = {
            "N": ([1, 7, 33, 257] + ([70001] if big else []), [64]),
            "R": ([1, 3, 17, 5] + ([2] if big else []), [64]),
            "C": ([1, 9, 20, 33] + ([40000] if big else []), [64]),
            "B": ([2, 1, 3, 2] + ([1] if big else []), [4]),
            "K": ([1, 4, 5, 11] + ([3] if big else []), [16]),
            "V": ([3, 1, 8, 6] + ([5] if big else []), [64]),
        }
        out = []
        out.append(f"name: fz{self.seed}")
        out.append(f"doc: random spec {self.seed}")
        out.append("sizes:")
        for nm in ["N", "R", "C", "B", "K", "V"]:
            if nm in used:
                v, b = sizes[nm]
                out.append(f"  {nm}: {{bench: {b}, verify: {v}}}")
        if self.need_min2:
            out = [l.replace("verify: [1, 3, 17, 5", "verify: [2, 3, 17, 5").replace("verify: [1, 9, 20, 33", "verify: [2, 9, 20, 33") for l in out]
        out.append("tensors:")
        for t in self.order:
            d = self.tensors[t]
            if "view" in d:
                out.append(f"  {t}: {{view: {d['view']}, shape: [{', '.join(d['shape'])}]}}")
                continue
            parts = [f"type: {d['type']}", f"shape: [{', '.join(map(str, d['shape']))}]",
                     f"role: {d['role']}"]
            if "boundary" in d:
                parts.append(f"boundary: {d['boundary']}")
            if "init" in d:
                parts.append(f"init: [{d['init'][0]}, {d['init'][1]}]")
            elif d["role"] == "in" and self.prod_stmts:
                parts.append("init: [0.9, 1.1]")
            out.append(f"  {t}: {{{', '.join(parts)}}}")
        out.append("compute: |")
        for s in self.stmts:
            out.append("  " + s)
        hasbf = any(self.tensors[t].get("type") in ("bf16", "f16") for t in self.order)
        out.append("tolerance: {rtol: %s, atol: %s}" % (("2e-2", "2e-2") if hasbf else ("1e-3", "1e-4")))
        out.append("variants:")
        out.append("  cpu:")
        for v in ["loops", "omp_simd", "blocked_matmul", "im2col", "flash_attention"]:
            out.append(f"    - {{name: {v}, strategy: {v}}}")
        out.append("  cuda:")
        out.append("    - {name: thread_per_output, strategy: thread_per_output, block_size: 64}")
        out.append("    - {name: grid_stride, strategy: grid_stride, block_size: 64}")
        for v in ["warp_per_row", "block_per_row", "scan", "tiled_stencil", "tiled_transpose",
                  "tiled_matmul", "vectorized", "warp_reduce", "flash_attention",
                  "register_blocked_matmul"]:
            out.append(f"    - {{name: {v}, strategy: {v}}}")
        out.append("  mojo:")
        for v in ["loops", "vectorize_parallel", "blocked_matmul", "im2col"]:
            out.append(f"    - {{name: {v}, strategy: {v}}}")
        out.append("  mlir:")
        for v in ["loops", "tiled_vector", "openmp", "blocked_matmul"]:
            out.append(f"    - {{name: {v}, strategy: {v}}}")
        if not hasbf:
            out.append("  vendor_cpu:")
            out.append("    - {name: blas, strategy: blas}")
            out.append("    - {name: im2col, strategy: im2col}")
        return "\n".join(out) + "\n"


if __name__ == "__main__":
    kinds = sys.argv[2].split(",") if len(sys.argv) > 2 and sys.argv[2] else None
    for k in kinds or []:
        if k not in Gen.ALL_KINDS:
            sys.exit(f"random_spec.py: unknown kind {k!r}; kinds: {', '.join(Gen.ALL_KINDS)}")
    print(Gen(int(sys.argv[1]), kinds).build(), end="")
