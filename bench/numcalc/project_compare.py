#!/usr/bin/env python3
"""One NumCalc project solved by NumCalc and by bem_solve -bem_numcalc: the files compared line for
line (ids, headers), the pressures compared, and Mesh2HRTF's own post-processing run on ours.

Usage:
    python3 bench/numcalc/project_compare.py WORK NUMCALC BEM_SOLVE [-L LEVEL] [--mesh2hrtf PY]

The project is Mesh2HRTF's "Both ears" layout (tests/system/numcalc_files.py): a rigid sphere of
radius 8.75 cm (-mesh icosphere:L's elements scaled), each ear one element (VELO 0.1 m/s: Mesh2HRTF's
value) about +y (left, NumCalc/source_1) and -y (right, source_2), an evaluation grid at 1.2 m
(icosphere:2's 162 nodes, ids from 200000), 500, 1000, 2000 and 4000 Hz.  For each source it runs
NUMCALC in the source folder (its be.out kept as be.numcalc), then BEM_SOLVE -bem_numcalc there
(OMP_NUM_THREADS=1 for both; wall times printed), and compares pBoundary, vBoundary, pEvalGrid and
vEvalGrid:
the same lines but the values (ids, header lines), and the relative L2 difference of the values
(both are discretisations of one problem: bench/numcalc/ear_refinement.py shows which is nearer the
limit). With --mesh2hrtf PY (a Python with Mesh2HRTF 1.2.4 installed) Mesh2HRTF's output2hrtf then
runs on the project holding our results (parameters.json written here) and its SOFA file is read
back with sofar.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "system"))
import numcalc_files as ncf  # noqa: E402
from sphere_meshes import icosphere_nodes  # noqa: E402


def icosphere(level, radius):
    return icosphere_nodes(level, radius)


def centroid(nodes, t):
    return tuple(sum(nodes[i][j] for i in t) / 3 for j in range(3))


def area(nodes, t):
    a, b, c = (nodes[i] for i in t)
    u = [b[j] - a[j] for j in range(3)]
    w = [c[j] - a[j] for j in range(3)]
    x = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
    return 0.5 * math.sqrt(sum(e * e for e in x))


def rel_diff(a, b):
    return math.sqrt(sum(abs(x - y) ** 2 for x, y in zip(a, b)) / sum(abs(y) ** 2 for y in b))


def strip_values(path):
    """Each line with its values blanked: what must match line for line."""
    out = []
    for line in open(path).read().split("\n"):
        w = line.split()
        out.append(" ".join(w[:1]) if len(w) in (3, 7) else line)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("work")
    ap.add_argument("numcalc")
    ap.add_argument("bem_solve")
    ap.add_argument("-L", type=int, default=3)
    ap.add_argument("--mesh2hrtf", default="")
    a = ap.parse_args()
    radius = 0.0875
    nodes, tris = icosphere(a.L, radius)
    grid = ("sphere_1.2m", *icosphere(2, 1.2))
    frequencies = [500.0, 1000.0, 2000.0, 4000.0]
    ears = []
    for axis in (1.0, -1.0):  # left ear about +y, right about -y
        e = max(range(len(tris)), key=lambda i: axis * centroid(nodes, tris[i])[1])
        ears.append(e)
    shutil.rmtree(a.work, ignore_errors=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    rows = []
    for source, e in enumerate(ears, start=1):
        nc = ncf.write_project(a.work, nodes, tris, frequencies,
                               boundary=[(e, e, "VELO", 0.1, -1, 0.0, -1)], grid=grid,
                               title=f"sphere, ear element {e}", source=source)
        folder = os.path.dirname(nc)
        t0 = time.time()
        subprocess.run([a.numcalc], cwd=folder, check=True, stdout=subprocess.DEVNULL, env=env)
        t_numcalc = time.time() - t0
        os.rename(os.path.join(folder, "be.out"), os.path.join(folder, "be.numcalc"))
        os.rename(os.path.join(folder, "NC.out"), os.path.join(folder, "NC.numcalc.out"))
        t0 = time.time()
        subprocess.run([a.bem_solve, "-bem_numcalc", nc], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env)
        t_ours = time.time() - t0
        same_lines = True
        for step in range(1, len(frequencies) + 1):
            for name in ("pBoundary", "vBoundary", "pEvalGrid", "vEvalGrid"):
                theirs = os.path.join(folder, "be.numcalc", f"be.{step}", name)
                ours = os.path.join(folder, "be.out", f"be.{step}", name)
                same_lines = same_lines and strip_values(theirs) == strip_values(ours)
                if name == "vBoundary":
                    continue
                if name == "vEvalGrid":  # the three components of every node
                    d = rel_diff(*([c for node in ncf.read_velocity(path)[1] for c in node]
                                   for path in (ours, theirs)))
                else:
                    d = rel_diff(ncf.read_result(ours)[1], ncf.read_result(theirs)[1])
                rows.append((source, frequencies[step - 1], name, d))
        print(f"source {source} (ear element {e}): NumCalc {t_numcalc:.2f} s, bem_solve "
              f"{t_ours:.2f} s (one thread each); files line for line alike but the values: "
              f"{same_lines}")
    # Both sources in one run (the project folder): one set-up per frequency for the two ears;
    # its files are the single runs' (tests/system case numcalc checks them byte for byte).
    t0 = time.time()
    subprocess.run([a.bem_solve, "-bem_numcalc", a.work], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    print(f"both sources in one bem_solve run (-bem_numcalc {a.work}): {time.time() - t0:.2f} s")
    print("\n| source | frequency Hz | file | rel. L2 difference ours vs NumCalc |")
    print("|---|---|---|---|")
    for source, f, name, d in rows:
        print(f"| {source} | {f:g} | {name} | {d:.3e} |")
    params = {
        "Mesh2HRTF_Version": "1.2.4", "speedOfSound": 343.0, "densityOfMedium": 1.204,
        "sourceType": "Both ears", "numSources": 2,
        "sourceCenter": [list(centroid(nodes, tris[e])) for e in ears],
        "sourceArea": [area(nodes, tris[e]) for e in ears],
        "reference": True, "computeHRIRs": False,
        "numFrequencies": len(frequencies), "frequencies": frequencies}
    with open(os.path.join(a.work, "parameters.json"), "w") as f:
        json.dump(params, f, indent=2)
    if a.mesh2hrtf:
        script = f"""
import mesh2hrtf, sofar, numpy
mesh2hrtf.output2hrtf({a.work!r})
s = sofar.read_sofa({os.path.join(a.work, "Output2HRTF", "HRTF_sphere_1.2m.sofa")!r})
print("output2hrtf: SOFA", s.GLOBAL_SOFAConventions, "Data", s.Data_Real.shape,
      "finite", bool(numpy.isfinite(s.Data_Real).all()))
"""
        p = subprocess.run([a.mesh2hrtf, "-c", script], capture_output=True, text=True,
                           env=dict(os.environ, MPLBACKEND="Agg"))
        print(p.stdout.strip() or p.stderr.strip()[-2000:])


if __name__ == "__main__":
    main()
