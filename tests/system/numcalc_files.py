"""NumCalc (Mesh2HRTF) projects written and NumCalc's result files read, for the tests and
benchmarks of bem_solve -bem_numcalc.

The project is laid out as Mesh2HRTF's mesh2input lays it out (ObjectMeshes/Reference,
EvaluationGrids/<name>, NumCalc/source_1/NC.inp with paths relative to it) and NC.inp follows the
structure NumCalc 1.2.4 reads (Mesh2HRTF's wiki "Structure_of_NC.inp"; NC_Input.cpp): the
frequencies as Mesh2HRTF writes them (a load curve of N + 1 points, one step each), Main
Parameters I-IV, NODES/ELEMENTS, BOUNDARY ... RETU, PLANE WAVES / POINT SOURCES, CURVES,
POST PROCESS, END.

The readers follow Mesh2HRTF 1.2.4's own (mesh2hrtf/Output2HRTF/output2hrtf.py,
_output_to_hrtf_load; write_output_report.py), rule for rule, so that a file they accept is one
Mesh2HRTF's post-processing accepts.
"""
import csv
import os
import re


def write_mesh_files(folder, nodes, elements, first_node_id=0, first_element_id=0):
    """Nodes.txt ("id x y z") and Elements.txt ("id n1 n2 n3 property 0 group") in `folder`.
    elements: (corner indices into nodes, property, group). Returns the node ids."""
    os.makedirs(folder, exist_ok=True)
    ids = [first_node_id + i for i in range(len(nodes))]
    with open(os.path.join(folder, "Nodes.txt"), "w") as f:
        f.write("%d\n" % len(nodes))
        for i, p in zip(ids, nodes):
            f.write("%d %.17g %.17g %.17g\n" % (i, p[0], p[1], p[2]))
    with open(os.path.join(folder, "Elements.txt"), "w") as f:
        f.write("%d\n" % len(elements))
        for e, (corners, prop, group) in enumerate(elements):
            f.write("%d %s %d 0 %d\n" % (first_element_id + e,
                                        " ".join(str(ids[c]) for c in corners), prop, group))
    return ids


