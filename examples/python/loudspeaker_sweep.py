#!/usr/bin/env python3
"""A closed-box loudspeaker from Python: the lid of a 1 m cube vibrates (1 mm/s), the other faces
are rigid; a frequency sweep gives the sound pressure level 2 m in front of it and the
directivity, in SI units, plotted; the lowest frequency is checked against the monopole limit.

    loudspeaker_sweep.py [--small] [OUT_DIR]        (PYTHONPATH: the fmbem package, or its venv)
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import fmbem

HERE = os.path.dirname(os.path.abspath(__file__))
VELOCITY = 1e-3  # m/s, the lid's normal velocity (out of the box)
RHO, C = 1.204, 343.0  # bem_solve's default medium (air at 20 C)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="3 frequencies (seconds)")
    parser.add_argument("out", nargs="?", default="loudspeaker_out")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # meshes/box_groups.msh: the cube [-0.5, 0.5]^3, groups lid (z = 0.5), floor and walls.
    box = fmbem.read_mesh(os.path.join(HERE, "..", "..", "meshes", "box_groups.msh"))
    surface = fmbem.Surface(box["vertices"], box["triangles"], box["groups"], box["group_names"])
    frequencies = [5, 100, 200] if args.small else [5] + list(range(25, 301, 25))
    points = os.path.join(args.out, "on_axis.csv")
    with open(points, "w") as f:
        f.write("x,y,z\n0,0,2.5\n")  # 2 m in front of the lid

    spl, far = [], []
    for s in fmbem.solve_iter(surface, frequency=frequencies,
                              options={"bem_velocity": f"lid:{VELOCITY}", "bem_field": points,
                                       "bem_farfield": 72}):
        p = complex(s.field["radiated_re"][0], s.field["radiated_im"][0])
        spl.append(20 * np.log10(abs(p) / np.sqrt(2) / 20e-6))
        far.append(s.farfield)
        print(f"{s.frequency:6.0f} Hz: {s.iterations:3d} iterations, SPL at 2 m {spl[-1]:6.2f} dB")

    # The monopole limit: a closed body whose surface moves with volume velocity Q radiates, as
    # ka -> 0, F = -i omega rho Q / (4 pi) (u ~ F e^{ikr} / r, exp(-i omega t)); the dipole term,
    # O(ka) of it, cancels in the mean over the great circle's opposite directions, leaving
    # O((ka)^2) (a = 0.866 m, the cube's half diagonal).
    q = VELOCITY * 1.0  # the lid's area is 1 m^2
    k = 2 * np.pi * frequencies[0] / C
    mean_far = np.mean(far[0]["F_re"] + 1j * far[0]["F_im"])
    monopole = RHO * C * k * q / (4 * np.pi)
    deviation = abs(abs(mean_far) / monopole - 1)
    print(f"{frequencies[0]} Hz: mean |F| = {abs(mean_far):.5e} Pa m, monopole {monopole:.5e} "
          f"(relative difference {deviation:.2e}, (ka)^2 = {(k * 0.866) ** 2:.2e})")

    fig, (level, polar) = plt.subplots(1, 2, figsize=(11, 4.5))
    level.semilogx(frequencies, spl, "o-")
    level.set(xlabel="frequency (Hz)", ylabel="SPL (dB re 20 uPa)", title="on axis, 2 m from the lid")
    level.grid(True, which="both", alpha=0.3)
    polar.remove()
    polar = fig.add_subplot(1, 2, 2, projection="polar")
    for f, table in zip(frequencies, far):
        if f >= 100:
            polar.plot(np.radians(table["angle_deg"]), table["level_dB"], label=f"{f} Hz")
    polar.set_title("far-field level (dB), x-z plane, 0 deg = lid's axis", fontsize=9)
    polar.set_theta_zero_location("N")
    polar.legend(loc="upper left", bbox_to_anchor=(0.95, 1.1), fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "loudspeaker.png"), dpi=100)
    np.savez(os.path.join(args.out, "loudspeaker.npz"), frequencies=frequencies, spl=spl,
             monopole_deviation=deviation, ka=k * 0.866)


if __name__ == "__main__":
    main()
