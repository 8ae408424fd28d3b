#!/usr/bin/env python3
"""The ear element of bench/numcalc/project_compare.py refined: which of NumCalc and bem_solve is
nearer the limit where they differ (the vibrating element's own pressure).

Usage: python3 bench/numcalc/ear_refinement.py NUMCALC BEM_SOLVE WORK

Level L = 3, 4, 5 of the sphere of radius 8.75 cm; the ear is the level-3 element nearest +y and,
at level L, its 4^(L-3) children (the icosphere's splitting keeps them together: elements
e 4^(L-3) .. (e+1) 4^(L-3) - 1), VELO 0.1 m/s; 500 and 4000 Hz. Prints the area-weighted mean
pressure over the ear and the pressure at the grid's first node (1.2 m), ours at L = 3..5 and
NumCalc's at L = 3, 4 (L = 5 takes NumCalc minutes).
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NUMCALC, BEM_SOLVE, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "system"))
sys.path.insert(0, HERE)
import numcalc_files as ncf  # noqa: E402
import project_compare as pc  # noqa: E402

RADIUS = 0.0875
coarse_nodes, coarse_tris = pc.icosphere(3, RADIUS)
ear = max(range(len(coarse_tris)), key=lambda i: pc.centroid(coarse_nodes, coarse_tris[i])[1])
grid = ("g", *pc.icosphere(1, 1.2))
print("| L | solver | f Hz | mean pressure over the ear (Pa) | pressure at the grid's first node (Pa) |")
print("|---|---|---|---|---|")
for level in (3, 4, 5):
    nodes, tris = pc.icosphere(level, RADIUS)
    m = 4 ** (level - 3)
    children = list(range(ear * m, (ear + 1) * m))
    root = os.path.join(WORK, f"L{level}")
    shutil.rmtree(root, ignore_errors=True)
    nc = ncf.write_project(root, nodes, tris, [500.0, 4000.0], grid=grid,
                           boundary=[(children[0], children[-1], "VELO", 0.1, -1, 0.0, -1)])
    folder = os.path.dirname(nc)
    runs = [("fmbem", [BEM_SOLVE, "-bem_numcalc", nc, "-ksp_rtol", "1e-9"])]
    if level <= 4:
        runs.append(("NumCalc", [NUMCALC]))
    areas = [pc.area(nodes, tris[k]) for k in children]
    for name, cmd in runs:
        subprocess.run(cmd, cwd=folder, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=dict(os.environ, OMP_NUM_THREADS="2"))
        for step, hz in ((1, 500), (2, 4000)):
            p = ncf.read_result(os.path.join(folder, "be.out", f"be.{step}", "pBoundary"))[1]
            mean = sum(p[k] * a for k, a in zip(children, areas)) / sum(areas)
            g = ncf.read_result(os.path.join(folder, "be.out", f"be.{step}", "pEvalGrid"))[1]
            print(f"| {level} | {name} | {hz} | {mean:.5g} | {g[0]:.6g} |", flush=True)
        os.rename(os.path.join(folder, "be.out"), os.path.join(folder, "be." + name))
