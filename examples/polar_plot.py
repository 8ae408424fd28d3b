#!/usr/bin/env python3
"""Polar plot of a bem_solve far-field CSV (-bem_farfield N -bem_farfield_csv FILE).

    polar_plot.py farfield.csv farfield.png

Plots the level column (TS_dB for plane-wave scattering, level_dB otherwise) against angle_deg
(t from +z towards +x), and the exact solution's level where the CSV has one (exact_TS_dB or
exact_level_dB). Needs a great-circle CSV (not -bem_farfield_sphere).
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, png = sys.argv[1], sys.argv[2]
    with open(source, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "angle_deg" not in rows[0]:
        sys.exit(f"{source}: not a great-circle far-field CSV (no angle_deg column)")
    level = "TS_dB" if "TS_dB" in rows[0] else "level_dB"
    angles = [math.radians(float(r["angle_deg"])) for r in rows]
    angles.append(angles[0] + 2 * math.pi)  # close the curve
    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(projection="polar")
    ax.set_theta_zero_location("N")  # t = 0: +z, the incident direction, up
    ax.set_theta_direction(-1)  # towards +x clockwise, as seen from +y
    values = [float(r[level]) for r in rows]
    ax.plot(angles, values + values[:1], label="bem_solve")
    exact = "exact_" + level
    if exact in rows[0]:
        ex = [float(r[exact]) for r in rows]
        ax.plot(angles, ex + ex[:1], "--", label="exact")
    # A margin around the levels, so that a nearly constant pattern (a monopole's) shows as a
    # circle rather than as noise magnified to fill the plot.
    levels = values + (ex if exact in rows[0] else [])
    pad = max(0.5, 0.1 * (max(levels) - min(levels)))
    ax.set_rlim(min(levels) - pad, max(levels) + pad)
    ax.set_title(f"{level} (dB) against angle from +z\n{source.split('/')[-1]}")
    ax.legend(loc="lower left", bbox_to_anchor=(0.85, 0.0))
    fig.savefig(png, dpi=100)
    print("wrote", png)


main()
