#!/usr/bin/python3
"""Plots the Burton-Miller frequency sweep from bench/bm_sweep.sh's CSV.

Usage: bench/plot_bm_sweep.py [CSV [PNG]]   (default bench/results/bm_sweep.csv, .png beside it)
Top: relative L2 error against the Mie series vs k for cbie and bm, the zeros of j_n in the range
marked (interior Dirichlet eigenvalues of the unit sphere, where the conventional equation of the
rigid problem is not unique). Bottom: GMRES iterations. Debian's python3-matplotlib.
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def spherical_jn(n, x):
    """j_n(x) by upward recurrence from j_0, j_1 (fine for x > n here)."""
    j0, j1 = math.sin(x) / x, math.sin(x) / x**2 - math.cos(x) / x
    if n == 0:
        return j0
    for m in range(1, n):
        j0, j1 = j1, (2 * m + 1) / x * j1 - j0
    return j1


def zeros_of_jn(k_low, k_high):
    """Zeros of j_n in [k_low, k_high], n = 0.., by bisection on a fine grid (Miller's
    backward recurrence is not needed: for n < x the upward recurrence is stable)."""
    zeros = []
    for n in range(0, 12):
        step = 1e-3
        x = max(k_low, n + 0.5)
        while x < k_high:
            a, b = x, x + step
            fa, fb = spherical_jn(n, a), spherical_jn(n, b)
            if fa == 0 or fa * fb < 0:
                for _ in range(60):
                    m = 0.5 * (a + b)
                    if spherical_jn(n, a) * spherical_jn(n, m) <= 0:
                        b = m
                    else:
                        a = m
                zeros.append((0.5 * (a + b), n))
            x = b
    return sorted(zeros)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "bm_sweep.csv")
    png = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(path)[0] + ".png"
    rows = list(csv.DictReader(open(path)))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 7), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    style = {"cbie": dict(color="tab:blue", label="conventional (cbie)"),
             "bm": dict(color="tab:red", label="Burton-Miller (bm), alpha = i/k")}
    for form in ("cbie", "bm"):
        sel = [r for r in rows if r["formulation"] == form]
        if not sel:
            continue
        k = [float(r["k"]) for r in sel]
        top.semilogy(k, [float(r["rel_l2_error"]) for r in sel], marker=".", ms=3, **style[form])
        bottom.plot(k, [int(r["iterations"]) for r in sel], marker=".", ms=3, **style[form])
    k_all = [float(r["k"]) for r in rows]
    for z, n in zeros_of_jn(min(k_all), max(k_all)):
        top.axvline(z, color="0.8", lw=0.8, zorder=0)
        top.text(z, 1.02, f"j{n}", transform=top.get_xaxis_transform(), ha="center", fontsize=7,
                 color="0.4")
    top.set_ylabel("relative L2 error vs Mie")
    top.set_title(f"Rigid unit sphere, {rows[0]['mesh']}: error and iterations vs k", pad=14)
    top.legend()
    top.grid(True, which="both", alpha=0.3)
    bottom.set_xlabel("k")
    bottom.set_ylabel("GMRES iterations")
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print("wrote", png)


if __name__ == "__main__":
    main()
