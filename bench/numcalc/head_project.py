#!/usr/bin/env python3
"""Mesh2HRTF's example head as a two-ear NumCalc project, for the HRTF benchmark.

Usage:
    python3 bench/numcalc/head_project.py PLY OUTDIR [--step 100] [--max 16000] [--grid L]
                                          [--refine R]

PLY: mesh2hrtf/Mesh2Input/Meshes/Data/example_head_max_f_16_kHz.ply of Mesh2HRTF 1.2.4 (binary
little-endian PLY from Blender: 8,718 vertices, 17,432 triangles, graded for 16 kHz; millimetres,
centred on the interaural axis, which is y: Mesh2HRTF's convention). Written in Mesh2HRTF's
layout (tests/system/numcalc_files.py), metres: each ear is the element the y axis meets (the
left ear's from +y, the right's from -y), VELO 0.1 m/s as Mesh2HRTF's "Both ears" projects
(NumCalc/source_1 and source_2); frequencies step, 2 step, ..., max Hz; an evaluation grid of
icosphere:L's nodes at 1.2 m (L = 3: 642 nodes). With --refine R every triangle is split R
times into four at its edges' midpoints (the same flat facets, h / 2^R: a refinement study at
fixed geometry); element i's children are 4^R i .. 4^R (i + 1) - 1, so each ear is its element's
children (one VELO range: the same patch and volume velocity). Prints the ears, the sizes and the
frequencies.
"""
import argparse
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "system"))
import numcalc_files as ncf  # noqa: E402
from sphere_meshes import icosphere_nodes  # noqa: E402


def read_ply(path):
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").split("\n")
    if "format binary_little_endian 1.0" not in header:
        sys.exit(f"{path}: not a binary little-endian PLY")
    counts, properties, element = {}, {}, None
    for line in header:
        w = line.split()
        if w[:1] == ["element"]:
            element = w[1]
            counts[element] = int(w[2])
            properties[element] = []
        elif w[:1] == ["property"]:
            properties[element].append(w[1:])
    if properties["vertex"][:3] != [["float", "x"], ["float", "y"], ["float", "z"]] or \
            len(properties["vertex"]) != 3 or \
            properties["face"] != [["list", "uchar", "uint", "vertex_indices"]]:
        sys.exit(f"{path}: expected float x, y, z vertices and uchar/uint faces")
    at = end
    vertices = []
    for _ in range(counts["vertex"]):
        vertices.append(struct.unpack_from("<3f", data, at))
        at += 12
    faces = []
    for _ in range(counts["face"]):
        n = data[at]
        faces.append(struct.unpack_from(f"<{n}I", data, at + 1))
        at += 1 + 4 * n
    if any(len(f) != 3 for f in faces):
        sys.exit(f"{path}: faces other than triangles")
    return vertices, faces


def axis_hit(vertices, faces, direction):
    """The triangle the ray from the origin along `direction` meets first (Moller-Trumbore)."""
    best, hit = math.inf, None
    for i, (a, b, c) in enumerate(faces):
        p0, p1, p2 = vertices[a], vertices[b], vertices[c]
        e1 = [p1[k] - p0[k] for k in range(3)]
        e2 = [p2[k] - p0[k] for k in range(3)]
        d = direction
        h = (d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0])
        det = sum(e1[k] * h[k] for k in range(3))
        if abs(det) < 1e-30:
            continue
        s = [-p0[k] for k in range(3)]
        u = sum(s[k] * h[k] for k in range(3)) / det
        q = (s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0])
        v = sum(d[k] * q[k] for k in range(3)) / det
        t = sum(e2[k] * q[k] for k in range(3)) / det
        if u >= 0 and v >= 0 and u + v <= 1 and 0 < t < best:
            best, hit = t, i
    return hit


def refine(vertices, faces):
    """Each triangle into four at its edges' midpoints, orientation kept; triangle i's children
    are 4i .. 4i + 3."""
    vertices = list(vertices)
    midpoints = {}

    def midpoint(a, b):
        key = (min(a, b), max(a, b))
        if key not in midpoints:
            midpoints[key] = len(vertices)
            vertices.append(tuple(0.5 * (vertices[a][k] + vertices[b][k]) for k in range(3)))
        return midpoints[key]
    children = []
    for a, b, c in faces:
        ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
        children += [(a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca)]
    return vertices, children


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ply")
    ap.add_argument("outdir")
    ap.add_argument("--step", type=float, default=100.0)
    ap.add_argument("--max", type=float, default=16000.0)
    ap.add_argument("--grid", type=int, default=3)
    ap.add_argument("--refine", type=int, default=0)
    a = ap.parse_args()
    vertices, faces = read_ply(a.ply)
    vertices = [tuple(0.001 * x for x in v) for v in vertices]  # mm -> m
    ears = [axis_hit(vertices, faces, (0.0, 1.0, 0.0)), axis_hit(vertices, faces, (0.0, -1.0, 0.0))]
    if None in ears:
        sys.exit("the y axis meets no element: is the head centred on its interaural axis?")
    for _ in range(a.refine):
        vertices, faces = refine(vertices, faces)
    children = 4 ** a.refine
    ear_ranges = [(children * e, children * (e + 1) - 1) for e in ears]
    frequencies = [a.step * i for i in range(1, int(round(a.max / a.step)) + 1)]
    grid = ("sphere_1.2m", *icosphere_nodes(a.grid, 1.2))
    for source, (e, (first, last)) in enumerate(zip(ears, ear_ranges), start=1):
        ncf.write_project(a.outdir, vertices, faces, frequencies, grid=grid, source=source,
                          title=f"Mesh2HRTF example head, ear element {e}",
                          boundary=[(first, last, "VELO", 0.1, -1, 0.0, -1)])
    extent = [max(v[k] for v in vertices) - min(v[k] for v in vertices) for k in range(3)]
    print(f"{a.outdir}: {len(faces)} elements, {len(vertices)} nodes, extent "
          f"{extent[0]:.3f} x {extent[1]:.3f} x {extent[2]:.3f} m; ears: elements {ear_ranges}; "
          f"{len(frequencies)} frequencies {frequencies[0]:g}..{frequencies[-1]:g} Hz; grid "
          f"{len(grid[1])} nodes at 1.2 m")


if __name__ == "__main__":
    main()
