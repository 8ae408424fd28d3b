#!/usr/bin/env python3
"""HRTFs of a spherical head with two ears, from Python: the mesh scaled to a head's size in
numpy, both ears solved as separate sources (one operator per frequency), the HRTFs on a
Fibonacci sphere of directions at 1.2 m as one array shaped as a SOFA file's
(measurement x receiver x frequency), and the interaural level difference plotted.

    hrtf.py [--small] [OUT_DIR]        (PYTHONPATH: the fmbem package, or its venv)
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import fmbem

HERE = os.path.dirname(os.path.abspath(__file__))
HEAD_RADIUS = 0.0875  # m


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="coarse mesh, 2 frequencies (seconds)")
    parser.add_argument("out", nargs="?", default="hrtf_out")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # The unit sphere with two ear caps (groups left_ear at +y, right_ear at -y, head), scaled.
    name = "sphere_two_ears_1.msh" if args.small else "sphere_two_ears_2.msh"
    mesh = fmbem.read_mesh(os.path.join(HERE, "..", "..", "meshes", name))
    head = fmbem.Surface(mesh["vertices"] * HEAD_RADIUS, mesh["triangles"], mesh["groups"],
                         mesh["group_names"])
    frequencies = [500, 1000] if args.small else list(range(250, 3001, 250))
    directions = 100 if args.small else 400
    run = fmbem.solve(head, frequency=frequencies, options={
        "bem_velocity": "left_ear:1e-3,right_ear:1e-3", "bem_sources": "separate",
        "bem_field_sphere": f"fibonacci:{directions}:1.2", "bem_field_reference": True})
    # Each ear's vibrating cap on the rigid sphere has an exact series: its error is reported.
    solutions = run.solutions
    for s in solutions:
        print(f"{s.frequency:5.0f} Hz, {s.source_label}: {s.iterations} iterations, surface error "
              f"{s.error_relative_l2:.2e} against the cap's series")
    # SOFA's layout (M directions, R ears, N frequencies), as sofar's Data.Real/Imag take it.
    sofa = run.hrtf()
    hrtf, points = sofa["data"], sofa["positions"]
    azimuth = np.degrees(np.arctan2(points[:, 1], points[:, 0]))
    horizontal = abs(points[:, 2]) < 0.25 * 1.2  # within about 15 degrees of the horizontal plane
    ild = 20 * np.log10(abs(hrtf[:, 0, :]) / abs(hrtf[:, 1, :]))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    order = np.argsort(azimuth[horizontal])
    for i, f in enumerate(frequencies):
        if len(frequencies) <= 4 or i % 3 == 0 or i == len(frequencies) - 1:
            ax.plot(azimuth[horizontal][order], ild[horizontal, i][order], ".-", label=f"{f} Hz")
    ax.set(xlabel="azimuth (deg; +90 = the left ear's side)", ylabel="ILD, left - right (dB)",
           title=f"spherical head, radius {HEAD_RADIUS * 100:g} cm, directions near the horizontal")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "ild.png"), dpi=100)
    np.savez(os.path.join(args.out, "hrtf.npz"), hrtf=hrtf, frequencies=sofa["frequencies"],
             positions=points, errors=[s.error_relative_l2 for s in solutions])


if __name__ == "__main__":
    main()
