#!/usr/bin/python3
"""Plots the regularised Burton-Miller measurements from bench/results/bm_regularised.md.

Usage: bench/plot_bm_regularised.py [MD [PNG]]  (default bench/results/bm_regularised.md, .png
beside it). Left: GMRES iterations against N at k = 8 (section 2's first table); right: against
k D at about 10 elements a wavelength (its second table); cbie, bm and rbm on one H200. Debian's
python3-matplotlib.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def tables(path):
    """The Markdown tables of section 2 (the bem_solve runs), as lists of dicts."""
    out, current, header, in_section = [], None, None, False
    for line in open(path):
        if line.startswith("## "):
            in_section = line.startswith("## 2.")
        if not in_section:
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header, current = cells, []
            elif not set(cells[0]) <= set("-"):
                current.append(dict(zip(header, cells)))
        elif header is not None:
            out.append(current)
            header, current = None, None
    if header is not None:
        out.append(current)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    md = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "bm_regularised.md")
    png = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(md)[0] + ".png"
    by_n, by_k = tables(md)[:2]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    style = {"cbie": ("tab:gray", "s"), "bm": ("tab:blue", "o"),
             "rbm, kappa = 0": ("tab:orange", "v"), "rbm": ("tab:red", "^")}
    for form, (colour, marker) in style.items():
        rows = [r for r in by_n if r["form"] == form]
        left.plot([int(r["N"].replace(",", "")) for r in rows], [int(r["iterations"]) for r in rows],
                  marker=marker, color=colour, label=form)
        rows = [r for r in by_k if r["form"] == form]
        right.plot([float(r["k D"]) for r in rows], [int(r["iterations"]) for r in rows],
                   marker=marker, color=colour, label=form)
    left.set_xscale("log")
    left.set_xlabel("N (icosphere:5..8)")
    left.set_title("rigid unit sphere, k = 8")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("k D (about 10 elements a wavelength)")
    right.set_title("rigid unit sphere, icosphere:5..8")
    for ax in (left, right):
        ax.set_ylabel("GMRES iterations (rtol 1e-5)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("cbie (Jacobi), bm (leaf blocks), rbm (S~ at kappa = k/2 or 0, no PC): one H200")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print("wrote", png)


if __name__ == "__main__":
    main()
