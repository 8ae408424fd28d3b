#!/usr/bin/env python3
"""Plane-wave scattering by a rigid sphere, from Python: the surface pressure against the Mie
series (computed here with SciPy, independently of fmbem's own), and the far field's target
strength, plotted.

    scattering.py [--small] [OUT_DIR]        (PYTHONPATH: the fmbem package, or its venv)
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy.special import eval_legendre, spherical_jn, spherical_yn

import fmbem


def mie_surface_pressure(ka, cos_theta):
    """Total pressure on a rigid sphere of radius a in the unit plane wave exp(i k z):
    sum_n (2n+1) i^n (j_n - j_n' h_n / h_n') P_n, which the Wronskian j_n y_n' - j_n' y_n = x^-2
    turns into sum_n (2n+1) i^(n+1) P_n / ((ka)^2 h_n'(ka)); terms to ka + 4 (ka)^(1/3) + 10,
    past which they fall below 1e-15 of the sum."""
    terms = int(ka + 4 * ka ** (1 / 3) + 10)
    p = np.zeros_like(cos_theta, dtype=complex)
    for n in range(terms + 1):
        h_prime = spherical_jn(n, ka, derivative=True) + 1j * spherical_yn(n, ka, derivative=True)
        p += (2 * n + 1) * 1j ** (n + 1) * eval_legendre(n, cos_theta) / (ka**2 * h_prime)
    return p


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="icosphere:3 at k = 2 (seconds)")
    parser.add_argument("out", nargs="?", default="scattering_out")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    mesh, k = ("icosphere:3", 2.0) if args.small else ("icosphere:5", 8.0)

    run = fmbem.solve(mesh, k=k, options={"bem_farfield": 180})
    s = run.solutions[0]
    centroids, areas = run.mesh["centroids"], run.mesh["areas"]
    radius = np.linalg.norm(centroids, axis=1)  # the centroids lie just inside the unit sphere
    cos_theta = centroids[:, 2] / radius
    exact = mie_surface_pressure(k * 1.0, cos_theta)
    error = np.sqrt(np.sum(areas * abs(s.unknown - exact) ** 2) / np.sum(areas * abs(exact) ** 2))
    print(f"{mesh}, k = {k:g}: {s.iterations} iterations, relative L2 error against SciPy's Mie "
          f"series {error:.4e} (fmbem's own series: {s.error_relative_l2:.4e})")

    fig, (surface, polar) = plt.subplots(1, 2, figsize=(11, 4.5),
                                         gridspec_kw={"width_ratios": [1.4, 1]})
    theta = np.degrees(np.arccos(cos_theta))
    line = np.linspace(0, 180, 361)
    surface.plot(line, abs(mie_surface_pressure(k, np.cos(np.radians(line)))), "k-", label="Mie series")
    surface.plot(theta, abs(s.unknown), ".", ms=2, alpha=0.5, label=f"fmbem, N = {len(areas)}")
    surface.set(xlabel="polar angle from the incident direction (deg)", ylabel="|p| / |p_inc|",
                title=f"rigid sphere, ka = {k:g}")
    surface.legend()
    polar.remove()
    polar = fig.add_subplot(1, 2, 2, projection="polar")
    far = s.farfield
    angle = np.radians(far["angle_deg"])
    polar.plot(angle, far["exact_TS_dB"], "k-", label="exact")
    polar.plot(angle, far["TS_dB"], "--", label="fmbem")
    polar.set_title("target strength (dB re 1 m)")
    polar.legend(loc="upper left", bbox_to_anchor=(0.95, 1.1), fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "scattering.png"), dpi=100)
    np.savez(os.path.join(args.out, "scattering.npz"), error=error, fmbem_error=s.error_relative_l2,
             ts_difference=np.max(abs(far["TS_dB"] - far["exact_TS_dB"])))


if __name__ == "__main__":
    main()
