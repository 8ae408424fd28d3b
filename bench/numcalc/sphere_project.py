#!/usr/bin/env python3
"""Write a NumCalc (Mesh2HRTF) project for the rigid unit sphere in a plane wave.

Usage:
    python3 bench/numcalc/sphere_project.py OUTDIR [-L LEVEL] [-k K] [-c C] [-rho RHO]

writes OUTDIR/NC.inp, OUTDIR/Nodes.txt, OUTDIR/Elements.txt and OUTDIR/centroids.csv.
Run NumCalc in OUTDIR (`cd OUTDIR && NumCalc`); it writes OUTDIR/be.out/be.1/pBoundary.

The mesh is fmbem's `-mesh icosphere:L` (src/mesh/mesh.cpp, make_icosphere) reproduced
operation by operation: the same 12 unit icosahedron vertices, the same 20 faces, depth-first
4-way splitting with midpoints normalized(p + q) = (p + q) * (1 / sqrt(x*x + y*y + z*z)), the
same vertex numbering (corners, edge points, face-interior points) and triangle order, corner
order a, b, c, so the normals cross(b - a, c - a) point outwards.  Element i of NumCalc is
element i of bem_solve.

Problem: incident plane wave p_inc = exp(i k z) (travelling towards +z), rigid sphere (all
elements velocity 0, NumCalc's default for elements named in no BOUNDARY line), exterior.
NumCalc conventions (NC_Input.cpp, NC_EquationSystem.cpp of Mesh2HRTF 1.2.4):
  * Main Parameters IV, 3rd entry = harmonic time factor: 1.0 (Mesh2HRTF's value) means
    G = exp(+i k r) / (4 pi r), time factor exp(-i omega t) -- the same as fmbem's.
  * PLANE WAVES line "id dx dy dz re curve im curve": incident pressure
    (re + i im) * exp(i k d . x), d normalized: with exp(-i omega t) it travels towards +d.
  * k = 2 pi f / c with c from Main Parameters IV, so f = k c / (2 pi).
Solver settings as Mesh2HRTF's mesh2input writes them: ML-FMM BEM (method 4), CGS iterative
solver (0), ILU preconditioner (0), default expansion terms (0 -> 8), no symmetry; exterior
problem, for which NumCalc always uses Burton-Miller (coupling i/k).
"""
import argparse
import math
import os
import sys

PHI = (1.0 + math.sqrt(5.0)) / 2.0
ICO_VERTICES = [(-1, PHI, 0), (1, PHI, 0), (-1, -PHI, 0), (1, -PHI, 0),
                (0, -1, PHI), (0, 1, PHI), (0, -1, -PHI), (0, 1, -PHI),
                (PHI, 0, -1), (PHI, 0, 1), (-PHI, 0, -1), (-PHI, 0, 1)]
ICO_FACES = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11),
             (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6), (7, 1, 8),
             (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9),
             (4, 9, 5), (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]


def normalized(p):
    x, y, z = p
    s = 1.0 / math.sqrt(x * x + y * y + z * z)
    return (x * s, y * s, z * s)


def add(p, q):
    return (p[0] + q[0], p[1] + q[1], p[2] + q[2])


