#!/usr/bin/env python3
"""Backscatter target strength of a sweep against the Mie series.

    plot_ts.py OUT_DIR

Reads OUT_DIR/sweep.csv (bem_solve -bem_sweep_csv: one row per k) and the far-field CSV of each
k (OUT_DIR/farfield_k0001.csv, ...), takes the backscatter direction (angle 180: towards -z,
back to the source of the plane wave along +z), writes OUT_DIR/backscatter.csv (k, TS_dB,
exact_TS_dB) and plots both against k in OUT_DIR/backscatter_ts.png.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    sweep = read(os.path.join(out, "sweep.csv"))
    rows = []
    for i, point in enumerate(sweep):
        # A single k writes farfield.csv itself; a sweep numbers the files (README, Sweeps).
        name = "farfield.csv" if len(sweep) == 1 else "farfield_k%04d.csv" % (i + 1)
        back = [r for r in read(os.path.join(out, name)) if float(r["angle_deg"]) == 180.0]
        if not back:
            sys.exit(f"{name}: no 180-degree direction (use an even -bem_farfield N)")
        rows.append((float(point["k"]), float(back[0]["TS_dB"]), float(back[0]["exact_TS_dB"])))
    with open(os.path.join(out, "backscatter.csv"), "w") as f:
        f.write("k,TS_dB,exact_TS_dB\n")
        for k, ts, exact in rows:
            f.write("%.17g,%.17g,%.17g\n" % (k, ts, exact))
    fig, ax = plt.subplots(figsize=(7, 4))
    ks = [r[0] for r in rows]
    ax.plot(ks, [r[2] for r in rows], "-", label="Mie series (at the solved k)")
    ax.plot(ks, [r[1] for r in rows], "o", label="bem_solve")
    ax.set_xlabel("k (radius 1)")
    ax.set_ylabel("backscatter TS (dB re 1)")
    ax.set_title("Rigid sphere: target strength against the Mie series")
    ax.grid(True)
    ax.legend()
    fig.tight_layout()
    png = os.path.join(out, "backscatter_ts.png")
    fig.savefig(png, dpi=100)
    print("wrote", os.path.join(out, "backscatter.csv"), "and", png)


main()
