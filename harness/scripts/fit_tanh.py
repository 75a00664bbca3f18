#!/usr/bin/env python3
"""Derives the coefficients of the cpu backend's inline f32 tanh (approx_math, in
codegen/backends/common/emit_common.cpp): tanh(a) ~ a P(a^2) / Q(a^2) on [0, 9], P and Q of degree 4, Q(0) = 1.

The fit minimises the relative error: each round solves the linearised problem
a P(s) - tanh(a) Q(s) = 0 by least squares, weighted by 1 / (tanh(a) Q_previous(s)) (Loeb), and
multiplies the weights by the square root of the last error (Lawson), which moves the solution
towards the minimax one. Prints the coefficients as f32 literals and the worst relative error in
exact arithmetic. Run with the project's Python: .venv/bin/python harness/scripts/fit_tanh.py
"""
import numpy as np


def fit(p_degree=4, q_degree=4, hi=9.0, rounds=40):
    a = np.concatenate([np.geomspace(1e-6, 0.5, 3000), np.linspace(0.5, hi, 20000)])
    s = a * a
    t = np.tanh(a)
    A = np.concatenate([np.stack([a * s**i for i in range(p_degree + 1)], 1),
                        np.stack([-t * s**j for j in range(1, q_degree + 1)], 1)], 1)
    q_prev = np.ones_like(a)
    lawson = np.ones_like(a)
    for _ in range(rounds):
        w = lawson / (t * q_prev)
        sol, *_ = np.linalg.lstsq(A * w[:, None], t * w, rcond=None)
        p = sol[:p_degree + 1]
        q = np.concatenate([[1.0], sol[p_degree + 1:]])
        P = sum(p[i] * s**i for i in range(p_degree + 1))
        Q = sum(q[j] * s**j for j in range(q_degree + 1))
        err = np.abs(a * P / Q - t) / t
        q_prev = Q
        lawson = lawson * np.sqrt(err)
        lawson /= lawson.max()
    return p, q, err.max()


if __name__ == "__main__":
    p, q, worst = fit()
    f32 = lambda v: "%.9gf" % np.float32(v)
    print("P (s^0 first):", ", ".join(f32(v) for v in p))
    print("Q (s^0 first):", ", ".join(f32(v) for v in q))
    print("worst relative error in exact arithmetic: %.3g" % worst)