def make_icosphere(level):
    """Vertices (list of xyz) and triangles (list of 3 vertex ids), as fmbem's make_icosphere."""
    base = [normalized((float(x), float(y), float(z))) for x, y, z in ICO_VERTICES]
    edges = sorted({(min(f[c], f[(c + 1) % 3]), max(f[c], f[(c + 1) % 3]))
                    for f in ICO_FACES for c in range(3)})
    edge_index = {e: i for i, e in enumerate(edges)}
    n = 1 << level

    def vertex_id(face, w):
        f = ICO_FACES[face]
        zeros = (w[0] == 0) + (w[1] == 0) + (w[2] == 0)
        if zeros == 2:
            return f[0] if w[0] == n else (f[1] if w[1] == n else f[2])
        if zeros == 1:
            missing = 0 if w[0] == 0 else (1 if w[1] == 0 else 2)
            a, b = (missing + 1) % 3, (missing + 2) % 3
            lower, higher = min(f[a], f[b]), max(f[a], f[b])
            along = w[a] if f[a] == higher else w[b]
            return 12 + edge_index[(lower, higher)] * (n - 1) + (along - 1)
        i, j = w[0], w[1]
        return (12 + 30 * (n - 1) + face * ((n - 1) * (n - 2) // 2) + (i - 1) * (n - 1)
                - (i - 1) * i // 2 + (j - 1))

    vertices = [None] * (10 * 4 ** level + 2)
    triangles = []

    def mid(a, b):
        return (a[0] + b[0]) // 2, (a[1] + b[1]) // 2, (a[2] + b[2]) // 2

    def descend(face, depth, p, w):
        if depth == 0:
            ids = [vertex_id(face, w[c]) for c in range(3)]
            for c in range(3):
                vertices[ids[c]] = p[c]
            triangles.append(ids)
            return
        a, b, c = p
        ab, bc, ca = normalized(add(a, b)), normalized(add(b, c)), normalized(add(c, a))
        wab, wbc, wca = mid(w[0], w[1]), mid(w[1], w[2]), mid(w[2], w[0])
        descend(face, depth - 1, (a, ab, ca), (w[0], wab, wca))
        descend(face, depth - 1, (b, bc, ab), (w[1], wbc, wab))
        descend(face, depth - 1, (c, ca, bc), (w[2], wca, wbc))
        descend(face, depth - 1, (ab, bc, ca), (wab, wbc, wca))

    for face, f in enumerate(ICO_FACES):
        descend(face, level, tuple(base[v] for v in f), ((n, 0, 0), (0, n, 0), (0, 0, n)))
    assert all(v is not None for v in vertices)
    return vertices, triangles


def write_project(outdir, level, k, c, rho):
    vertices, triangles = make_icosphere(level)
    os.makedirs(outdir, exist_ok=True)
    # Signed volume: positive when the normals point outwards.
    volume = 0.0
    for t in triangles:
        a, b, cc = (vertices[i] for i in t)
        volume += (a[0] * (b[1] * cc[2] - b[2] * cc[1]) - a[1] * (b[0] * cc[2] - b[2] * cc[0])
                   + a[2] * (b[0] * cc[1] - b[1] * cc[0])) / 6.0
    if volume <= 0.0:
        sys.exit("icosphere normals point inwards")
    with open(os.path.join(outdir, "Nodes.txt"), "w") as f:
        f.write("%d\n" % len(vertices))
        for i, p in enumerate(vertices):
            f.write("%d %.17g %.17g %.17g\n" % (i, p[0], p[1], p[2]))
    # Element line: id n1 n2 n3 property(0 = boundary element) 0 group(0).
    with open(os.path.join(outdir, "Elements.txt"), "w") as f:
        f.write("%d\n" % len(triangles))
        for i, t in enumerate(triangles):
            f.write("%d %d %d %d 0 0 0\n" % (i, t[0], t[1], t[2]))
    with open(os.path.join(outdir, "centroids.csv"), "w") as f:
        f.write("x,y,z,area\n")
        for t in triangles:
            a, b, cc = (vertices[i] for i in t)
            e1 = [b[j] - a[j] for j in range(3)]
            e2 = [cc[j] - a[j] for j in range(3)]
            cr = (e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                  e1[0] * e2[1] - e1[1] * e2[0])
            area = 0.5 * math.sqrt(cr[0] ** 2 + cr[1] ** 2 + cr[2] ** 2)
            f.write("%.17g,%.17g,%.17g,%.17g\n" % (tuple((a[j] + b[j] + cc[j]) / 3.0
                                                         for j in range(3)) + (area,)))
    freq = k * c / (2.0 * math.pi)
    nc = f"""##-------------------------------------------
## rigid unit sphere, icosphere level {level}, plane wave exp(i k z), k = {k!r}
## written by fmbem bench/numcalc/sphere_project.py in the format of Mesh2HRTF's mesh2input
##-------------------------------------------
Mesh2HRTF 1.2.4
##
rigid sphere icosphere {level} k {k!r}
##
## Controlparameter I
0 0 0 0 7 0
##
## Controlparameter II
1 1 0.000001 0.00e+00 1 0 0
##
## Load Frequency Curve
0 2
0.000000 0.000000e+00 0.0
0.000001 {freq:.17g} 0.0
##
## 1. Main Parameters I
1 {len(triangles)} {len(vertices)} 0 0 2 1 4 0
##
## 2. Main Parameters II
1 0 0 0.0000e+00 0 0 0
##
## 3. Main Parameters III
0 0 0 0
##
## 4. Main Parameters IV
{c!r} {rho!r} 1.0 0.0e+00 0.0e+00 0.0e+00 0.0e+00
##
NODES
Nodes.txt
##
ELEMENTS
Elements.txt
##
BOUNDARY
RETU
##
PLANE WAVES
0 0.0 0.0 1.0 1.0 -1 0.0 -1
##
# CURVES
##
POST PROCESS
##
END
"""
    with open(os.path.join(outdir, "NC.inp"), "w") as f:
        f.write(nc)
    return len(triangles), len(vertices), freq


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("-L", type=int, default=5, help="icosphere level (default 5: 20,480 elements)")
    ap.add_argument("-k", type=float, default=8.0, help="wavenumber (default 8)")
    ap.add_argument("-c", type=float, default=343.0, help="speed of sound for NC.inp (default 343)")
    ap.add_argument("-rho", type=float, default=1.204, help="density for NC.inp (default 1.204)")
    a = ap.parse_args()
    ne, nn, f = write_project(a.outdir, a.L, a.k, a.c, a.rho)
    print(f"{a.outdir}: {ne} elements, {nn} nodes, k = {a.k}, c = {a.c}, f = {f:.17g} Hz")


if __name__ == "__main__":
    main()