def write_project(root, nodes, triangles, frequencies, boundary=(), waves=(), curves=(),
                  grid=None, c=343.0, rho=1.204, title="fmbem test project", source=1):
    """A Mesh2HRTF project under `root`; returns the NC.inp's path.

    triangles: the object's triangles (element ids 0.., group 0). boundary: lines
    (first_id, last_id, "VELO"/"PRES"/"ADMI"/"IMPE", re, curve_re, im, curve_im). waves:
    ("plane" or "point", (x, y, z), re, im). curves: (id, [(frequency_hz, factor), ...]).
    grid: (name, nodes, triangles) of an evaluation grid (node ids from 200000, elements from
    len(triangles), group 1). source: the project's NumCalc/source_<source> folder."""
    write_mesh_files(os.path.join(root, "ObjectMeshes", "Reference"), nodes,
                     [(t, 0, 0) for t in triangles])
    node_files = ["../../ObjectMeshes/Reference/Nodes.txt"]
    element_files = ["../../ObjectMeshes/Reference/Elements.txt"]
    grid_nodes = grid_elements = 0
    if grid:
        name, g_nodes, g_tris = grid
        write_mesh_files(os.path.join(root, "EvaluationGrids", name), g_nodes,
                         [(t, 2, 1) for t in g_tris], first_node_id=200000,
                         first_element_id=len(triangles))
        node_files.append(f"../../EvaluationGrids/{name}/Nodes.txt")
        element_files.append(f"../../EvaluationGrids/{name}/Elements.txt")
        grid_nodes, grid_elements = len(g_nodes), len(g_tris)
    n = len(frequencies)
    curve_points = "".join("%f %fe+04 0.0\n" % (1e-6 * (i + 1), f / 1e4)
                           for i, f in enumerate(frequencies))
    planes = [w for w in waves if w[0] == "plane"]
    points = [w for w in waves if w[0] == "point"]
    text = f"""##-------------------------------------------
## This file was created by fmbem's tests in the format of Mesh2HRTF's mesh2input
##-------------------------------------------
Mesh2HRTF 1.2.4
##
{title}
##
## Controlparameter I
0 0 0 0 7 0
##
## Controlparameter II
1 {n} 0.000001 0.00e+00 1 0 0
##
## Load Frequency Curve
0 {n + 1}
0.000000 0.000000e+00 0.0
{curve_points}##
## 1. Main Parameters I
2 {len(triangles) + grid_elements} {len(nodes) + grid_nodes} 0 0 2 1 4 0
##
## 2. Main Parameters II
{len(planes)} {len(points)} 0 0.0000e+00 0 0 0
##
## 3. Main Parameters III
0 0 0 0
##
## 4. Main Parameters IV
{c!r} {rho!r} 1.0 0.0e+00 0.0 e+00 0.0e+00 0.0e+00
##
NODES
{chr(10).join(node_files)}
##
ELEMENTS
{chr(10).join(element_files)}
##
# SYMMETRY
# 0 0 0
# 0.0000e+00 0.0000e+00 0.0000e+00
##
BOUNDARY
"""
    for first, last, kind, re_, cre, im, cim in boundary:
        text += f"ELEM {first} TO {last} {kind} {re_!r} {cre} {im!r} {cim}\n"
    text += "RETU\n##\n"
    if planes:
        text += "PLANE WAVES\n" + "".join(
            f"{i} {d[0]!r} {d[1]!r} {d[2]!r} {a!r} -1 {b!r} -1\n"
            for i, (_, d, a, b) in enumerate(planes)) + "##\n"
    if points:
        text += "POINT SOURCES\n" + "".join(
            f"{i} {p[0]!r} {p[1]!r} {p[2]!r} {a!r} -1 {b!r} -1\n"
            for i, (_, p, a, b) in enumerate(points)) + "##\n"
    if curves:
        text += "CURVES\n%d %d\n" % (len(curves), max(len(pts) for _, pts in curves))
        for cid, pts in curves:
            text += "%d %d\n" % (cid, len(pts)) + "".join(f"{f!r} {v!r} 0.0\n" for f, v in pts)
    text += "POST PROCESS\n##\nEND\n"
    folder = os.path.join(root, "NumCalc", f"source_{source}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "NC.inp")
    with open(path, "w") as f:
        f.write(text)
    return path


def read_rows(path):
    """A be.N result file as Mesh2HRTF's _output_to_hrtf_load reads it: rows split at blanks
    (csv, delimiter ' ', skipinitialspace); the last 2-field row not starting with 'Mesh' gives
    the number of data rows; every row of 3 or more fields not starting with 'Mesh' is data, an
    id and its numbers. Returns (ids, [numbers], count)."""
    count = None
    ids, rows = [], []
    with open(path, newline="") as f:
        for row in csv.reader(f, delimiter=" ", skipinitialspace=True):
            if not row or row[0].startswith("Mesh"):
                continue
            if len(row) == 2:
                count = int(row[1])
            elif len(row) > 2:
                ids.append(int(row[0]))
                rows.append([float(v) for v in row[1:]])
    return ids, rows, count


def read_result(path):
    """pBoundary, vBoundary, pEvalGrid ("id re im" rows): (ids, values, count)."""
    ids, rows, count = read_rows(path)
    return ids, [complex(r[0], r[1]) for r in rows], count


def read_velocity(path):
    """vEvalGrid ("id vx_re vx_im vy_re vy_im vz_re vz_im" rows): (ids, [(vx, vy, vz)], count)."""
    ids, rows, count = read_rows(path)
    return ids, [tuple(complex(r[2 * a], r[2 * a + 1]) for a in range(3)) for r in rows], count


# write_output_report.py's patterns (Mesh2HRTF 1.2.4).
STEP_MARKER = ">> S T E P   N U M B E R   A N D   F R E Q U E N C Y <<"


def read_log(path):
    """NC.out as Mesh2HRTF's write_output_report parses it: per step its number, frequency,
    iterations, relative error and the four times (None where missing); and whether it ended."""
    text = open(path).read()
    steps = []
    for part in text.split(STEP_MARKER)[1:]:
        step = re.search(r"Step (\d+),", part)
        frequency = re.search(r"Frequency = (\d+(?:\.\d+)?) Hz", part)
        iterations = re.search(r"number of iterations = (\d+),", part)
        error = re.search(r"relative error = (.+)", part)
        times = [re.search(name + r"\s+: (\d+)", part) for name in (
            "Assembling the equation system", "Solving the equation system", "Post processing",
            "Total")]
        steps.append({
            "step": int(step.group(1)) if step else None,
            "frequency": float(frequency.group(1)) if frequency else None,
            "iterations": int(iterations.group(1)) if iterations else None,
            "error": float(error.group(1)) if error else None,
            "times": [int(t.group(1)) if t else None for t in times],
            "warning": "Maximum number of iterations is reached!" in part})
    return steps, "End time:" in text
