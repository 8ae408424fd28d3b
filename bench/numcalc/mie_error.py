#!/usr/bin/env python3
"""Relative L2 error of a rigid-sphere surface pressure against the Mie series.

Usage:
    python3 bench/numcalc/mie_error.py --numcalc PROJECT_DIR [-k 8]
        NumCalc's element pressures PROJECT_DIR/be.out/be.1/pBoundary, with the centroids and
        areas PROJECT_DIR/centroids.csv that sphere_project.py wrote.
    python3 bench/numcalc/mie_error.py --csv OUT.csv --mesh PROJECT_DIR [-k 8]
        bem_solve's -bem_csv file (x,y,z,re,im per element); areas from PROJECT_DIR/centroids.csv
        of the same icosphere level (the centroids must agree, which checks that
        sphere_project.py reproduces `-mesh icosphere:L`).

Exact solution: unit sphere (radius 1, centre 0), incident p_inc = exp(i k z), time factor
exp(-i omega t), rigid (dp/dn = 0).  On r = a the total pressure is
    p(theta) = sum_n i^n (2n+1) [j_n(ka) - j_n'(ka) h_n(ka) / h_n'(ka)] P_n(cos theta)
             = sum_n i^(n+1) (2n+1) / ((ka)^2 h_n'(ka)) P_n(cos theta)     (Wronskian),
h_n = h_n^(1) by upward recurrence (stable for the Hankel function).  It is evaluated at each
element centroid projected onto the sphere (cos theta = z / |x|), as bem_solve does.  Error:
sqrt(sum_e A_e |u_e - p_e|^2 / sum_e A_e |p_e|^2), and max_e |u_e - p_e|.
NumCalc's project with harmonic time factor -1 (exp(+i omega t)) is conjugated first; the
factor is read from NC.inp (Main Parameters IV, 3rd entry; sphere_project.py writes 1.0).
"""
import argparse
import os
import sys

import numpy as np


def mie_rigid_surface(k, cos_theta, a=1.0, terms=None):
    x = k * a
    if terms is None:
        terms = int(x + 4.0 * x ** (1.0 / 3.0) + 30)
    # Spherical Hankel functions of the first kind h_0..h_{terms}, upward recurrence.
    h = np.zeros(terms + 2, dtype=complex)
    h[0] = -1j * np.exp(1j * x) / x
    h[1] = -np.exp(1j * x) * (x + 1j) / x ** 2
    for n in range(1, terms + 1):
        h[n + 1] = (2 * n + 1) / x * h[n] - h[n - 1]
    # h_n' = h_{n-1} - (n+1)/x h_n (n >= 1), h_0' = -h_1.
    dh = np.empty(terms + 1, dtype=complex)
    dh[0] = -h[1]
    for n in range(1, terms + 1):
        dh[n] = h[n - 1] - (n + 1) / x * h[n]
    coef = np.array([(1j) ** (n + 1) * (2 * n + 1) / (x * x * dh[n]) for n in range(terms + 1)])
    t = np.asarray(cos_theta, dtype=float)
    p_prev, p_cur = np.ones_like(t), t.copy()
    total = coef[0] * p_prev + coef[1] * p_cur
    for n in range(1, terms):
        p_next = ((2 * n + 1) * t * p_cur - n * p_prev) / (n + 1)
        total = total + coef[n + 1] * p_next
        p_prev, p_cur = p_cur, p_next
    return total


def read_centroids(project):
    data = np.loadtxt(os.path.join(project, "centroids.csv"), delimiter=",", skiprows=1, ndmin=2)
    return data[:, :3], data[:, 3]


def read_numcalc(project):
    path = os.path.join(project, "be.out", "be.1", "pBoundary")
    with open(path) as f:
        lines = f.read().split("\n")
    # version line, number of groups, then per group "index count" and count lines "id re im".
    groups = int(lines[1].split()[0])
    rows, at = [], 2
    for _ in range(groups):
        count = int(lines[at].split()[1])
        rows += [line.split() for line in lines[at + 1: at + 1 + count]]
        at += 1 + count
    ids = np.array([int(r[0]) for r in rows])
    u = np.array([float(r[1]) + 1j * float(r[2]) for r in rows])
    order = np.argsort(ids)
    if not np.array_equal(ids[order], np.arange(len(ids))):
        sys.exit(f"{path}: element ids are not 0..N-1")
    u = u[order]
    factor = 1.0
    with open(os.path.join(project, "NC.inp")) as f:
        lines = [l for l in f.read().split("\n")]
    for i, line in enumerate(lines):
        if "Main Parameters IV" in line:
            factor = float(lines[i + 1].split()[2])
    if factor == -1.0:
        u = np.conj(u)
    return u


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--numcalc", metavar="PROJECT_DIR")
    ap.add_argument("--csv", metavar="FILE")
    ap.add_argument("--mesh", metavar="PROJECT_DIR")
    ap.add_argument("-k", type=float, default=8.0)
    a = ap.parse_args()
    if bool(a.numcalc) == bool(a.csv):
        ap.error("give --numcalc DIR or --csv FILE --mesh DIR")
    project = a.numcalc or a.mesh
    if not project:
        ap.error("--csv needs --mesh DIR (areas)")
    x, area = read_centroids(project)
    if a.numcalc:
        u = read_numcalc(a.numcalc)
        what = f"NumCalc {a.numcalc}/be.out/be.1/pBoundary"
    else:
        data = np.loadtxt(a.csv, delimiter=",", skiprows=1, ndmin=2)
        if data.shape[0] != x.shape[0]:
            sys.exit(f"{a.csv}: {data.shape[0]} rows, the mesh has {x.shape[0]} elements")
        mismatch = np.max(np.linalg.norm(data[:, :3] - x, axis=1))
        if mismatch > 1e-9:
            sys.exit(f"{a.csv}: centroids differ from {project}'s by up to {mismatch:.3e}")
        u = data[:, 3] + 1j * data[:, 4]
        what = f"{a.csv} (centroids match {project} to {mismatch:.1e})"
    if u.shape[0] != x.shape[0]:
        sys.exit(f"{u.shape[0]} values for {x.shape[0]} elements")
    exact = mie_rigid_surface(a.k, x[:, 2] / np.linalg.norm(x, axis=1))
    diff = np.abs(u - exact)
    rel = np.sqrt(np.sum(area * diff ** 2) / np.sum(area * np.abs(exact) ** 2))
    print(f"{what}: N = {len(u)}, k = {a.k:g}, max |u - exact| = {diff.max():.3e}, "
          f"relative L2 = {rel:.3e}")


if __name__ == "__main__":
    main()
