#!/usr/bin/env python3
"""System tests: run the real bem_solve binary and check what it prints.

    bem_cases.py BEM_SOLVE WORK_DIR CASE [VTK_CELLS]

VTK_CELLS (case pvtu): tests/system/vtk_cells, which prints a .vtu's or .pvtu's cells.

Each case asserts against exact solutions (Mie series, Laplace series,
monopole) with bounds explained next to them. A case is a function case_NAME;
the table CASES at the end names them (tests/system/CMakeLists.txt lists the
names ctest runs).
"""
import cmath
import json
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sphere_meshes import icosphere_nodes, octasphere_nodes, refine  # noqa: E402

BEM, WORK, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
VTK_CELLS = sys.argv[4] if len(sys.argv) > 4 else None
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.makedirs(WORK, exist_ok=True)
# A temporary folder of each case's own: Open MPI's singleton start-up races on its shared
# session folder (/tmp/ompi.HOST.UID) when cases run in parallel (ctest -j), and the mesh
# reader's private copies land here too.
os.environ["TMPDIR"] = os.path.join(WORK, "tmp")
os.makedirs(os.environ["TMPDIR"], exist_ok=True)


def run(args, expect_ok=True, mpi=0):
    cmd = [BEM] + args
    if mpi:
        cmd = ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", str(mpi)] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def summary(args, **kw):
    out = run(args, **kw).stdout
    m = re.search(r"N = (\d+) elements", out)
    its = re.search(r"solver\s+(\d+) iterations, (\S+)", out)
    err = re.search(r"max \|\w+ - exact\| = (\S+), relative L2 = (\S+)", out)
    assert m and its, out
    assert its.group(2).startswith("CONVERGED"), out
    r = {"n": int(m.group(1)), "its": int(its.group(1)), "out": out}
    if err:
        r["max"], r["l2"] = float(err.group(1)), float(err.group(2))
    return r


def source_blocks(out):
    """Each source's block of a run with several sources: its number, label, iterations and (where
    an exact solution exists) its max and relative L2 errors, in the order solved."""
    blocks = []
    for m in re.finditer(r"^  source +(\d+) of (\d+): (.*)$", out, re.M):
        rest = out[m.end():]
        nxt = re.search(r"^  source +\d+ of \d+: |^fmbem bem_solve summary", rest, re.M)
        block = rest[:nxt.start()] if nxt else rest
        its = re.search(r"solver\s+(\d+) iterations, (\S+)", block)
        err = re.search(r"max \|\w+ - exact\| = (\S+), relative L2 = (\S+)", block)
        b = {"source": int(m.group(1)), "of": int(m.group(2)), "label": m.group(3),
             "its": int(its.group(1)), "reason": its.group(2), "block": block}
        if err:
            b["max"], b["l2"] = float(err.group(1)), float(err.group(2))
        blocks.append(b)
    return blocks


def sphere_points_csv(path, n, radius):
    """Writes n nearly uniform points (a Fibonacci sphere) of the sphere of `radius` about the
    origin to a CSV file of x,y,z lines; returns its path."""
    with open(path, "w") as f:
        for i in range(n):
            z = -1 + (2 * i + 1) / n
            rho = (1 - z * z) ** 0.5
            a = i * 2.399963
            f.write(f"{radius * rho * math.cos(a)},{radius * rho * math.sin(a)},{radius * z}\n")
    return path


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)
    print("ok:", msg)


def refinement(args, levels, min_ratio, label):
    """Errors on icosphere levels must fall by min_ratio per level.

    Piecewise-constant collocation at centroids on flat triangles converges
    as h^2 at the collocation points (ratio 4 per level); min_ratio leaves
    room for the pre-asymptotic range at these coarse levels."""
    res = [summary(["-mesh", f"icosphere:{L}"] + args) for L in levels]
    for a, b in zip(res, res[1:]):
        check(a["l2"] / b["l2"] > min_ratio,
              f"{label}: L2 error {a['l2']:.3e} -> {b['l2']:.3e} falls by > {min_ratio}")
    return res


def read_csv(path):
    rows = [l.split(",") for l in open(path).read().split("\n")[1:] if l]
    return [complex(float(r[3]), float(r[4])) for r in rows]


def read_csv_table(path):
    """A CSV with a header line as a list of dicts of floats."""
    lines = open(path).read().strip().split("\n")
    names = lines[0].split(",")
    return [dict(zip(names, map(float, l.split(",")))) for l in lines[1:]]


def rel_diff(a, b):
    num = sum(abs(x - y) ** 2 for x, y in zip(a, b)) ** 0.5
    return num / sum(abs(y) ** 2 for y in b) ** 0.5


def write_msh22(path, nodes, tris, physical=None):
    """Gmsh 2.2 ASCII; every triangle in physical surface 1, named `physical` where given."""
    with open(path, "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        if physical:
            f.write('$PhysicalNames\n1\n2 1 "%s"\n$EndPhysicalNames\n' % physical)
        f.write("$Nodes\n%d\n" % len(nodes))
        for i, p in enumerate(nodes):
            f.write("%d %.17g %.17g %.17g\n" % (i + 1, *p))
        f.write("$EndNodes\n$Elements\n%d\n" % len(tris))
        for i, t in enumerate(tris):
            f.write("%d 2 2 1 1 %d %d %d\n" % (i + 1, t[0] + 1, t[1] + 1, t[2] + 1))
        f.write("$EndElements\n")


def read_msh22(path):
    lines = open(path).read().split("\n")
    i = lines.index("$Nodes")
    n = int(lines[i + 1])
    ids, nodes = {}, []
    for l in lines[i + 2:i + 2 + n]:
        v = l.split()
        ids[int(v[0])] = len(nodes)
        nodes.append(tuple(map(float, v[1:4])))
    j = lines.index("$Elements")
    tris = []
    for l in lines[j + 2:j + 2 + int(lines[j + 1])]:
        v = list(map(int, l.split()))
        if v[1] == 2:
            tris.append(tuple(ids[x] for x in v[3 + v[2]:]))
    return nodes, tris


def pressure_diff(p, reference):
    """The relative L2 difference of two surface pressures."""
    return (sum(abs(x - y) ** 2 for x, y in zip(p, reference)) /
            sum(abs(y) ** 2 for y in reference)) ** 0.5


def cube_meshes(levels):
    """cube0.msh (gmsh, N = 540) and its nested uniform refinements cube1.msh .. (4x each)."""
    geo = os.path.join(WORK, "cube_coarse.geo")
    open(geo, "w").write('SetFactory("OpenCASCADE");\nBox(1) = {-0.5, -0.5, -0.5, 1, 1, 1};\n'
                         "Mesh.MeshSizeMax = 0.3;\n")
    coarse = os.path.join(WORK, "cube0.msh")
    subprocess.run(["gmsh", "-2", geo, "-format", "msh22", "-o", coarse, "-v", "0"], check=True)
    nodes, tris = read_msh22(coarse)
    meshes = [coarse]
    for level in range(1, levels + 1):
        nodes, tris = refine(nodes, tris)
        meshes.append(os.path.join(WORK, f"cube{level}.msh"))
        write_msh22(meshes[-1], nodes, tris)
    return meshes


def expect_error(args, needle):
    p = run(args, expect_ok=False)
    lines = [l for l in p.stderr.strip().split("\n") if l]
    check(p.returncode != 0 and any(needle in l for l in lines) and "Segmentation" not in p.stderr,
          f"{' '.join(args)} -> non-zero exit and '{needle}' ({lines[-1] if lines else ''})")


def be(nc, step, name):
    """NumCalc's result file `name` of frequency step `step` (1-based) of the project nc."""
    return os.path.join(os.path.dirname(nc), "be.out", f"be.{step}", name)


def csv_column(path, re_name, im_name):
    return [complex(r[re_name], r[im_name]) for r in read_csv_table(path)]


def scaled_diff(values, reference, scale):
    """rel_diff of values against scale times reference."""
    return rel_diff(values, [scale * v for v in reference])


def mpi_tree():
    """Every rank builds the octree of all N elements and evaluates
    only its own rows, so the near-field point pairs summed over ranks equal
    the one-rank count exactly, and each row's sums run in the same order on
    any number of ranks: the solutions differ only by the rounding of the
    Krylov solver's parallel reductions (as in the mpi case). Before, each
    rank split cells on its own rows alone, so a leaf took in up to P times as
    many sources and the summed pairs grew with P (here x6.3 at P = 2, x9.3
    at P = 4) while the answer changed (13 iterations became 14 and 15)."""
    base = ["-mesh", "icosphere:4", "-k", "4", "-fmm_p", "6", "-fmm_max_leaf", "40",
            "-ksp_rtol", "1e-10", "-bem_formulation", "cbie"]
    runs = {}
    for ranks in (1, 2, 3, 4):
        csv = os.path.join(WORK, f"tree{ranks}.csv")
        r = summary(base + ["-bem_csv", csv], mpi=ranks)
        m = re.search(r"(\d+) near-field point pairs \(all ranks\)", r["out"])
        check(m is not None, f"{ranks} rank(s): the summary gives the near pairs of all ranks")
        runs[ranks] = (int(m.group(1)), r["its"], read_csv(csv))
    pairs1, its1, solution1 = runs[1]
    for ranks in (2, 3, 4):
        pairs, its, solution = runs[ranks]
        check(pairs == pairs1,
              f"{ranks} ranks: {pairs} near-field point pairs, as 1 rank ({pairs1})")
        check(its == its1, f"{ranks} ranks: {its} iterations, as 1 rank")
        d = rel_diff(solution, solution1)
        check(d < 1e-8, f"{ranks} ranks give the 1-rank solution (rel. diff {d:.1e})")


def case_rigid_k8():
    # The issue's floor for plain dense collocation (3-point rule, no near
    # care) of the conventional equation: 9.9e-2 (320), 2.5e-2 (1,280), given to two digits.
    res = refinement(["-k", "8", "-bem_formulation", "cbie"], [2, 3], 3.5, "rigid sphere k=8")
    check(res[0]["l2"] < 9.95e-2, f"L=2 L2 error {res[0]['l2']:.3e} within the 9.9e-2 floor")
    check(res[1]["l2"] < 2.55e-2, f"L=3 L2 error {res[1]['l2']:.3e} within the 2.5e-2 floor")
    check("Mie series" in res[0]["out"], "the Mie series is the reference")


def case_rigid_k1():
    refinement(["-k", "1"], [2, 3], 3.5, "rigid sphere k=1")


def case_soft_k8():
    refinement(["-k", "8", "-bem_bc", "dirichlet"], [2, 3], 3.5, "soft sphere k=8")


def case_laplace():
    # The first-kind (Dirichlet) equation is still pre-asymptotic at these
    # levels (measured ratio 2.8): it gets the looser bound.
    for bc, ratio in (("neumann", 3.5), ("dirichlet", 2.5)):
        refinement(["-k", "0", "-bem_bc", bc, "-bem_incident", "pointsource",
                    "-bem_source", "0,0.5,2"], [2, 3], ratio, f"Laplace sphere {bc}, point source")
    r = summary(["-mesh", "icosphere:2", "-kernel", "laplace", "-bem_incident", "pointsource",
                 "-bem_source", "0,0,3"])
    check("Laplace series" in r["out"], "-kernel laplace selects the Laplace reference")


def case_point_source_k4():
    refinement(["-k", "4", "-bem_incident", "pointsource", "-bem_source", "1.5,0,0.5"], [2, 3], 3.5,
               "rigid sphere k=4, point source")


def case_burton_miller():
    # The eigenfrequency guarantee. j_3 has a zero at k = 6.98793: an interior Dirichlet
    # eigenvalue of the unit
    # sphere, where the conventional equation of the rigid and the soft problem loses
    # uniqueness. On icosphere:3 (1,280 elements) the conventional error there is twice that at
    # the neighbouring k (measured 4.05e-2 against 1.9e-2 to 2.1e-2); Burton-Miller's stays
    # within 1.5 times its neighbours' median (the issue's criterion; measured 1.00).
    import statistics
    ico3 = ["-mesh", "icosphere:3"]
    zero = 6.98793
    around = (6.8, 6.9, 7.1, 7.2)
    # The same for radiation of an off-centre monopole (Neumann and Dirichlet data), whose
    # conventional equations are the same operators.
    problems = [("rigid", ["-bem_bc", "neumann"]), ("soft", ["-bem_bc", "dirichlet"]),
                ("radiation, Neumann data", ["-bem_problem", "radiation", "-bem_bc", "neumann",
                                             "-bem_source", "0.4,0.3,-0.3"]),
                ("radiation, Dirichlet data", ["-bem_problem", "radiation", "-bem_bc",
                                               "dirichlet", "-bem_source", "0.4,0.3,-0.3"])]
    for name, args in problems:
        for form in ("cbie", "bm"):
            at_zero = summary(ico3 + args + ["-k", str(zero), "-bem_formulation", form])
            near = statistics.median(
                summary(ico3 + args + ["-k", str(k), "-bem_formulation", form])["l2"]
                for k in around)
            ratio = at_zero["l2"] / near
            if form == "bm":
                check(ratio < 1.5, f"{name} bm at the zero of j_3: L2 error {at_zero['l2']:.3e}, "
                      f"{ratio:.2f} times the neighbours' median {near:.3e} (< 1.5)")
            else:
                # The spike this formulation exists to remove (the test would see it).
                check(ratio > 1.5, f"{name} cbie at the zero of j_3: L2 error "
                      f"{at_zero['l2']:.3e}, {ratio:.2f} times the neighbours' median {near:.3e} "
                      "(> 1.5: the spike)")
    # The summary names the formulation and alpha (default i/k); rbm is the default for k > 0
    # (its regulariser kappa = k/2), bm where a preconditioner is asked for, cbie for Laplace and
    # for a sweep that includes k = 0 (README, Formulation).
    r = summary(["-mesh", "icosphere:2", "-k", "8"])
    check("regularised Burton-Miller (rbm), beta = 0+1i with S of exp(-kappa r)/(4 pi r), "
          "kappa = 4 where u is unknown, alpha = 0+0.125i" in r["out"],
          "rbm is the default for k > 0, kappa = k/2, alpha i/k")
    for pc in (["-pc_type", "ilu"], ["-bem_pc", "leaf_block"], ["-bem_near_matrix", "on"]):
        r = summary(["-mesh", "icosphere:2", "-k", "8"] + pc)
        check("Burton-Miller (bm), alpha = 0+0.125i" in r["out"],
              f"{' '.join(pc)}: bm, the formulation with a preconditioner")
    r = summary(["-mesh", "icosphere:2", "-k", "8", "-pc_type", "none"])
    check("(rbm)" in r["out"], "-pc_type none keeps rbm")
    for k in ("0", "0,2"):
        out = run(["-mesh", "icosphere:2", "-k", k]).stdout
        check("conventional equation (cbie)" in out and "Burton-Miller" not in out,
              f"-k {k}: the conventional equation")
    r = summary(["-mesh", "icosphere:2", "-k", "8", "-bem_formulation", "bm",
                 "-bem_bm_alpha", "0.1-0.2i"])
    check("alpha = 0.1-0.2i" in r["out"], "-bem_bm_alpha sets alpha")
    # Rows split over ranks: the target normals and the combined correction follow the rows.
    base = ["-mesh", "icosphere:2", "-k", "7", "-bem_formulation", "bm", "-ksp_rtol", "1e-10"]
    one, three = os.path.join(WORK, "bm1.csv"), os.path.join(WORK, "bm3.csv")
    summary(base + ["-bem_csv", one])
    summary(base + ["-bem_csv", three], mpi=3)
    d = rel_diff(read_csv(three), read_csv(one))
    check(d < 1e-8, f"bm: mpiexec -n 3 gives the -n 1 solution (rel. diff {d:.1e})")
    # Refinement at k = 8, rigid and soft, from icosphere:2 to 3 (icosphere:3 to 5 for the rigid
    # sphere in burton_miller_refinement).
    refinement(["-k", "8", "-bem_formulation", "bm"], [2, 3], 3.0, "rigid sphere k=8, bm")
    refinement(["-k", "8", "-bem_formulation", "bm", "-bem_bc", "dirichlet"], [2, 3], 3.0,
               "soft sphere k=8, bm")


def case_burton_miller_gpu():
    # Burton-Miller's near-field entries on the GPU (-fmm_device gpu: FMM, correction entries,
    # SpMV and leaf-block PC there) against the CPU path, with the quadratic read (bm's default)
    # and the constant one. The operators agree to rounding (the entries to 1e-11 of their
    # rows, gpu_burton_miller_test; the FMMs to ~1e-12), so at rtol 1e-8 the two solutions,
    # each with a true residual below 1e-8, differ by at most 2 kappa(A) 1e-8 (kappa of a few,
    # as in leaf_block): require 1e-7, and the error against Mie equal to 1e-5 of itself.
    # Skipped where no GPU exists.
    base = ["-mesh", "icosphere:3", "-k", "8", "-bem_formulation", "bm", "-fmm_p", "12",
            "-ksp_rtol", "1e-8"]
    probe = run(base + ["-fmm_device", "gpu", "-ksp_max_it", "1"], expect_ok=False)
    if probe.returncode != 0 and "-fmm_device gpu" in probe.stderr:
        print("skipped: no GPU (" + probe.stderr.strip() + ")")
        sys.exit(0)
    for density in ("quadratic", "constant"):
        runs = {}
        for device in ("cpu", "gpu"):
            out = os.path.join(WORK, f"bm_{density}_{device}.csv")
            runs[device] = (summary(base + ["-fmm_device", device, "-bem_double_density", density,
                                            "-bem_csv", out]), read_csv(out))
        (cpu, cpu_x), (gpu, gpu_x) = runs["cpu"], runs["gpu"]
        d = rel_diff(gpu_x, cpu_x)
        check(d < 1e-7, f"bm, {density} read: the GPU path's solution is the CPU's (rel. diff "
              f"{d:.1e} < 1e-7; {gpu['its']} and {cpu['its']} iterations)")
        check(abs(gpu["l2"] - cpu["l2"]) < 1e-5 * cpu["l2"],
              f"bm, {density} read: L2 error against Mie {gpu['l2']:.6e} on the GPU path, "
              f"{cpu['l2']:.6e} on the CPU path")
    # rbm: both outputs of the layers and the regulariser's FMM on the GPU, the same trees (leaf
    # size given: the regulariser's is otherwise the device's measured one). The same argument:
    # 1e-7 (measured on the H200, 2026-12-02: 2.8e-15 on icosphere:5 at rtol 1e-10).
    runs = {}
    for device in ("cpu", "gpu"):
        out = os.path.join(WORK, f"rbm_{device}.csv")
        runs[device] = (summary(base[:5] + ["rbm"] + base[6:] +
                                ["-fmm_max_leaf", "60", "-fmm_device", device, "-bem_csv", out]),
                        read_csv(out))
    d = rel_diff(runs["gpu"][1], runs["cpu"][1])
    check(d < 1e-7 and runs["gpu"][0]["its"] == runs["cpu"][0]["its"],
          f"rbm: the GPU path's solution is the CPU's (rel. diff {d:.1e} < 1e-7; "
          f"{runs['gpu'][0]['its']} iterations)")


def case_burton_miller_refinement():
    # Burton-Miller's refinement criterion: with bm at k = 8 the error falls by more than 3 a
    # level from
    # icosphere:3 to 5 and stays within 1.5 times the conventional equation's on the same mesh.
    # bm reads the double density as a quadratic fitted to the neighbours, with the 6-point rule
    # (its defaults; the constant read's hypersingular operator is inconsistent: measured 2.2 from
    # icosphere:4 to 5, 2.45 times cbie there). Measured 2026-11-24: bm 1.738e-2, 4.206e-3,
    # 1.021e-3 (falls 4.1 and 4.1), cbie 2.545e-2, 6.510e-3, 1.639e-3 (bm / cbie 0.68 to 0.62).
    cbie = refinement(["-k", "8", "-bem_formulation", "cbie"], [3, 4, 5], 3.0,
                      "rigid sphere k=8, cbie")
    bm = refinement(["-k", "8", "-bem_formulation", "bm"], [3, 4, 5], 3.0, "rigid sphere k=8, bm")
    check("read as a quadratic" in bm[0]["out"] and "6-point" in bm[0]["out"],
          "bm reads the double density as a quadratic, with the 6-point rule")
    for L, c, b in zip([3, 4, 5], cbie, bm):
        check(b["l2"] < 1.5 * c["l2"], f"icosphere:{L}: bm's L2 error {b['l2']:.3e} within 1.5 "
              f"times cbie's {c['l2']:.3e} ({b['l2'] / c['l2']:.2f})")


def case_burton_miller_single_density():
    # Burton-Miller on the single density: bm applies D' to the single density in the soft and radiation
    # problems, and D' on flat elements is O(h) off (the mean curvature sits on the edges); with
    # the curvature correction (-bem_curvature_correction, default) it falls like h^1.5..h^2
    # (docs/burton-miller.md). Measured 2026-11-24, k = 4, icosphere:3..5: bm soft 9.97e-3,
    # 2.55e-3, 6.64e-4 (3.9, 3.8 a level; cbie 1.20e-2, 3.66e-3, 1.43e-3), radiation with
    # Neumann data 7.47e-4, 1.80e-4, 4.61e-5 (4.1, 3.9; cbie 2.95e-3, 7.45e-4, 1.88e-4), with
    # Dirichlet data 2.17e-3, 7.85e-4, 2.81e-4 (2.8, 2.8; cbie 3.14e-3, 9.15e-4, 4.99e-4, which
    # falls 3.4 and 1.8, 2.8 from icosphere:4 with -fmm_eps 1e-7 -ksp_rtol 1e-8: the problem's
    # own rate, not the curvature estimate's; with the sphere's exact curvature bm gives
    # 4.42e-3, 1.55e-3, 5.43e-4, again 2.85 a level). Without the correction bm
    # fell 1.9 to 2.0 a level (5.34e-3, 6.07e-3, 6.08e-3 on icosphere:5). Bounds: rates 3.0
    # (2.5 for the Dirichlet data) and bm within 1.5 times cbie where cbie is run (icosphere:3
    # and 4; icosphere:5 only for bm, to keep the case near two minutes on two cores).
    radiation = ["-bem_problem", "radiation", "-bem_source", "0.2,0.1,-0.1"]
    cases = [("soft sphere", ["-bem_bc", "dirichlet"], 3.0),
             ("radiation, Neumann data", radiation + ["-bem_bc", "neumann"], 3.0),
             ("radiation, Dirichlet data", radiation + ["-bem_bc", "dirichlet"], 2.5)]
    for label, args, rate in cases:
        base = ["-k", "4"] + args
        bm = refinement(base + ["-bem_formulation", "bm"], [3, 4, 5], rate, f"{label} k=4, bm")
        check("D' corrected for the flat elements' edge curvature" in bm[0]["out"],
              f"{label}: bm corrects D' for the edge curvature")
        cbie = [summary(["-mesh", f"icosphere:{L}"] + base) for L in (3, 4)]
        for L, c, b in zip([3, 4], cbie, bm):
            check(b["l2"] < 1.5 * c["l2"], f"{label}, icosphere:{L}: bm's L2 error {b['l2']:.3e} "
                  f"within 1.5 times cbie's {c['l2']:.3e} ({b['l2'] / c['l2']:.2f})")


def case_near_matrix():
    # The near-field block assembled as the preconditioning matrix, so
    # that PETSc's PCs apply to it. The answer must not change with the preconditioner (rtol
    # 1e-8: differences at that level), and on the Burton-Miller operator, whose hypersingular
    # part is local and large, ILU(0) on the block halves the iterations (measured 20 -> 11 on
    # icosphere:4; here icosphere:3).
    base = ["-mesh", "icosphere:3", "-k", "8", "-ksp_rtol", "1e-8", "-bem_formulation", "cbie"]
    ref = os.path.join(WORK, "jacobi.csv")
    r0 = summary(base + ["-bem_csv", ref])
    check("jacobi (matrix-free" in r0["out"], "jacobi needs no near-field matrix")
    for pc in (["-pc_type", "ilu"], ["-pc_type", "lu"], ["-pc_type", "asm"],
               ["-pc_type", "ilu", "-pc_factor_levels", "1"]):
        out = os.path.join(WORK, "pc.csv")
        r = summary(base + pc + ["-bem_csv", out])
        check(f"{pc[1]} on the near-field matrix" in r["out"], f"{' '.join(pc)} on the near matrix")
        d = rel_diff(read_csv(out), read_csv(ref))
        check(d < 1e-6, f"{' '.join(pc)} changes the solution by {d:.1e} (< 1e-6)")
    bm = ["-mesh", "icosphere:3", "-k", "8", "-bem_formulation", "bm"]
    jac, ilu = summary(bm + ["-pc_type", "jacobi"]), summary(bm + ["-pc_type", "ilu"])
    check(ilu["its"] < 0.75 * jac["its"],
          f"bm: ILU(0) on the near block {ilu['its']} iterations, jacobi {jac['its']}")
    # bm defaults to the leaf blocks (-bem_pc auto), cbie to Jacobi; -pc_type alone keeps
    # PETSc's PC (above: ilu named in the summary).
    default, leaf = summary(bm), summary(bm + ["-bem_pc", "leaf_block"])
    check("preconditioner  leaf_block on the cpu" in default["out"], "bm's default PC is leaf_block")
    check(default["its"] == leaf["its"],
          f"bm: the default PC {default['its']} iterations, leaf_block {leaf['its']}")
    # On ranks: block Jacobi with ILU in each block (PETSc's parallel default for AIJ).
    two = os.path.join(WORK, "pc2.csv")
    summary(base + ["-pc_type", "bjacobi", "-bem_csv", two], mpi=2)
    d = rel_diff(read_csv(two), read_csv(ref))
    check(d < 1e-6, f"bjacobi on 2 ranks changes the solution by {d:.1e} (< 1e-6)")


def case_leaf_block():
    # Our preconditioner, -bem_pc leaf_block (dense near-field blocks of nearby
    # elements with a ring of overlap, inverted once). The answer must not change with it: at
    # rtol 1e-8 two solutions whose true residuals are below 1e-8 differ by at most
    # 2 kappa(A) 1e-8, kappa of a few for these second-kind operators (measured 1.8e-8 and
    # 1.2e-8): require 1e-7. On Burton-Miller it must not need more iterations than jacobi
    # (measured 14 against 25 at rtol 1e-8, 9 against 15 at 1e-5, icosphere:3).
    base = ["-mesh", "icosphere:3", "-k", "8", "-ksp_rtol", "1e-8"]
    for form in ("cbie", "bm"):
        args = base + ["-bem_formulation", form]
        ref = os.path.join(WORK, f"jacobi_{form}.csv")
        jac = summary(args + ["-pc_type", "jacobi", "-bem_csv", ref])
        for extra in ([], ["-bem_pc_overlap", "0"], ["-bem_pc_block", "16"],
                      ["-bem_pc_block_entries", "full"],
                      ["-pc_type", "leaf_block", "-pc_leaf_block_size", "16"]):
            out = os.path.join(WORK, "leaf.csv")
            r = summary(args + ["-bem_pc", "leaf_block", "-bem_csv", out] + extra)
            label = f"{form}: -bem_pc leaf_block {' '.join(extra)}"
            check("preconditioner  leaf_block on the cpu" in r["out"], f"{label} is named")
            d = rel_diff(read_csv(out), read_csv(ref))
            check(d < 1e-7, f"{label} changes the solution by {d:.1e} (< 1e-7)")
            if form == "bm" and not extra:
                check(r["its"] <= jac["its"],
                      f"{label}: {r['its']} iterations, jacobi {jac['its']} (no more)")
        # Block Jacobi by rank: each rank's blocks from its own rows; the same answer.
        two = os.path.join(WORK, "leaf2.csv")
        r = summary(args + ["-bem_pc", "leaf_block", "-bem_csv", two], mpi=2)
        d = rel_diff(read_csv(two), read_csv(ref))
        check(d < 1e-7, f"{form}: leaf_block on 2 ranks changes the solution by {d:.1e} (< 1e-7)")
    bm = ["-mesh", "icosphere:3", "-k", "8", "-bem_formulation", "bm"]
    # A PETSc PC type of its own: -pc_type leaf_block alone selects it, -ksp_view shows it, its
    # options set it, and out-of-range ones are refused naming the option.
    r = summary(["-mesh", "icosphere:3", "-k", "8", "-bem_formulation", "cbie", "-pc_type",
                 "leaf_block", "-pc_leaf_block_overlap", "0", "-ksp_view"])
    check("type: leaf_block" in r["out"] and "widened by 0 rings" in r["out"]
          and "preconditioner  leaf_block on the cpu" in r["out"],
          "-pc_type leaf_block is the leaf blocks, shown by -ksp_view")
    expect_error(bm + ["-pc_leaf_block_size", "0"], "-pc_leaf_block_size 0: out of range")
    jac, leaf = summary(bm + ["-pc_type", "jacobi"]), summary(bm + ["-bem_pc", "leaf_block"])
    check(leaf["its"] <= jac["its"], f"bm at rtol 1e-5: leaf_block {leaf['its']} iterations, "
          f"jacobi {jac['its']} (no more)")
    # The near-field matrix with more pairs (the regular rule for the rest of the FMM leaf or of
    # its U list): the same answer.
    for pairs in ("leaf", "neighbours"):
        out = os.path.join(WORK, "pairs.csv")
        r = summary(base + ["-bem_formulation", "cbie", "-pc_type", "ilu", "-bem_near_matrix_pairs", pairs, "-bem_csv", out])
        check(f"{pairs} pairs" in r["out"], f"-bem_near_matrix_pairs {pairs} is named")
        d = rel_diff(read_csv(out), read_csv(os.path.join(WORK, "jacobi_cbie.csv")))
        check(d < 1e-7, f"ILU on the {pairs} pairs changes the solution by {d:.1e} (< 1e-7)")


def case_radiation_cube():
    # Nested uniform refinements of a coarse cube: exact geometry, so the
    # error is the discretisation's alone. Sharp edges make the solution
    # singular there, so the rate is below h^2: require a ratio > 2.5.
    meshes = cube_meshes(1)
    for bc in ("neumann", "dirichlet"):
        res = [summary(["-mesh", m, "-k", "2", "-bem_problem", "radiation", "-bem_bc", bc,
                        "-bem_source", "0.1,0.05,-0.1"]) for m in meshes]
        a, b = res
        if bc == "neumann":
            check(a["l2"] / b["l2"] > 2.5, f"cube radiation {bc}: L2 error {a['l2']:.3e} -> {b['l2']:.3e}")
        else:
            # First kind on a cube: q jumps across the edges and collocation
            # converges slowly there (measured 1.7e-2 -> 1.3e-2 one level
            # finer); require a decrease and the measured level, not a rate.
            check(b["l2"] < a["l2"] and b["l2"] < 3e-2,
                  f"cube radiation {bc}: L2 error {a['l2']:.3e} -> {b['l2']:.3e}")


def case_bm_sharp_edges():
    # Burton-Miller and the regularised formulation on a body with sharp edges
    # (bench/results/bm_sharp_edges.md): the monopole radiating from inside the cube, cube0
    # (N = 540) and cube1 (2160), k = 2, against cbie. Measured 2026-12-03 (cbie / bm / rbm):
    # Neumann 3.69e-3 -> 1.38e-3 (2.67 a level) / 1.00e-2 -> 2.40e-3 (4.17; cube2 5.89e-4, 4.07
    # again, 1.14 x cbie) / 6.88e-3 -> 1.56e-3 (4.40; cube2 3.64e-4, 4.29, 0.70 x cbie); Dirichlet
    # 1.70e-2 -> 1.31e-2 (1.30) / 2.27e-2 -> 8.13e-3 (2.79; 0.62 x cbie), rbm = bm there. Before
    # the feature edges were handled (the quadratic read fitted across them, the monomials'
    # integrals were O(1) wrong for targets across a 90-degree edge, D' spread the edges'
    # curvature): Neumann 2.10e-1 -> 1.50e-1, Dirichlet 6.3e-1 -> 6.5e-1; before the corner case
    # of those integrals (a target across the edge from a vertex) was handled: bm 1.00e-2 ->
    # 2.46e-3, rbm 6.88e-3 -> 7.37e-3 (its second-kind rows do not damp the local error as bm's
    # hypersingular ones do). Bounds: with the one-sided linear read at the edges the operators
    # are consistent to O(h^2) away from the edge strip, and cbie's Neumann rate here is 2.67
    # (next to the edges centroid collocation loses its h^2 superconvergence): bm and rbm must
    # fall by > 3.0 (measured 4.07 to 4.40, a 35 % margin) and stay within 2.5 x cbie on cube1
    # (1.74 and 1.13 measured, a 1.4 margin or more). Dirichlet (q jumps across the edges): bm
    # must fall by > 1.6 (2.79 and 2.71 measured; cbie 1.30, 1.38) and stay below 1.2 x cbie
    # (0.62).
    meshes = cube_meshes(1)
    base = ["-k", "2", "-bem_problem", "radiation", "-bem_source", "0.1,0.05,-0.1"]
    bounds = {"neumann": (3.0, 2.5), "dirichlet": (1.6, 1.2)}
    for bc in ("neumann", "dirichlet"):
        forms = ("bm", "rbm") if bc == "neumann" else ("bm",)
        err = {f: [summary(["-mesh", m] + base + ["-bem_bc", bc, "-bem_formulation", f])["l2"]
                   for m in meshes] for f in ("cbie",) + forms}
        c = err["cbie"]
        rate, factor = bounds[bc]
        for f in forms:
            b = err[f]
            check(b[0] / b[1] > rate, f"cube {bc}: {f} {b[0]:.3e} -> {b[1]:.3e} falls by > {rate} "
                  f"(cbie {c[0]:.3e} -> {c[1]:.3e})")
            check(b[1] < factor * c[1],
                  f"cube {bc}: {f}'s error {b[1]:.3e} within {factor} x cbie's {c[1]:.3e}")


def case_shipped_meshes():
    r = summary(["-mesh", os.path.join(SRC, "meshes/sphere.msh"), "-k", "1",
                 "-o", os.path.join(WORK, "sphere.vtu"), "-bem_csv", os.path.join(WORK, "s.csv")])
    check(r["l2"] < 1e-2, f"shipped sphere.msh, k=1: L2 error {r['l2']:.3e} < 1e-2")
    vtu = open(os.path.join(WORK, "sphere.vtu"), "rb").read()
    for name in (b"u_re", b"u_im", b"u_abs", b"err_abs"):
        check(name in vtu, f"the .vtu holds cell array {name.decode()}")
    check(len(read_csv(os.path.join(WORK, "s.csv"))) == r["n"], "the CSV has a row per element")


def case_quadrature_refinement():
    # The accurate near field and the far-field rule must not change the
    # solution at the digits the discretisation error leaves (2.5e-2 here):
    # require changes 30x below it.
    base = ["-mesh", "icosphere:3", "-k", "8", "-ksp_rtol", "1e-10"]
    ref = os.path.join(WORK, "q_ref.csv")
    summary(base + ["-bem_csv", ref])
    for extra in (["-bem_quad_order", "7"], ["-bem_near_factor", "4"], ["-bem_near_quad", "32"]):
        out = os.path.join(WORK, "q_alt.csv")
        summary(base + extra + ["-bem_csv", out])
        d = rel_diff(read_csv(out), read_csv(ref))
        check(d < 2.5e-2 / 30, f"{' '.join(extra)} changes the solution by {d:.2e}")


def case_mpi():
    # Same operator, only the reduction order differs: rounding, times the 1e-10 tolerance's
    # leeway. bm distributed; the default rbm with the tree shared (distributed, its S~ takes the
    # operator's rule where one rank takes the centroid rule: the regularised case checks that).
    for extra in (["-bem_formulation", "bm"], ["-fmm_distribute", "false"]):
        base = ["-mesh", "icosphere:2", "-k", "8", "-ksp_rtol", "1e-10"] + extra
        one, two = os.path.join(WORK, "mpi1.csv"), os.path.join(WORK, "mpi2.csv")
        summary(base + ["-bem_csv", one])
        summary(base + ["-bem_csv", two], mpi=2)
        d = rel_diff(read_csv(two), read_csv(one))
        check(d < 1e-8, f"{' '.join(extra)}: mpiexec -n 2 gives the -n 1 solution (rel. diff {d:.1e})")


def case_petsc_options():
    r = summary(["-mesh", "icosphere:2", "-k", "1", "-ksp_type", "bcgs", "-pc_type", "none",
                 "-ksp_monitor", "-ksp_view", "-log_view"])
    out = r["out"]
    check("type: bcgs" in out and "type: none" in out, "-ksp_type/-pc_type are honoured")
    check("BEMOperator" in out and "BEMNearSetup" in out, "-log_view shows the BEM events")
    check("KSP Residual norm" in out, "-ksp_monitor prints residuals")
    h = run(["-help"], expect_ok=False).stdout
    for opt in ("-mesh", "-k ", "-bem_problem", "-bem_bc", "-bem_incident_dir", "-bem_quad_order",
                "-bem_operator", "-bem_csv"):
        check(opt in h, f"-help lists {opt.strip()}")


def case_bad_input():
    bad = os.path.join(WORK, "garbage.msh")
    open(bad, "w").write("this is not a mesh\n")
    expect_error(["-mesh", os.path.join(WORK, "missing.msh")], "missing.msh")
    expect_error(["-mesh", bad], "garbage.msh")
    expect_error([], "no mesh")
    tet = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    cases = {
        "open": (tet, [(0, 1, 2), (0, 1, 3), (0, 2, 3)], "open"),
        "degenerate": (tet + [(0.5, 0.5, 0)], [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3), (1, 4, 2)], "degenerate"),
        "duplicate": (tet, [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3), (2, 1, 0)], "duplicate"),
        "nonmanifold": (tet + [(1, 1, 1)], [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3), (0, 1, 4)], "non-manifold"),
    }
    for name, (nodes, tris, needle) in cases.items():
        path = os.path.join(WORK, f"{name}.msh")
        write_msh22(path, nodes, tris)
        expect_error(["-mesh", path], needle)
    # Inconsistent orientation is fixed, not refused.
    path = os.path.join(WORK, "flipped.msh")
    write_msh22(path, tet, [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)])
    out = run(["-mesh", path, "-k", "1", "-bem_problem", "radiation", "-bem_source", "0.2,0.2,0.2"]).stdout
    check("flipped" in out, "inconsistent orientation is fixed and reported")
    ico = ["-mesh", "icosphere:1"]
    expect_error(ico + ["-k", "-1"], "-k")
    expect_error(ico + ["-bem_quad_order", "4"], "4 points")
    expect_error(ico + ["-bem_problem", "foo"], "-bem_problem")
    expect_error(ico + ["-bem_bc", "robin"], "-bem_bc")
    expect_error(ico + ["-bem_operator", "magic"], "-bem_operator")
    expect_error(ico + ["-bem_problem", "radiation", "-bem_source", "3,0,0"], "inside")
    expect_error(ico + ["-bem_incident", "pointsource", "-bem_source", "0,0,0"], "outside")
    expect_error(ico + ["-bem_incident", "pointsource"], "-bem_source")
    expect_error(["-mesh", "icosphere:x"], "icosphere")
    expect_error(ico + ["-bem_incident_dir", "0,0,0"], "direction")
    expect_error(ico + ["-bem_near_factor", "0.5"], "near_factor")
    expect_error(ico + ["-fmm_p", "-1"], "-fmm_p")
    expect_error(ico + ["-fmm_p", "41"], "-fmm_p")
    expect_error(ico + ["-fmm_eps", "0"], "-fmm_eps")
    expect_error(ico + ["-fmm_eps", "1.5"], "-fmm_eps")
    expect_error(ico + ["-fmm_max_leaf", "0"], "-fmm_max_leaf")


def case_hostile_options():
    # Every bad option, value or output gives one line naming the
    # option, exit status 1, and nothing written; a failed solve exits 2.
    ico = ["-mesh", "icosphere:2"]

    def one_line_error(args, needle, status=1, mpi=0):
        p = run(args, expect_ok=False, mpi=mpi)
        ours = [l for l in p.stderr.split("\n") if l.startswith("bem_solve: error:")]
        check(p.returncode == status and len(ours) == 1 and needle in ours[0]
              and "PETSC ERROR" not in p.stderr and "PETSC ERROR" not in p.stdout,
              f"{' '.join(args)}{' on %d ranks' % mpi if mpi else ''} -> exit {p.returncode} "
              f"(want {status}), one line with '{needle}': {ours}")
        return p

    for args, needle in [
            (["-k", "abc"], "-k abc"), (["-fmm_p", "2.5"], "-fmm_p 2.5"),
            (["-fmm_p", "4294967297"], "-fmm_p 4294967297"),
            (["-bem_incident", "pointsource", "-bem_source", "a,b,c"], "-bem_source a,b,c"),
            (["-bem_incident", "pointsource", "-bem_source", "3,0,0,1"], "three numbers"),
            (["-bem_probem", "radiation"], "did you mean -bem_problem"),
            (["-mehs", "x"], "did you mean -mesh"),
            (["-kps_type", "cg"], "-kps_type"),
            (["-ksp_type", "nonsense"], "nonsense"),
            (["-pc_type", "lu", "-bem_near_matrix", "off"], "needs an assembled matrix"),
            (["-bem_near_matrix", "maybe"], "-bem_near_matrix maybe is not known"),
            (["-bem_pc", "ilu"], "-bem_pc ilu is not known (choose auto, petsc, leaf_block)"),
            (["-bem_pc", "leaf_block", "-bem_pc_block", "0"], "-bem_pc_block 0: out of range"),
            (["-bem_pc", "leaf_block", "-bem_pc_block", "-8"], "-bem_pc_block -8: out of range"),
            (["-bem_pc", "leaf_block", "-bem_pc_block", "2.5"], "-bem_pc_block 2.5: not an integer"),
            (["-bem_pc", "leaf_block", "-bem_pc_block", "abc"], "-bem_pc_block abc: not an integer"),
            (["-bem_pc", "leaf_block", "-bem_pc_overlap", "5"], "-bem_pc_overlap 5: out of range"),
            (["-bem_pc", "leaf_block", "-bem_pc_block_entries", "all"],
             "-bem_pc_block_entries all is not known"),
            (["-bem_pc", "leaf_block", "-pc_type", "ilu"], "-pc_type ilu another"),
            (["-bem_formulation", "cbie", "-bem_pc_block", "16"],
             "-bem_pc_block applies only to -bem_pc leaf_block"),
            (["-bem_pc", "petsc", "-bem_pc_block", "16"],
             "-bem_pc_block applies only to -bem_pc leaf_block"),
            (["-bem_near_matrix_pairs", "leaf"], "-bem_near_matrix_pairs leaf does not apply"),
            (["-bem_near_matrix_pairs", "all"], "-bem_near_matrix_pairs all is not known"),
            (["-bem_operator", "direct", "-pc_type", "ilu", "-bem_near_matrix_pairs", "leaf"],
             "needs the FMM's octree"),
            (["-ksp_max_it", "0"], "-ksp_max_it"), (["-ksp_rtol", "-1"], "-ksp_rtol"),
            (["-bem_source", "3,0,0"], "-bem_source does not apply"),
            (["-bem_operator", "direct", "-fmm_p", "8"], "-fmm_p does not apply"),
            (["-bem_problem", "radiation", "-bem_incident", "pointsource"], "-bem_incident"),
            (["-kernel", "laplace", "-k", "3"], "contradicts"),
            (["-bem_incident", "pointsource", "-bem_source", "1,0,0"], "on the surface"),
            (["-k", "1e-300"], "use -k 0"), (["-k", "1e300"], "elements per wavelength"),
            (["-k", "30"], "elements per wavelength"), (["-bem_near_quad", "0"], "-bem_near_quad"),
            (["-o", "x.csv"], ".vtu"), (["-bem_csv", "/nonexistent/x.csv"], "/nonexistent"),
            (["-bem_csv", "/dev/null"], "not a regular file"),
            (["-bem_formulation", "bm", "-bem_bm_alpha", "abc"],
             "-bem_bm_alpha abc: not a complex number"),
            (["-bem_formulation", "bm", "-bem_bm_alpha", "1+i2"], "not a complex number"),
            (["-bem_formulation", "bm", "-bem_bm_alpha", "0.5"], "non-zero imaginary part"),
            (["-k", "0", "-bem_bm_alpha", "0.1i"], "applies only"),
            (["-bem_formulation", "bm", "-k", "0"], "needs k > 0"),
            (["-bem_formulation", "cbie", "-bem_bm_alpha", "0.1i"], "applies only"),
            (["-bem_formulation", "bem"], "-bem_formulation bem is not known (choose auto, cbie, bm, rbm)")]:
        one_line_error(ico + args, needle)
    # The field and far field: bad points, planes and outputs are refused before the
    # solve, one line, nothing written.
    field_out = os.path.join(WORK, "field_out.csv")
    no_points = os.path.join(WORK, "no_points.csv")
    open(no_points, "w").write("x,y,z\n# none\n")
    bad_line = os.path.join(WORK, "bad_line.csv")
    open(bad_line, "w").write("1,2,3\n4,5\n")
    plane = ["-bem_field_plane", "-2,0,-2,4,0,0,0,0,4,5,5"]
    out = ["-bem_field_csv", field_out]
    for args, needle in [
            (["-bem_field", os.path.join(WORK, "missing.csv")] + out, "cannot read field file"),
            (["-bem_field", no_points] + out, "has no points"),
            (["-bem_field", bad_line] + out, "bad_line.csv', line 2: expected three finite numbers"),
            (["-bem_field", os.path.join(WORK, "missing.msh")] + out, "missing.msh"),
            (["-bem_field_plane", "0,0,0,1,0,0,0,1,0,0,5"], "integers >= 2"),
            (["-bem_field_plane", "0,0,0,1,0,0,2,0,0,5,5"], "parallel"),
            (["-bem_field_plane", "0,0,0,1,0,0,0,1,0,5"], "needs 11 comma-separated values"),
            (["-bem_field", bad_line] + plane, "give one of them"),
            (plane + ["-bem_field_vtk", os.path.join(WORK, "p.vtu")], "must end in .vts"),
            (["-bem_field_csv", field_out], "needs field points"),
            (["-bem_farfield_csv", field_out], "needs -bem_farfield N"),
            (["-bem_farfield", "0"], "-bem_farfield 0: out of range"),
            (["-bem_farfield", "x"], "-bem_farfield x: not an integer"),
            (["-bem_farfield", "8", "-k", "0"], "needs k > 0"),
            (plane + ["-bem_field_csv", field_out, "-bem_csv", field_out], "same file"),
            (plane + ["-bem_field_csv", field_out, "-bem_farfield", "4", "-bem_farfield_csv",
                      field_out], "name the same file"),
            (["-bem_field", bad_line, "-bem_field_csv", bad_line], "is the field file"),
            (plane + ["-bem_field_csv", "/nonexistent/f.csv"], "/nonexistent")]:
        one_line_error(ico + args, needle)
    # Sweeps: bad lists, ranges and sound speeds, before any file is made.
    sweep_out = ["-bem_csv", field_out, "-bem_sweep_csv", os.path.join(WORK, "sweep_out.csv")]
    for args, needle in [
            (["-k", "1,-2"], "-k 1,-2: entry '-2' is negative"),
            (["-k", "1,abc"], "entry 'abc' is not a finite number"),
            (["-k", "1,,2"], "an empty entry"), (["-k", "2,"], "an empty entry"),
            (["-k", "1:2:0"], "the step must be > 0 (a sweep with zero steps)"),
            (["-k", "1:2:-0.5"], "the step must be > 0"),
            (["-k", "3:1:0.5"], "last < first (a sweep with zero steps)"),
            (["-k", "1:2"], "needs exactly first:last:step"),
            (["-k", "1,2", "-bem_frequency", "100"], "give one of them"),
            (["-bem_frequency", "100,-50"], "-bem_frequency 100,-50: entry '-50' is negative"),
            (["-bem_frequency", "1e2:x:10"], "range end 'x' is not a finite number"),
            (["-bem_frequency", "100", "-bem_sound_speed", "0"], "-bem_sound_speed 0: must be > 0"),
            (["-bem_frequency", "100", "-bem_sound_speed", "-343"], "must be > 0"),
            (["-bem_frequency", "100", "-bem_sound_speed", "fast"],
             "-bem_sound_speed fast: not a finite number"),
            (["-bem_sound_speed", "343"], "-bem_sound_speed applies only to -bem_frequency"),
            (["-kernel", "laplace", "-bem_frequency", "100"], "contradicts"),
            (["-k", "0,2", "-bem_farfield", "4"], "needs k > 0"),
            (["-k", "2,30"], "-k 30 on 'icosphere:2'"),
            # The sweep's numbered -bem_csv (field_out_k0002.csv) against the table's file.
            (["-k", "1,2", "-bem_sweep_csv", field_out.replace(".csv", "_k0002.csv"),
              "-bem_csv", field_out], "same file")]:
        one_line_error(ico + args + (sweep_out if "same file" not in needle else []), needle)
    check(not [f for f in os.listdir(WORK) if f.startswith("sweep_out") or f.startswith("field_out")],
          "a refused sweep leaves no output file")
    check(not os.path.exists(field_out), "a refused field leaves no output file")
    check(not [f for f in os.listdir(WORK) if f.startswith(".")], "and no temporary file")
    # The same on several ranks, without hanging (run() has a timeout).
    for ranks in (2, 3):
        one_line_error(ico + ["-k", "abc"], "-k abc", mpi=ranks)
        one_line_error(ico + ["-bem_csv", "/nonexistent/x.csv"], "/nonexistent", mpi=ranks)
        one_line_error(ico + ["-ksp_type", "nonsense"], "nonsense", mpi=ranks)
        one_line_error(ico + ["-bem_pc", "leaf_block", "-pc_type", "ilu"], "-pc_type ilu another",
                       mpi=ranks)
        one_line_error(ico + ["-ksp_max_it", "2", "-bem_csv", os.path.join(WORK, "f.csv")],
                       "DIVERGED_ITS", status=2, mpi=ranks)
    # A failed solve (iteration cap, NaN from an absurd k the user insisted
    # on) exits 2 and writes nothing.
    out = os.path.join(WORK, "failed.csv")
    one_line_error(ico + ["-ksp_max_it", "2", "-bem_csv", out], "DIVERGED_ITS", status=2)
    one_line_error(ico + ["-k", "1e300", "-bem_allow_coarse", "-bem_csv", out], "DIVERGED", status=2)
    check(not os.path.exists(out), "a failed solve leaves no output file")
    check(not [f for f in os.listdir(WORK) if f.startswith(".")], "and no temporary file")
    # Outputs never overwrite the mesh, never clash, replace old files whole.
    mesh = os.path.join(WORK, "m.msh")
    shutil.copy(os.path.join(SRC, "meshes/sphere.msh"), mesh)
    before = open(mesh, "rb").read()
    one_line_error(["-mesh", mesh, "-bem_csv", mesh], "input mesh")
    one_line_error(["-mesh", mesh, "-bem_csv", os.path.join(WORK, ".", "m.msh")], "input mesh")
    check(open(mesh, "rb").read() == before, "the mesh is untouched")
    one_line_error(ico + ["-o", os.path.join(WORK, "a.vtu"), "-bem_csv",
                          os.path.join(WORK, "a.vtu")], "same file")
    old = os.path.join(WORK, "old.csv")
    open(old, "w").write("previous results\n")
    one_line_error(ico + ["-ksp_max_it", "2", "-bem_csv", old], "DIVERGED", status=2)
    check(open(old).read() == "previous results\n", "a failed solve keeps the old output")
    r = run(ico + ["-k", "2", "-bem_csv", old])
    check(len(read_csv(old)) == 320, "a good solve replaces it whole")
    # Under-resolution: a warning below 6 elements per wavelength.
    r = run(ico + ["-k", "8"])
    check("warning:" in r.stdout and "elements per wavelength" in r.stdout,
          "icosphere:2 at k = 8 (2.4 elements per wavelength) gets a warning")
    # Meshes through pipes, on one rank and on two (rank 0 reads, the others receive), and a
    # mesh whose text would run a command if Gmsh parsed it as a script.
    sphere = os.path.join(SRC, "meshes/sphere.msh")
    for ranks in (0, 2):
        cmd = [BEM, "-mesh", "/dev/stdin", "-k", "1"]
        if ranks:
            cmd = ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", str(ranks)] + cmd
        with open(sphere, "rb") as f:
            p = subprocess.run(cmd, stdin=f, capture_output=True, text=True, timeout=300)
        check(p.returncode == 0 and "N = 5434 elements" in p.stdout,
              f"-mesh /dev/stdin < sphere.msh on {max(ranks, 1)} rank(s) solves")
    marker = os.path.join(WORK, "pwned")
    evil = os.path.join(WORK, "evil.msh")
    open(evil, "w").write('$MeshFormat\n2.2 0 8\n$EndMeshFormat\nSystem "touch %s";\n' % marker)
    with open(evil, "rb") as f:
        p = subprocess.run([BEM, "-mesh", "/dev/stdin"], stdin=f, capture_output=True, text=True,
                           timeout=120)
    check(p.returncode == 1 and "malformed" in p.stderr and not os.path.exists(marker),
          "a script line in a piped mesh is refused and runs nothing")
    # The GPU options: an unknown scheme is refused anywhere; without a GPU, auto says once that
    # M2L runs on the CPU and gpu is refused.
    one_line_error(ico + ["-fmm_m2l_scheme", "fast"], "unknown M2L scheme 'fast'")
    one_line_error(ico + ["-fmm_device", "cpu", "-fmm_m2l_scheme", "ij"], "does not apply")
    auto = run(ico + ["-k", "2"]).stdout
    if "M2L on cpu (no GPU" in auto:
        check(auto.count("no GPU") == 1, "without a GPU, -fmm_device auto says so once")
        one_line_error(ico + ["-fmm_device", "gpu"], "-fmm_device gpu")
    check(not [f for f in os.listdir(os.environ["TMPDIR"]) if f.startswith("fmbem")],
          "the mesh reader leaves no private copy behind")
    # -help lists the options and exits 0 without asking for a mesh.
    h = run(["-help"])
    check(h.returncode == 0 and "-bem_allow_coarse" in h.stdout and "error" not in h.stderr,
          "-help exits 0 and lists the options")


def case_hostile_second_round():
    # The second sweep of hostile input: success means the true residual met the tolerance,
    # outputs never overwrite inputs or each other (by the file they resolve to, after a sweep's
    # numbering), signals leave no temporaries, options are read whole and strictly.
    import signal
    import time
    ico = ["-mesh", "icosphere:2", "-k", "2"]

    def one_line_error(args, needle, status=1, mpi=0, env=None, **kw):
        cmd = [BEM] + args
        if mpi:
            cmd = ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", str(mpi)] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, **kw)
        ours = [l for l in p.stderr.split("\n") if l.startswith("bem_solve: error:")]
        check(p.returncode == status and len(ours) == 1 and needle in ours[0]
              and "PETSC ERROR" not in p.stderr + p.stdout,
              f"{' '.join(args)[:120]} -> exit {p.returncode} (want {status}), one line with "
              f"'{needle}': {[o[:300] for o in ours]}")
        return p

    def no_temporaries(folder, label):
        left = [f for f in os.listdir(folder) if f.startswith(".") or f.startswith("fmbem-mesh")]
        check(not left, f"{label}: no temporary left in {folder} ({left})")

    # Exit 0 only when the true residual met -ksp_rtol.
    out = os.path.join(WORK, "u.csv")
    if os.path.exists(out):
        os.remove(out)
    for args, needle in [(["-ksp_type", "preonly"], "-ksp_type preonly"),
                         (["-ksp_atol", "1e3"], "-ksp_atol")]:
        one_line_error(ico + args + ["-bem_csv", out], needle, status=2)
    check(not os.path.exists(out), "no output from a solve that missed -ksp_rtol")
    r = summary(ico + ["-bem_csv", out])
    its = re.search(r"true relative residual (\S+)", r["out"])
    check(float(its.group(1)) <= 1e-5, f"the default solve's true residual {its.group(1)} <= 1e-5")
    # Outputs against inputs, after a sweep's numbering and through links.
    mesh = os.path.join(WORK, "m.msh")
    nodes, tris = icosphere_nodes(2)
    write_msh22(mesh, nodes, tris)
    numbered = os.path.join(WORK, "m_k0001.msh")
    shutil.copy(mesh, numbered)
    before = open(numbered, "rb").read()
    one_line_error(["-mesh", numbered, "-k", "1,2", "-bem_csv", mesh], "input mesh")
    check(open(numbered, "rb").read() == before, "a sweep's numbered output never replaces the mesh")
    link = os.path.join(WORK, "link.csv")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(mesh, link)
    one_line_error(["-mesh", mesh, "-k", "1", "-bem_csv", link], "input mesh")
    named_like = os.path.join(WORK, "icosphere_big.msh")
    shutil.copy(mesh, named_like)
    one_line_error(["-mesh", named_like, "-k", "1", "-bem_csv", named_like], "input mesh")
    points = os.path.join(WORK, "points.csv")
    open(points, "w").write("2,0,0\n0,3,0\n")
    for option in ("-o", "-bem_csv", "-bem_sweep_csv"):
        target = points if option != "-o" else os.path.join(WORK, "points.vtu")
        if option == "-o":
            shutil.copy(points, target)
        one_line_error(ico + ["-bem_field", target if option == "-o" else points,
                              "-bem_field_csv", os.path.join(WORK, "f.csv"), option, target],
                       "field file")
    one_line_error(ico + ["-k", "1,2", "-bem_csv", os.path.join(WORK, "a.csv"), "-bem_field",
                          points, "-bem_field_csv", os.path.join(WORK, "a.csv")], "same file")
    one_line_error(ico + ["-k", "1,2", "-bem_csv", os.path.join(WORK, "s.csv"),
                          "-bem_sweep_csv", os.path.join(WORK, "s_k0002.csv")], "same file")
    folder = os.path.join(WORK, "b_k0002.csv")
    os.makedirs(folder, exist_ok=True)
    one_line_error(ico + ["-k", "1,2", "-bem_csv", os.path.join(WORK, "b.csv")],
                   "not a regular file")
    check(not os.path.exists(os.path.join(WORK, "b_k0001.csv")),
          "a sweep refused before its first solve writes nothing")
    no_temporaries(WORK, "refusals")
    # A file-size limit: the write fails with one line, the old file stays whole.
    import resource
    old = os.path.join(WORK, "old.csv")
    open(old, "w").write("previous\n")

    def small_files():
        # 4 MiB: Open MPI's start-up needs its shared-memory files; the field's CSV is 6 MB.
        resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20))
    one_line_error(ico + ["-bem_field_plane", "-3,0,-3,6,0,0,0,0,6,260,260", "-bem_field_csv",
                          old], "old.csv': File too large", status=1, preexec_fn=small_files)
    check(open(old).read() == "previous\n", "a file-size limit leaves the old output whole")
    no_temporaries(WORK, "file-size limit")
    # Signals: a run stopped from outside removes its temporaries and its private mesh copy.
    tmp = os.environ["TMPDIR"]
    # A 1001-value sweep (its files made as each k is written, none reserved up front), and a
    # mesh read from a FIFO that nothing writes to: the private copy's folder exists while the
    # reader waits, so the signal lands while there is something to remove.
    big = ["-mesh", mesh, "-k", "1:3:0.002", "-bem_csv", os.path.join(WORK, "sig.csv"),
           "-bem_field_plane", "-3,0,-3,6,0,0,0,0,6,100,100", "-bem_field_csv",
           os.path.join(WORK, "sig_field.csv")]
    fifo = os.path.join(WORK, "mesh.fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    waiting = ["-mesh", fifo, "-k", "2", "-bem_csv", os.path.join(WORK, "sig.csv")]
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
        args = big if sig in (signal.SIGINT, signal.SIGTERM) else waiting
        p = subprocess.Popen([BEM] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        if args is waiting:
            # The copy is made after the signal handlers are installed; start-up (PETSc, MPI)
            # can take seconds on a loaded machine: wait for it rather than a fixed time.
            deadline = time.time() + 60
            while (not [f for f in os.listdir(tmp) if f.startswith("fmbem-mesh")]
                   and time.time() < deadline and p.poll() is None):
                time.sleep(0.1)
            check([f for f in os.listdir(tmp) if f.startswith("fmbem-mesh")],
                  f"{signal.Signals(sig).name}: the mesh's private copy exists while it waits")
        else:
            time.sleep(1.5)
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=60)
        check(p.returncode == 128 + sig and "stopped by" in stderr
              and "Caught signal" not in stderr + stdout and "MPI_ABORT" not in stderr,
              f"{signal.Signals(sig).name}: exit {p.returncode}, one line: {stderr.strip()[-200:]}")
        no_temporaries(WORK, signal.Signals(sig).name)
        no_temporaries(tmp, signal.Signals(sig).name + " (TMPDIR)")
    # A reader that goes away (bem_solve ... | head -1): quiet, no trace, no temporaries.
    p = subprocess.run(f"'{BEM}' -mesh '{mesh}' -k 2 -ksp_monitor -bem_csv "
                       f"'{os.path.join(WORK, 'pipe.csv')}' | head -1", shell=True,
                       capture_output=True, text=True, timeout=120)
    check("Caught signal" not in p.stderr and "MPI_ABORT" not in p.stderr,
          f"| head -1: no PETSc trace ({p.stderr.strip()[-200:]})")
    no_temporaries(WORK, "SIGPIPE")
    no_temporaries(tmp, "SIGPIPE (TMPDIR)")
    # A relative TMPDIR.
    env = dict(os.environ, TMPDIR="rel_tmp")
    os.makedirs(os.path.join(WORK, "rel_tmp"), exist_ok=True)
    p = subprocess.run([BEM, "-mesh", mesh, "-k", "1"], capture_output=True, text=True,
                       timeout=300, env=env, cwd=WORK)
    check(p.returncode == 0, f"a relative TMPDIR reads a valid mesh: {p.stderr.strip()[-200:]}")
    # Options read whole and strictly.
    long_path = os.path.join(WORK, "x" * 200, *(["y" * 200] * 24)) + ".msh"
    p = one_line_error(["-mesh", long_path], long_path[-40:])
    one_line_error(ico + ["-k", "+-2"], "-k +-2")
    one_line_error(ico + ["-bem_formulation", "cbie", "-bem_feature_angle", "30"],
                   "-bem_feature_angle applies only")
    one_line_error(ico + ["-bem_curvature_correction", "false"],
                   "-bem_curvature_correction applies only")
    one_line_error(ico + ["-bem_formulation", "cbie", "-pc_type", "redistribute"],
                   "-pc_type redistribute is not supported")
    # The same on two ranks: success by the true residual, outputs against inputs, a signal
    # to mpiexec (which passes it to the ranks) leaving nothing behind.
    one_line_error(ico + ["-ksp_type", "preonly", "-bem_csv", out], "-ksp_type preonly",
                   status=2, mpi=2)
    one_line_error(["-mesh", numbered, "-k", "1,2", "-bem_csv", mesh], "input mesh", mpi=2)
    one_line_error(ico + ["-bem_formulation", "cbie", "-bem_feature_angle", "30"],
                   "-bem_feature_angle applies only", mpi=2)
    p = subprocess.Popen(["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", "2", BEM] +
                         big, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    p.send_signal(signal.SIGTERM)
    stdout, stderr = p.communicate(timeout=60)
    check(p.returncode != 0 and "Caught signal" not in stderr + stdout,
          f"SIGTERM to mpiexec -n 2: exit {p.returncode}, no PETSc trace")
    no_temporaries(WORK, "SIGTERM on 2 ranks")
    no_temporaries(tmp, "SIGTERM on 2 ranks (TMPDIR)")
    # The largest plane (1e8 points) refused before the solve where its field cannot fit (at 336
    # bytes a point; on a machine with more memory it is a legitimate run, too long for a test).
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if memory < 336e8:
        one_line_error(ico + ["-bem_field_plane", "-3,0,-3,6,0,0,0,0,6,10000,10000",
                              "-bem_field_csv", os.path.join(WORK, "huge.csv")],
                       "more than this machine's")
    # Per-rank command lines (MPMD): refused on every rank, no hang, no mixed answer.
    cmd = ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", "1", BEM] + ico + \
          [":", "-n", "1", BEM, "-mesh", "icosphere:2", "-k", "3"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    check(p.returncode != 0 and "different options" in p.stderr,
          f"MPMD with different -k per rank is refused: exit {p.returncode} "
          f"{p.stderr.strip()[-200:]}")


def case_fmm_vs_direct():
    # The FMM operator (the default) against the direct one on the k = 8
    # rigid sphere: the same iterations, and the error against the Mie series
    # equal at the digits that matter (the discretisation error is 2.5e-2;
    # the FMM's MatMult error at the default -fmm_eps 1e-4 moves it by far
    # less than 1 %, at p = 16 by less than 0.01 %).
    base = ["-mesh", "icosphere:3", "-k", "8"]
    direct = summary(base + ["-bem_operator", "direct"])
    default = summary(base + ["-fmm_view", "-log_view"])
    p16 = summary(base + ["-fmm_p", "16", "-fmm_max_leaf", "30"])
    for label, r, tol in (("default", default, 1e-2), ("p = 16", p16, 1e-4)):
        check(r["its"] == direct["its"], f"FMM {label}: {r['its']} iterations, as direct")
        check(abs(r["l2"] - direct["l2"]) < tol * direct["l2"],
              f"FMM {label}: L2 error {r['l2']:.4e} equals direct {direct['l2']:.4e} within {tol:g}")
    out = default["out"]
    check("level   cells  leaves  M2L pairs" in out and "translation matrices" in out,
          "-fmm_view prints the tree, lists and memory")
    for event in ("FMMTree", "FMMP2M", "FMMM2M", "FMMM2L", "FMML2L", "FMML2P", "FMMNear"):
        check(event in out, f"-log_view shows {event}")
    check(re.search(r"fmm +p = 11,", out) is not None, "-fmm_eps 1e-4 (default) chooses p = 11")


def case_far_from_origin():
    # The same body translated (offsets 1e-3 .. 1e6 times its radius) or scaled (radius 1e-6 ..
    # 1e6, k scaled with it) must get the same answer: the surface solution equal element by
    # element once the exact change is taken out (a plane wave's phase exp(i k d.s) across a
    # shift s; u scales as 1/R for the monopole, as R^0 for scattering). Stored coordinates are
    # rounded to eps |offset|, a relative perturbation of delta = eps |offset| / h of elements
    # of size h; a second-kind equation (condition ~10) moves the solution by a few delta, and
    # GMRES stopped at rtol 1e-12 leaves ~1e-11: tolerance 20 delta + 1e-10 (measured: 0.4 delta,
    # about 4e-10 at 1e6 on icosphere:2). Before coordinates were handled relative to the
    # elements, a unit sphere 1e4 away gave 16 % error (bm) or no convergence (cbie).
    import cmath
    import math
    eps = 2.220446049250313e-16
    level = 2
    nodes0, tris = icosphere_nodes(level)
    h = min(math.dist(nodes0[a], nodes0[b]) for a, b, _ in tris)
    direction = (1.0, 0.5, -0.25)

    def surface(radius, offset, args):
        centre = tuple(offset * d for d in direction)
        nodes, _ = icosphere_nodes(level, radius, centre)
        path = os.path.join(WORK, f"sphere_{radius:g}_{offset:g}.msh")
        write_msh22(path, nodes, tris)
        csv = path + ".csv"
        k = float(args[args.index("-k") + 1]) / radius
        a = list(args)
        a[a.index("-k") + 1] = repr(k)
        r = summary(["-mesh", path, "-bem_csv", csv, "-ksp_rtol", "1e-12"] + a)
        return r, read_csv(csv), k, centre

    problems = {
        "rigid bm": ["-k", "2", "-bem_operator", "direct"],
        "soft bm": ["-k", "2", "-bem_bc", "dirichlet", "-bem_operator", "direct"],
        "radiation cbie": ["-k", "2", "-bem_problem", "radiation", "-bem_formulation", "cbie",
                           "-bem_operator", "direct"],
        "laplace radiation": ["-k", "0", "-bem_problem", "radiation", "-bem_operator", "direct"],
        "rigid bm, FMM": ["-k", "2", "-fmm_eps", "1e-8"],
    }
    for name, args in problems.items():
        ref, u0, _, _ = surface(1.0, 0.0, args)
        fmm = "-fmm_eps" in args
        # Radii 1e+-25 too: the sphere fit (the exact solution's detection) once mixed lengths
        # with their squares and lost the sphere at 1e-25; the curvature correction lost all
        # digits at 1e15.
        moves = [(1.0, d) for d in (1e-3, 1e2, 1e4, 1e6)] + \
            [(r, 0.0) for r in (1e-25, 1e-6, 1e6, 1e25)]
        if fmm:
            moves = [(1.0, 1e4), (1e-6, 0.0), (1e3, 1e9)]
        for radius, offset in moves:
            r, u, k, centre = surface(radius, offset, args)
            check(r.get("l2") is not None and abs(r["l2"] - ref["l2"]) <= 1e-3 * ref["l2"],
                  f"{name}: radius {radius:g} at {offset:g}: the exact solution found, error "
                  f"{r.get('l2')} as at the origin ({ref.get('l2')})")
            # The exact change: the monopole's e^{ikr} / (4 pi r) at the same k r scales as 1/R;
            # the scattered plane wave exp(i k d.x), d = (0, 0, 1), takes its phase at the shift,
            # and the soft body's unknown, q = du/dn, a derivative, scales as 1/R.
            if "radiation" in name:
                factor = 1.0 / radius
            else:
                factor = cmath.exp(1j * k * centre[2]) / (radius if "soft" in name else 1.0)
            diff = math.sqrt(sum(abs(a / factor - b) ** 2 for a, b in zip(u, u0)) /
                             sum(abs(b) ** 2 for b in u0))
            delta = eps * math.hypot(*centre) / (h * radius)
            # The FMM's tree is cut afresh for the moved body: its MatMult error (-fmm_eps 1e-8)
            # bounds the difference instead.
            tol = 1e-6 if fmm else 20 * delta + 1e-10
            check(diff <= tol and r["its"] <= ref["its"] + 2,
                  f"{name}: radius {radius:g} at {offset:g}: solution equal to {diff:.2e} "
                  f"(tolerance {tol:.1e}), {r['its']} iterations against {ref['its']}")


def case_field():
    # The field off the surface and the far field from the solved surface values,
    # against the Mie series. The surface solution converges as h^2 at the collocation points
    # (the cases above), and the representation formula integrates it with an O(h^2) error at a
    # fixed distance from the surface (tests/unit/field: O(h) only at a fixed fraction of h), so
    # the field's error must fall by about 4 per level: required > 3.5 at r = 1.5 and for the
    # far field, > 3 at r = 1.05 (within one element size of the surface on every level: h =
    # 0.33, 0.17, 0.083; 0.15 h to 0.6 h away, where the O(h) part still shows on icosphere:2).
    # Measured 3.95 to 4.8.
    import math
    pts = os.path.join(WORK, "points.csv")
    golden = math.pi * (3 - math.sqrt(5))
    shells = {"near": 1.05, "away": 1.5, "inside": 0.5}
    with open(pts, "w") as f:
        f.write("x,y,z\n")
        for r in shells.values():
            for i in range(100 if r > 1 else 20):
                n = 100 if r > 1 else 20
                z = 1 - 2 * (i + 0.5) / n
                rho = math.sqrt(1 - z * z)
                f.write("%.17g,%.17g,%.17g\n" % (rho * math.cos(golden * i) * r,
                                                  rho * math.sin(golden * i) * r, z * r))
        f.write("0,0,0\n")

    def subset_error(rows):
        num = sum((r["scattered_re"] - r["exact_re"]) ** 2 + (r["scattered_im"] - r["exact_im"]) ** 2
                  for r in rows)
        den = sum(r["exact_re"] ** 2 + r["exact_im"] ** 2 for r in rows)
        return math.sqrt(num / den)

    for bc in ("neumann", "dirichlet"):
        errors = []
        for level in (2, 3, 4):
            out = os.path.join(WORK, f"field_{bc}_{level}.csv")
            far = os.path.join(WORK, f"far_{bc}_{level}.csv")
            r = summary(["-mesh", f"icosphere:{level}", "-k", "4", "-bem_bc", bc, "-bem_field", pts,
                         "-bem_field_csv", out, "-bem_farfield", "36", "-bem_farfield_csv", far])
            check("200 outside, 0 on the surface, 21 inside the body" in r["out"],
                  f"{bc}, icosphere:{level}: 200 points outside, the 21 inside flagged")
            rows = read_csv_table(out)
            check(len(rows) == 221, "the field CSV has a row per point")
            inside = [row for row in rows if row["location"] == 2]
            check(len(inside) == 21 and all(math.isnan(row["total_abs"]) and
                                             math.isnan(row["scattered_re"]) for row in inside),
                  "inside points: location 2 and NaN values")
            near = [row for row in rows if abs(math.hypot(row["x"], row["y"], row["z"]) - 1.05) < 1e-9]
            away = [row for row in rows if abs(math.hypot(row["x"], row["y"], row["z"]) - 1.5) < 1e-9]
            m = re.search(r"field error +relative L2 = (\S+),", r["out"])
            fe = re.search(r"farfield error +relative L2 = (\S+),", r["out"])
            check(m is not None and fe is not None, "the summary gives the field and far-field errors")
            farrows = read_csv_table(far)
            check(len(farrows) == 36 and farrows[9]["angle_deg"] == 90.0, "36 far-field directions")
            ts = max(abs(row["TS_dB"] - row["exact_TS_dB"]) for row in farrows)
            errors.append((subset_error(near), subset_error(away), float(fe.group(1)), ts))
        for (a, b) in zip(errors, errors[1:]):
            check(a[0] / b[0] > 3, f"{bc}: field error at r = 1.05 {a[0]:.3e} -> {b[0]:.3e}")
            check(a[1] / b[1] > 3.5, f"{bc}: field error at r = 1.5 {a[1]:.3e} -> {b[1]:.3e}")
            check(a[2] / b[2] > 3.5, f"{bc}: far-field error {a[2]:.3e} -> {b[2]:.3e}")
        check(errors[-1][3] < 0.1, f"{bc}: icosphere:4 target strength within {errors[-1][3]:.3f} dB"
              " of the Mie series (< 0.1 dB)")
    # The plane: a structured grid (.vts) and its CSV; on 2 ranks the same numbers (rank 0
    # evaluates the field from the gathered solution; the solve's reductions differ by rounding).
    base = ["-mesh", "icosphere:3", "-k", "4", "-ksp_rtol", "1e-10", "-bem_formulation", "bm",
            "-bem_field_plane", "-2,0.01,-2,4,0,0,0,0,4,21,11"]
    one, two = os.path.join(WORK, "plane1.csv"), os.path.join(WORK, "plane2.csv")
    vts = os.path.join(WORK, "plane.vts")
    r = summary(base + ["-bem_field_csv", one, "-bem_field_vtk", vts])
    check("plane 21 x 11" in r["out"] and "231 points" in r["out"], "the plane's 231 points")
    summary(base + ["-bem_field_csv", two], mpi=2)
    a, b = read_csv_table(one), read_csv_table(two)
    d = max(abs(x["total_abs"] - y["total_abs"]) for x, y in zip(a, b) if x["location"] != 2)
    check(d < 1e-8, f"mpiexec -n 2 gives the -n 1 field (max diff {d:.1e})")
    check(a[0]["x"] == -2 and a[20]["x"] == 2 and a[21]["z"] == -1.6, "plane points: i fastest")
    text = open(vts, "rb").read()
    check(text.startswith(b'<VTKFile type="StructuredGrid"') and
          b'WholeExtent="0 20 0 10 0 0"' in text, "the .vts is a 21 x 11 structured grid")
    for name in (b"location", b"scattered_abs", b"total_re", b"spl_dB_re1", b"error_abs"):
        check(name in text, f"the .vts holds point array {name.decode()}")
    # Radiation: the monopole is the exact field on any closed surface.
    r = summary(["-mesh", "icosphere:3", "-k", "2", "-bem_problem", "radiation",
                 "-bem_source", "0.2,0.1,-0.1", "-bem_field", pts, "-bem_farfield", "8",
                 "-bem_farfield_sphere"])
    fe = re.search(r"field error +relative L2 = (\S+),", r["out"])
    # Within the surface solution's own error level on icosphere:3 (1e-2: 8.7e-3 for the rigid
    # sphere at k = 4 above).
    check("monopole" in r["out"] and fe and float(fe.group(1)) < 1e-2,
          f"radiation: field error against the monopole {fe.group(1) if fe else '?'} (< 1e-2)")
    check("8 directions of a Fibonacci sphere" in r["out"], "-bem_farfield_sphere")
    # -bem_field_velocity: v = grad p / (i omega rho) (c = 343 m/s, rho = 1.204 kg/m^3 unless
    # given). Radiation by the monopole: against its exact gradient G (ik - 1/r) rhat / (i omega
    # rho) at r = 1.5, converging as the field does at a fixed distance, O(h^2): > 3.5 a level.
    k, c, rho, s = 2.0, 343.0, 1.204, (0.2, 0.1, -0.1)
    errors = []
    for level in (2, 3, 4):
        out = os.path.join(WORK, f"velocity_{level}.csv")
        r = summary(["-mesh", f"icosphere:{level}", "-k", str(k), "-bem_problem", "radiation",
                     "-bem_source", "%r,%r,%r" % s, "-bem_field", pts, "-bem_field_csv", out,
                     "-bem_field_velocity"])
        num = den = 0.0
        for row in read_csv_table(out):
            x = (row["x"], row["y"], row["z"])
            if abs(math.hypot(*x) - 1.5) > 1e-9:
                continue
            d = [x[a] - s[a] for a in range(3)]
            dist = math.hypot(*d)
            g = cmath.exp(1j * k * dist) / (4 * math.pi * dist)
            for a, name in enumerate("xyz"):
                exact = g * (1j * k - 1 / dist) * d[a] / dist / (1j * k * c * rho)
                got = complex(row[f"velocity_{name}_re"], row[f"velocity_{name}_im"])
                num += abs(got - exact) ** 2
                den += abs(exact) ** 2
        errors.append(math.sqrt(num / den))
        check("field velocity  v = grad p / (i omega rho), rho = 1.204 kg/m^3" in r["out"],
              "the summary names the velocity's medium")
    check(errors[0] / errors[1] > 3.5 and errors[1] / errors[2] > 3.5 and errors[2] < 1e-2,
          f"radiation: the velocity against the monopole's at r = 1.5: {errors[0]:.2e} -> "
          f"{errors[1]:.2e} -> {errors[2]:.2e}")
    # Scattering: the velocity of the total field (incident included) is the derivative of the
    # total pressure the same run writes: central differences over points 1e-5 apart (17 digits
    # a value: 1e-11 / 1e-5 of rounding, (k delta)^2 / 6 of truncation) to 1e-5 relative; the
    # medium's density and sound speed as given.
    delta, c, rho = 1e-5, 1500.0, 1000.0
    fd_points = os.path.join(WORK, "fd_points.csv")
    centres = [(1.3, 0.2, -0.4), (0.1, -1.6, 0.5), (-0.9, 0.8, 1.1)]
    with open(fd_points, "w") as f:
        for x in centres:
            f.write("%.17g,%.17g,%.17g\n" % x)
            for a in range(3):
                for sign in (1, -1):
                    y = list(x)
                    y[a] += sign * delta
                    f.write("%.17g,%.17g,%.17g\n" % tuple(y))
    out = os.path.join(WORK, "velocity_fd.csv")
    summary(["-mesh", "icosphere:3", "-bem_frequency", str(4 * c / (2 * math.pi)),
             "-bem_sound_speed", str(c), "-bem_density", str(rho), "-bem_field", fd_points,
             "-bem_field_csv", out, "-bem_field_velocity"])
    rows = read_csv_table(out)
    worst = 0.0
    omega = 4.0 * c
    for i in range(len(centres)):
        block = rows[7 * i:7 * i + 7]
        for a, name in enumerate("xyz"):
            p_plus = complex(block[1 + 2 * a]["total_re"], block[1 + 2 * a]["total_im"])
            p_minus = complex(block[2 + 2 * a]["total_re"], block[2 + 2 * a]["total_im"])
            fd = (p_plus - p_minus) / (2 * delta) / (1j * omega * rho)
            got = complex(block[0][f"velocity_{name}_re"], block[0][f"velocity_{name}_im"])
            worst = max(worst, abs(got - fd) / abs(fd))
    check(worst < 1e-5, f"scattering: the velocity is grad (total pressure) / (i omega rho) "
                        f"({worst:.1e})")
    # Refused: without field points, at k = 0.
    p = run(["-mesh", "icosphere:2", "-k", "1", "-bem_field_velocity"], expect_ok=False)
    check(p.returncode == 1 and "-bem_field_velocity needs field points" in p.stderr,
          "-bem_field_velocity without field points: refused")
    p = run(["-mesh", "icosphere:2", "-k", "0", "-bem_field", pts, "-bem_field_velocity"],
            expect_ok=False)
    check(p.returncode == 1 and "needs k > 0" in p.stderr, "-bem_field_velocity at k = 0: refused")


def case_field_gmsh():
    # Field points from a Gmsh mesh: a meshed rectangle through the sphere, shown as triangles.
    geo = os.path.join(WORK, "plane.geo")
    open(geo, "w").write('SetFactory("OpenCASCADE");\nRectangle(1) = {-2, -2, 0.01, 4, 4};\n'
                         "Mesh.MeshSizeMax = 0.25;\n")
    msh = os.path.join(WORK, "plane.msh")
    subprocess.run(["gmsh", "-2", geo, "-format", "msh41", "-o", msh, "-v", "0"], check=True)
    vtu = os.path.join(WORK, "plane.vtu")
    r = summary(["-mesh", "icosphere:3", "-k", "2", "-bem_field", msh, "-bem_field_vtk", vtu])
    m = re.search(r"\(Gmsh: (\d+) nodes, (\d+) triangles\): (\d+) points, (\d+) outside, (\d+) "
                  r"on the surface, (\d+) inside", r["out"])
    check(m is not None and int(m.group(1)) == int(m.group(3)) and int(m.group(6)) > 0,
          "a Gmsh plane: its nodes are the points, its triangles the cells, some inside")
    text = open(vtu, "rb").read()
    check(b'type="UnstructuredGrid"' in text and (b'NumberOfCells="%s"' % m.group(2).encode()) in text,
          "the .vtu holds the plane's triangles")
    fe = re.search(r"field error +relative L2 = (\S+),", r["out"])
    check(fe and float(fe.group(1)) < 5e-2, "and the field error against the Mie series is printed")


def case_surface_groups():
    # Boundary conditions on the mesh's surface groups, in SI units (README, Surface groups).
    mesh = lambda name: os.path.join(SRC, "meshes", name)
    field_error = lambda out: float(re.search(r"field error +relative L2 = (\S+),", out).group(1))
    # A vibrating cap (half-angle 30 degrees, v = 1 mm/s) on a rigid unit sphere against the
    # exact series, on the surface and at points 1 m off it (r = 2), at three frequencies. The
    # meshes halve h a level and follow the cap's circle, so the error is the discretisation's
    # and falls like h^2 (4 a level, as the icosphere cases); 2.5 leaves room for the coarse
    # level (measured ratios below, in the output).
    points = sphere_points_csv(os.path.join(WORK, "sphere_r2.csv"), 40, 2.0)
    for hz, levels in [(50, (1, 2, 3)), (150, (1, 2)), (300, (1, 2))]:
        res = [summary(["-mesh", mesh(f"sphere_cap_{L}.msh"), "-bem_frequency", str(hz),
                        "-bem_velocity", "cap:1e-3", "-bem_field", points]) for L in levels]
        for r in res:
            check("vibrating cap series" in r["out"], f"{hz} Hz: the cap's exact series is used")
        for a, b in zip(res, res[1:]):
            check(a["l2"] / b["l2"] > 2.5,
                  f"cap at {hz} Hz: surface L2 error {a['l2']:.3e} -> {b['l2']:.3e} falls by > 2.5")
            fa, fb = field_error(a["out"]), field_error(b["out"])
            check(fa / fb > 2.5, f"cap at {hz} Hz: field error at r = 2 {fa:.3e} -> {fb:.3e}")
    # The regularised formulation on the surface groups: the cap at 300 Hz, levels 2 and 3 (its
    # rows all u-unknown: velocity and rigid). Measured 2026-12-02: rbm 9 and 9 iterations, error
    # 7.66e-3 and 1.97e-3 (bm 11 and 13, 7.86e-3 and 2.23e-3): falling by > 2.5 and within 1.1
    # times bm's.
    cap_runs = {form: [summary(["-mesh", mesh(f"sphere_cap_{L}.msh"), "-bem_frequency", "300",
                                "-bem_velocity", "cap:1e-3", "-bem_formulation", form])
                       for L in (2, 3)] for form in ("bm", "rbm")}
    rb, bb = cap_runs["rbm"], cap_runs["bm"]
    check(rb[0]["l2"] / rb[1]["l2"] > 2.5 and all(r["l2"] < 1.1 * b["l2"] for r, b in zip(rb, bb))
          and rb[1]["its"] <= rb[0]["its"] + 1,
          f"cap at 300 Hz, rbm: L2 error {rb[0]['l2']:.3e} -> {rb[1]['l2']:.3e} (bm "
          f"{bb[0]['l2']:.3e} -> {bb[1]['l2']:.3e}), {rb[0]['its']} and {rb[1]['its']} iterations")
    # The surface's units: v_n on the cap is the given 1 mm/s, on the rest 0; p in Pa.
    csv = os.path.join(WORK, "cap.csv")
    r = summary(["-mesh", mesh("sphere_cap_1.msh"), "-bem_frequency", "100", "-bem_velocity",
                 "cap:1e-3", "-bem_csv", csv, "-o", os.path.join(WORK, "cap.vtu")])
    rows = read_csv_table(csv)
    cap = [row for row in rows if row["group"] == 1]
    rest = [row for row in rows if row["group"] == 2]
    check(len(cap) == 52 and len(rest) == 546 and
          all(abs(row["vn_re"] - 1e-3) < 1e-15 and abs(row["vn_im"]) < 1e-15 for row in cap) and
          all(abs(row["vn_re"]) < 1e-15 for row in rest),
          "CSV: group tags, v_n = 1e-3 m/s on the cap and 0 on the rest")
    check(all(abs(row["spl_db"] - 20 * math.log10(row["p_abs"] / 2 ** 0.5 / 2e-5)) < 1e-9
              for row in rows), "CSV: SPL of the rms pressure re 20 uPa")
    check("group 'cap' (tag 1): 52 elements" in r["out"], "the summary lists the groups")
    # An incident wave adds to the vibrating surface's field: the problem is linear, so the cap
    # in a plane wave is the cap alone plus the rigid sphere's scattering, to the solver's
    # tolerance (-ksp_rtol 1e-9: each solution within about that times the conditioning).
    parts = {}
    for label, extra in [("both", ["-bem_velocity", "cap:1e-3", "-bem_incident", "planewave",
                                   "-bem_incident_dir", "1,0,1"]),
                         ("cap", ["-bem_velocity", "cap:1e-3"]),
                         ("wave", ["-bem_default_condition", "rigid", "-bem_incident_dir",
                                   "1,0,1"])]:
        csv = os.path.join(WORK, f"superposition_{label}.csv")
        summary(["-mesh", mesh("sphere_cap_1.msh"), "-bem_frequency", "120", "-ksp_rtol", "1e-9",
                 "-bem_csv", csv] + extra)
        parts[label] = [complex(row["p_re"], row["p_im"]) for row in read_csv_table(csv)]
    total = [a + b for a, b in zip(parts["cap"], parts["wave"])]
    diff = (sum(abs(x - y) ** 2 for x, y in zip(parts["both"], total)) /
            sum(abs(y) ** 2 for y in total)) ** 0.5
    check(diff < 1e-7, f"cap in a plane wave = cap alone + rigid scattering ({diff:.2e})")
    # A sphere of uniform admittance in a plane wave against its series: matched (B = 1), a
    # complex B, and B from a table over frequency (icosphere: no groups, the default condition).
    table = os.path.join(WORK, "admittance.csv")
    with open(table, "w") as f:
        f.write("frequency_hz,re,im\n50,0.2,0.1\n150,0.6,-0.3\n")
    for extra, label in [(["-k", "2", "-bem_default_condition", "admittance:1"], "B = 1"),
                         (["-k", "2", "-bem_default_condition", "admittance:0.5+0.8i"],
                          "B = 0.5+0.8i"),
                         (["-bem_frequency", "100", "-bem_default_condition",
                           "admittance:" + table], "B from a table (0.4-0.1i at 100 Hz)")]:
        res = refinement(extra + ["-bem_incident", "planewave"], (2, 3, 4), 2.5,
                         "admittance sphere, " + label)
        check("admittance sphere series" in res[0]["out"], label + ": against its series")
    # The limits are the existing problems: B = 0 and pressure 0 give the rigid and soft errors.
    for condition, bc in [("rigid", "neumann"), ("pressure:0", "dirichlet")]:
        a = summary(["-mesh", "icosphere:3", "-k", "2", "-bem_default_condition", condition,
                     "-bem_incident", "planewave"])
        b = summary(["-mesh", "icosphere:3", "-k", "2", "-bem_bc", bc])
        check(abs(a["l2"] - b["l2"]) < 1e-6 * b["l2"] + 1e-9,
              f"default {condition} with a plane wave is -bem_bc {bc}: {a['l2']:.6e} / {b['l2']:.6e}")
    # Mixed groups on 1, 2 and 3 ranks, distributed and not: the same surface pressure to the
    # solver's tolerance (-ksp_rtol 1e-8: the solutions differ by rounding and that tolerance
    # times the condition number, measured 1e-8 to 1e-7). bm, whose near-field preconditioners
    # are tried too; the default rbm below.
    ear = ["-mesh", mesh("sphere_ear.msh"), "-bem_frequency", "400", "-bem_velocity",
           "left_ear:2e-3", "-bem_admittance", "skin:0.3+0.1i", "-ksp_rtol", "1e-8"]
    ear_bm = ear + ["-bem_formulation", "bm"]
    reference = None
    # The near-field preconditioners on the mixed rows too: the leaf blocks with the full
    # entries, and PETSc's ILU on the assembled near-field matrix.
    for index, (ranks, extra) in enumerate([
            (1, []), (2, []), (3, []), (2, ["-fmm_distribute", "false"]),
            (1, ["-bem_pc_block_entries", "full"]), (1, ["-pc_type", "ilu"])]):
        csv = os.path.join(WORK, f"ear_{index}.csv")
        summary(ear_bm + extra + ["-bem_csv", csv], mpi=ranks if ranks > 1 else 0)
        p = [complex(row["p_re"], row["p_im"]) for row in read_csv_table(csv)]
        if reference is None:
            reference = p
            continue
        diff = pressure_diff(p, reference)
        check(diff < 1e-6, f"bm, {ranks} ranks {' '.join(extra)}: p equals 1 rank's ({diff:.2e})")
    # The default rbm on the mixed rows (its shared tree is the mpi case's): distributed, S~
    # takes the operator's 6-point rule where one rank takes the centroid rule, another
    # consistent discretisation of the same equation: it may move p by the discretisation's
    # residual, so it must stay closer to 1 rank's than bm's solution (the other formulation,
    # another such discretisation) is.
    rbm = {}
    for ranks in (1, 2):
        csv = os.path.join(WORK, f"ear_rbm_{ranks}.csv")
        summary(ear + ["-bem_csv", csv], mpi=ranks if ranks > 1 else 0)
        rbm[ranks] = [complex(row["p_re"], row["p_im"]) for row in read_csv_table(csv)]
    distributed, formulations = pressure_diff(rbm[2], rbm[1]), pressure_diff(reference, rbm[1])
    check(distributed < formulations,
          f"rbm, 2 ranks distributed: p within {distributed:.2e} of 1 rank's, closer than bm's "
          f"({formulations:.2e})")
    # Bad input: one line, exit 1, no file written.
    out = os.path.join(WORK, "bad.vtu")
    bad_table = lambda name, text: (open(os.path.join(WORK, name), "w").write(text),
                                    os.path.join(WORK, name))[1]
    nan_table = bad_table("nan.csv", "50,1,0\n100,nan,0\n")
    unsorted = bad_table("unsorted.csv", "100,1,0\n50,1,0\n")
    words = bad_table("words.csv", "frequency_hz,re,im\n50,one,0\n")
    negative = bad_table("negative.csv", "-50,1,0\n50,1,0\n")
    short = bad_table("short.csv", "50,1,0\n60,1,0\n")
    cap1 = ["-mesh", mesh("sphere_cap_1.msh"), "-bem_frequency", "100", "-o", out]
    for args, needle in [
            (cap1 + ["-bem_velocity", "lid:1"], "'lid' is not a surface group"),
            (["-mesh", "icosphere:2", "-k", "1", "-bem_velocity", "cap:1", "-o", out],
             "has no physical groups"),
            (["-mesh", mesh("sphere_ear.msh"), "-k", "1", "-bem_rigid", "air", "-o", out],
             "dimension 3"),
            (cap1 + ["-bem_velocity", "cap:1", "-bem_pressure", "1:0"], "given two conditions"),
            (cap1 + ["-bem_velocity", "cap:1,cap:2"], "two conditions"),
            (cap1 + ["-bem_velocity", "cap:" + nan_table], "nan.csv"),
            (cap1 + ["-bem_velocity", "cap:" + unsorted], "unsorted.csv"),
            (cap1 + ["-bem_velocity", "cap:" + words], "words.csv"),
            (cap1 + ["-bem_velocity", "cap:" + negative], "negative.csv"),
            (cap1 + ["-bem_velocity", "cap:" + short], "group 'cap'"),
            (cap1 + ["-bem_impedance", "cap:0"], "pressure"),
            (cap1 + ["-bem_velocity", "cap"], "-bem_velocity"),
            (["-mesh", mesh("sphere_cap_1.msh"), "-k", "0", "-bem_velocity", "cap:1", "-o", out],
             "frequency above 0"),
            (cap1 + ["-bem_velocity", "cap:1", "-bem_bc", "dirichlet"], "-bem_bc"),
            (cap1 + ["-bem_velocity", "cap:1", "-bem_problem", "radiation"], "radiation")]:
        p = run(args, expect_ok=False)
        ours = [l for l in p.stderr.split("\n") if "error" in l]
        check(p.returncode == 1 and len(ours) == 1 and needle in ours[0] and
              not os.path.exists(out),
              f"{' '.join(args[4:])} -> exit {p.returncode}, one line with '{needle}': {ours}")


def case_sweep():
    # One run solves every k of a sweep, building the mesh, its discretisation and the
    # field points' geometry once. Each k's solve is the single-k solve (the same operations on
    # the same data: the FMM, correction, right-hand side and KSP are built per k exactly as a
    # single run builds them), so the numbers must be bitwise equal: the surface and far-field
    # CSVs (17 significant digits) byte for byte, iterations and printed errors as text.
    import math
    ico = ["-mesh", "icosphere:3", "-bem_farfield", "8",
           "-bem_field_plane", "-2,0.01,-2,4,0,0,0,0,4,7,5"]
    ks = ["2", "3", "4"]
    sweep_csv = os.path.join(WORK, "sweep.csv")
    surface = os.path.join(WORK, "u.csv")
    far = os.path.join(WORK, "far.csv")
    field = os.path.join(WORK, "plane.csv")
    p = run(ico + ["-k", "2:4:1", "-bem_csv", surface, "-bem_farfield_csv", far,
                   "-bem_field_csv", field, "-bem_sweep_csv", sweep_csv])
    blocks = p.stdout.split("fmbem bem_solve summary")[1:]
    check(len(blocks) == 3 and all(f"k {i + 1} of 3" in b for i, b in enumerate(blocks)),
          "-k 2:4:1: three summaries, numbered")
    progress = [l for l in p.stderr.split("\n") if l.startswith("bem_solve: k = ")]
    check(len(progress) == 3 and "(3 of 3)" in progress[2], "a progress line per k on stderr")
    check(not os.path.exists(surface) and not os.path.exists(far),
          "a sweep writes numbered files only")
    table = read_csv_table(sweep_csv)
    check([r["k"] for r in table] == [2.0, 3.0, 4.0] and all(r["converged"] == 1 for r in table),
          "the sweep CSV: a row per k, each converged")
    check("sweep           3 wavenumbers" in p.stdout, "the summary ends with the sweep table")
    for i, k in enumerate(ks):
        tag = "_k%04d" % (i + 1)
        single = [os.path.join(WORK, f"single_{name}_{k}.csv") for name in ("u", "far", "plane")]
        r = summary(ico + ["-k", k, "-bem_csv", single[0], "-bem_farfield_csv", single[1],
                           "-bem_field_csv", single[2]])
        block = blocks[i]
        for name, path in zip(("u", "far", "plane"), single):
            swept = os.path.join(WORK, name + tag + ".csv")
            check(os.path.exists(swept) and open(swept).read() == open(path).read(),
                  f"k = {k}: {name}{tag}.csv equals the single run's byte for byte")
        its = re.search(r"solver\s+(\d+) iterations", block)
        err = re.search(r"max \|\w - exact\| = (\S+), relative L2 = (\S+)", block)
        check(its and int(its.group(1)) == r["its"] == table[i]["iterations"],
              f"k = {k}: {r['its']} iterations, as the single run")
        check(err and float(err.group(2)) == r["l2"] and float(err.group(1)) == r["max"],
              f"k = {k}: the error {r['l2']:.3e} equals the single run's")
        # The CSV has 17 digits, the summary 4: equal within half a unit of the 4th digit.
        check(abs(table[i]["error_rel_l2"] - r["l2"]) <= 5e-4 * r["l2"] and
              abs(table[i]["error_max"] - r["max"]) <= 5e-4 * r["max"],
              f"k = {k}: the sweep CSV's errors are the summary's")
        check(re.search(r"^\s+\d+\s+%s\s+%d\s+CONVERGED" % (k, r["its"]), p.stdout, re.M),
              f"k = {k}: the table's line")
    # Frequencies: k = 2 pi f / c, the frequency column in both tables.
    sweep_f = os.path.join(WORK, "sweep_f.csv")
    p = run(["-mesh", "icosphere:2", "-bem_frequency", "50,100", "-bem_sound_speed", "340",
             "-bem_sweep_csv", sweep_f])
    rows = read_csv_table(sweep_f)
    want = [2 * math.pi * f / 340 for f in (50, 100)]
    check([r["frequency_hz"] for r in rows] == [50.0, 100.0] and
          all(abs(r["k"] - w) <= 1e-15 * w for r, w in zip(rows, want)),
          "-bem_frequency 50,100 -bem_sound_speed 340: k = 2 pi f / c in the CSV")
    check("f (Hz)" in p.stdout and "k = 0.923998" in p.stdout, "and in the summary")
    # A k whose solve fails (icosphere:2 needs 4 and 5 iterations at k = 1 and 2) gets its error
    # line and no file; the sweep goes on and exits 2.
    failed = os.path.join(WORK, "failed.csv")
    p = run(["-mesh", "icosphere:2", "-k", "1,2", "-ksp_max_it", "3", "-bem_csv", failed],
            expect_ok=False)
    errors = [l for l in p.stderr.split("\n") if l.startswith("bem_solve: error:")]
    check(p.returncode == 2 and len(errors) == 2 and "at k = 2: DIVERGED_ITS" in errors[1] and
          not [f for f in os.listdir(WORK) if f.startswith("failed") or f.startswith(".failed")],
          "failed solves in a sweep: an error line each, no files, exit 2")
    # bm's soft problem carries the curvature correction, k-independent and formed once a sweep:
    # the second k's surface values still equal its single run's byte for byte.
    soft = ["-mesh", "icosphere:2", "-bem_formulation", "bm", "-bem_bc", "dirichlet"]
    run(soft + ["-k", "1,2", "-bem_csv", os.path.join(WORK, "soft.csv")])
    run(soft + ["-k", "2", "-bem_csv", os.path.join(WORK, "soft_single.csv")])
    check(open(os.path.join(WORK, "soft_k0002.csv")).read() ==
          open(os.path.join(WORK, "soft_single.csv")).read(),
          "bm soft sweep: k = 2 equals the single run byte for byte (the curvature correction "
          "shared)")
    # One k keeps today's summary, files and no table.
    one = os.path.join(WORK, "one.csv")
    p = run(["-mesh", "icosphere:2", "-k", "2", "-bem_csv", one, "-bem_sweep_csv", sweep_f])
    check("summary, k" not in p.stdout and "sweep  " not in p.stdout and os.path.exists(one)
          and len(read_csv_table(sweep_f)) == 1 and "bem_solve: k =" not in p.stderr,
          "a single k: the plain summary and file names; -bem_sweep_csv has its one row")


def case_mpi_tree():
    mpi_tree()


def case_mpi_distributed():
    # On more than one rank the FMM is partitioned over the ranks (the tree's leaves
    # cut by modelled work along the Morton curve, the elements renumbered part by part, each
    # rank's upward pass its own leaves', the partial multipoles and the densities its lists read
    # exchanged instead of the whole density gathered). The same iterations and error on 1, 2
    # and 3 ranks, the solution equal to the Krylov tolerance's rounding, the files in the user's
    # element order.
    # Point Jacobi: the default leaf blocks are formed from each rank's rows, so their
    # iterations depend on the ranks (tested in leaf_block); Jacobi's do not.
    base = ["-mesh", "icosphere:3", "-k", "6", "-fmm_max_leaf", "30", "-ksp_rtol", "1e-10",
            "-pc_type", "jacobi"]

    def rows(path):
        return [l.split(",") for l in open(path).read().split("\n")[1:] if l]

    runs = {}
    for ranks in (1, 2, 3):
        csv = os.path.join(WORK, f"dist{ranks}.csv")
        r = summary(base + ["-bem_csv", csv, "-o", os.path.join(WORK, f"dist{ranks}.vtu")],
                    mpi=ranks)
        line = f"distributed     tree partitioned over {ranks} ranks"
        check((line in r["out"]) == (ranks > 1),
              f"{ranks} rank(s): the summary {'says' if ranks > 1 else 'does not say'} "
              "the tree is partitioned")
        runs[ranks] = (r, rows(csv))
    r1, rows1 = runs[1]
    for ranks in (2, 3):
        r, rows_p = runs[ranks]
        check(r["its"] == r1["its"], f"{ranks} ranks: {r['its']} iterations, as 1 rank")
        check(abs(r["l2"] - r1["l2"]) < 1e-8 * r1["l2"],
              f"{ranks} ranks: L2 error {r['l2']:.6e}, as 1 rank ({r1['l2']:.6e})")
        check([x[:3] for x in rows_p] == [x[:3] for x in rows1],
              f"{ranks} ranks: the CSV's elements in the user's order (centroids as 1 rank's)")
        d = rel_diff([complex(float(x[3]), float(x[4])) for x in rows_p],
                     [complex(float(x[3]), float(x[4])) for x in rows1])
        check(d < 1e-8, f"{ranks} ranks give the 1-rank solution (rel. diff {d:.1e})")
        # Gathering would move the other ranks' N (P - 1) / P densities to each rank (on this
        # small mesh the near zones reach far: 356 of 640 at P = 2, 730 of 853 at P = 3).
        m = re.search(r"receives at most (\d+) densities", r["out"])
        gathered = r["n"] * (ranks - 1) // ranks
        check(m and int(m.group(1)) < gathered,
              f"{ranks} ranks: a rank reads {m and m.group(1)} remote densities, fewer than the "
              f"{gathered} of a gather")
    # The exchange overlapped with the near field: the same numbers; -log_view times it.
    over = os.path.join(WORK, "overlap.csv")
    r = summary(base + ["-bem_csv", over, "-fmm_overlap", "true", "-log_view"], mpi=2)
    check(r["its"] == r1["its"] and "FMMExchange" in r["out"],
          f"-fmm_overlap on 2 ranks: {r['its']} iterations, as 1 rank; -log_view has FMMExchange")
    d = rel_diff([complex(float(x[3]), float(x[4])) for x in rows(over)],
                 [complex(float(x[3]), float(x[4])) for x in rows1])
    check(d < 1e-8, f"-fmm_overlap gives the 1-rank solution (rel. diff {d:.1e})")
    # The former scheme (whole density gathered, multipoles summed by an allreduce) agrees.
    old = os.path.join(WORK, "gathered.csv")
    r = summary(base + ["-bem_csv", old, "-fmm_distribute", "false"], mpi=2)
    check("distributed " not in r["out"], "-fmm_distribute false: the former scheme")
    d = rel_diff([complex(float(x[3]), float(x[4])) for x in rows(old)],
                 [complex(float(x[3]), float(x[4])) for x in rows1])
    check(d < 1e-8, f"-fmm_distribute false gives the same solution (rel. diff {d:.1e})")
    # Burton-Miller, soft sphere: the quadratic read of the double density (stencils across
    # parts) and the curvature correction of D'.
    bm = ["-mesh", "icosphere:2", "-k", "5", "-bem_formulation", "bm", "-bem_bc", "dirichlet",
          "-ksp_rtol", "1e-10"]
    one, three = os.path.join(WORK, "bm1.csv"), os.path.join(WORK, "bm3.csv")
    summary(bm + ["-bem_csv", one])
    summary(bm + ["-bem_csv", three], mpi=3)
    d = rel_diff(read_csv(three), read_csv(one))
    check(d < 1e-8, f"bm, soft: 3 distributed ranks give the 1-rank solution (rel. diff {d:.1e})")
    # Burton-Miller, rigid sphere, on parts small against the mesh: each rank forms the
    # quadratic read's fits of what its operator reads alone (its FMM's elements, its rows'
    # correction columns and two vertex neighbourhoods around them); the same solution.
    rigid = ["-mesh", "icosphere:4", "-k", "6", "-fmm_max_leaf", "20", "-ksp_rtol", "1e-10",
             "-pc_type", "jacobi"]
    one, four = os.path.join(WORK, "rigid1.csv"), os.path.join(WORK, "rigid4.csv")
    r1 = summary(rigid + ["-bem_csv", one])
    r4 = summary(rigid + ["-bem_csv", four], mpi=4)
    m = re.search(r"the quadratic read's fits: at most (\d+) of the (\d+) elements", r4["out"])
    check(m is not None and int(m.group(1)) < int(m.group(2)) * 3 // 4,
          f"bm, rigid, 4 ranks: a rank fits {m and m.group(1)} of {m and m.group(2)} elements")
    check(r4["its"] == r1["its"], f"bm, rigid, 4 ranks: {r4['its']} iterations, as 1 rank")
    d = rel_diff(read_csv(four), read_csv(one))
    check(d < 1e-8, f"bm, rigid: 4 distributed ranks give the 1-rank solution (rel. diff {d:.1e})")
    # Each rank generates its own slab of the icosphere (no rank holds the whole mesh), and
    # holds its part and the halo its operator reads.
    m = re.search(r"mesh read in slabs, each rank its own; a rank holds at most (\d+) of the "
                  r"(\d+) elements", r4["out"])
    check(m is not None and int(m.group(1)) < int(m.group(2)),
          f"bm, rigid, 4 ranks: a rank holds {m and m.group(1)} of {m and m.group(2)} elements")
    # Feature edges (the shipped cube): Burton-Miller's curvature correction keeps their
    # curvature on the edges, each rank's part holds those about its own elements, and the
    # whole surface's are gathered. Radiation: the monopole is exact, the error the same.
    cube = ["-mesh", os.path.join(SRC, "meshes/cube.msh"), "-k", "3", "-bem_problem",
            "radiation", "-bem_source", "0.1,0.05,-0.1", "-bem_formulation", "bm",
            "-fmm_max_leaf", "30", "-ksp_rtol", "1e-10", "-pc_type", "jacobi"]
    one, three = os.path.join(WORK, "cube1.csv"), os.path.join(WORK, "cube3.csv")
    c1 = summary(cube + ["-bem_csv", one])
    c3 = summary(cube + ["-bem_csv", three], mpi=3)
    check("mesh read on rank 0;" in c3["out"], "bm, cube: 3 ranks, the Gmsh file read on rank 0")
    check("edge curvature" in c3["out"] and c3["its"] == c1["its"] and
          abs(c3["l2"] - c1["l2"]) < 1e-8 * c1["l2"],
          f"bm, cube: 3 distributed ranks, {c3['its']} iterations and L2 error {c3['l2']:.6e} "
          f"as 1 rank ({c1['its']}, {c1['l2']:.6e})")
    d = rel_diff(read_csv(three), read_csv(one))
    check(d < 1e-8, f"bm, cube: 3 distributed ranks give the 1-rank solution (rel. diff {d:.1e})")
    # The field and the far field on rank 0 from the user's mesh and the gathered solution.
    field = ["-mesh", "icosphere:3", "-k", "4", "-ksp_rtol", "1e-10", "-pc_type", "jacobi",
             "-fmm_max_leaf", "30", "-bem_field_plane", "-2,0.01,-2,4,0,0,0,0,4,9,5",
             "-bem_farfield", "12"]
    tables = {}
    for ranks in (1, 3):
        near, far = os.path.join(WORK, f"field{ranks}.csv"), os.path.join(WORK, f"far{ranks}.csv")
        summary(field + ["-bem_field_csv", near, "-bem_farfield_csv", far], mpi=ranks)
        tables[ranks] = (read_csv_table(near), read_csv_table(far))
    d = max(abs(x["total_abs"] - y["total_abs"])
            for x, y in zip(tables[1][0], tables[3][0]) if x["location"] != 2)
    check(len(tables[3][0]) == 45 and d < 1e-8,
          f"3 distributed ranks give the 1-rank field (max diff {d:.1e})")
    d = max(abs(x["TS_dB"] - y["TS_dB"]) for x, y in zip(tables[1][1], tables[3][1]))
    check(len(tables[3][1]) == 12 and d < 1e-8,
          f"3 distributed ranks give the 1-rank far field (max TS diff {d:.1e} dB)")
    p = run(["-mesh", "icosphere:2", "-bem_operator", "direct", "-fmm_distribute", "true"],
            expect_ok=False)
    check(p.returncode == 1 and "-fmm_distribute does not apply" in p.stderr,
          "-fmm_distribute with -bem_operator direct is refused")
    p = run(["-mesh", "icosphere:2", "-fmm_overlap", "true", "-fmm_distribute", "false"],
            expect_ok=False)
    check(p.returncode == 1 and "needs -fmm_distribute true" in p.stderr,
          "-fmm_overlap without -fmm_distribute is refused")


def case_pvtu():
    # -o name.pvtu writes each rank's elements as a piece (name_R.vtu) and rank 0 the
    # summary; the report's error is reduced from each rank's rows; nothing is gathered on rank 0
    # unless an output needs the whole solution. The pieces, read back through VTK's
    # vtkXMLPUnstructuredGridReader (vtk_cells), hold the 1-rank .vtu's cells: every element once
    # (by the "element" array), the same corners, and values within the rank-independence bound of
    # mpi_distributed (GMRES to 1e-10 with point Jacobi: the solutions differ by the rounding of
    # the parallel reductions, < 1e-8 relative).
    base = ["-mesh", "icosphere:3", "-k", "6", "-fmm_max_leaf", "30", "-ksp_rtol", "1e-10",
            "-pc_type", "jacobi"]

    def cells(path):
        p = subprocess.run([VTK_CELLS, path], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"VTK reads {os.path.basename(path)} ({p.stderr.strip()})")
        lines = p.stdout.strip().split("\n")
        header = lines[0].split(",")
        return header, [[float(v) for v in l.split(",")] for l in lines[1:]]

    def error_line(out):
        return re.search(r"error +max .*", out).group(0)

    def scatters(out):
        return int(re.search(r"^VecScatterBegin +(\d+)", out, re.M).group(1))

    one = os.path.join(WORK, "one.vtu")
    r1 = summary(base + ["-o", one])
    header1, rows1 = cells(one)
    n = r1["n"]
    check(len(rows1) == n, f"the 1-rank .vtu has the {n} elements")
    column = {name: i for i, name in enumerate(header1)}
    u1 = [complex(row[column["u_re"]], row[column["u_im"]]) for row in rows1]
    norm_u1 = sum(abs(u) ** 2 for u in u1) ** 0.5
    for ranks in (1, 2, 3):
        name = os.path.join(WORK, f"p{ranks}.pvtu")
        r = summary(base + ["-o", name, "-log_view"], mpi=ranks)
        pieces = [f"p{ranks}_{i}.vtu" for i in range(ranks)]
        check(f"wrote           {name} ({ranks} piece" in r["out"] and
              all(os.path.exists(os.path.join(WORK, p)) for p in pieces),
              f"{ranks} rank(s): the summary and {ranks} piece(s) {', '.join(pieces)}")
        check(error_line(r["out"]) == error_line(r1["out"]),
              f"{ranks} rank(s): the error line from the ranks' rows is the 1-rank gathered one: "
              f"{error_line(r['out'])}")
        matmults = int(re.search(r"\((\d+) MatMults\)", r["out"]).group(1))
        check(scatters(r["out"]) == matmults,
              f"{ranks} rank(s): no gather to rank 0 ({scatters(r['out'])} scatters, the "
              f"MatMults' {matmults})")
        header, rows = cells(name)
        check(header == ["element"] + header1[1:] or header == header1,
              f"{ranks} rank(s): the .pvtu's arrays are the .vtu's ({header[10:]})")
        by_element = {}
        for row in rows:
            by_element.setdefault(int(row[0]), []).append(row)
        check(sorted(by_element) == list(range(n)) and all(len(v) == 1 for v in by_element.values()),
              f"{ranks} rank(s): the pieces hold every element once")
        corners = all(by_element[e][0][1:10] == rows1[e][1:10] for e in range(n))
        check(corners, f"{ranks} rank(s): each element's corners are the .vtu's")
        u = [complex(by_element[e][0][column["u_re"]], by_element[e][0][column["u_im"]])
             for e in range(n)]
        d = rel_diff(u, u1)
        check(d < 1e-8, f"{ranks} rank(s): the pieces' u is the 1-rank .vtu's (rel. diff {d:.1e})")
        # |err_p - err_1| <= |u_p - u_1| element by element: the same bound, relative to |u|.
        derr = sum((by_element[e][0][column["err_abs"]] - rows1[e][column["err_abs"]]) ** 2
                   for e in range(n)) ** 0.5
        check(derr <= 1e-8 * norm_u1,
              f"{ranks} rank(s): err_abs as the .vtu's ({derr / norm_u1:.1e} of |u|)")
    # An output that needs the whole solution gathers it (and the error) on rank 0: two scatters
    # more, and the same error line.
    r = summary(base + ["-o", os.path.join(WORK, "g.pvtu"), "-bem_csv",
                        os.path.join(WORK, "g.csv"), "-log_view"], mpi=2)
    matmults = int(re.search(r"\((\d+) MatMults\)", r["out"]).group(1))
    check(scatters(r["out"]) == matmults + 2 and error_line(r["out"]) == error_line(r1["out"]),
          f"with -bem_csv on 2 ranks: the solution and error gathered ({scatters(r['out'])} "
          f"scatters, {matmults} MatMults), the same error line")
    # A sweep numbers the summaries as every output (_k0001) and the pieces after them.
    sweep = os.path.join(WORK, "s.pvtu")
    run(["-mesh", "icosphere:2", "-k", "1,2", "-o", sweep], mpi=2)
    expected = [f"s_k000{i}{p}" for i in (1, 2) for p in (".pvtu", "_0.vtu", "_1.vtu")]
    check(all(os.path.exists(os.path.join(WORK, f)) for f in expected) and
          not os.path.exists(sweep),
          f"a sweep on 2 ranks writes {', '.join(expected)}")
    for i in (1, 2):
        check(len(cells(os.path.join(WORK, f"s_k000{i}.pvtu"))[1]) == 320,
              f"sweep point {i}: its summary reads back as the 320 elements")
    # Bad outputs: one line before the solve, exit 1, nothing written (also when the failing
    # piece is not rank 0's); a failed solve exits 2 and writes no piece.
    ico = ["-mesh", "icosphere:2"]
    os.makedirs(os.path.join(WORK, "bad_1.vtu"), exist_ok=True)
    for args, needle, status in [
            (["-o", "/nonexistent/x.pvtu"], "/nonexistent", 1),
            (["-o", os.path.join(WORK, "bad.pvtu")], "bad_1.vtu': exists and is not a regular file",
             1),
            (["-o", os.path.join(WORK, "c.pvtu"), "-bem_csv", os.path.join(WORK, "c_1.vtu")],
             "is a piece of -o", 1),
            (["-k", "1,2", "-o", os.path.join(WORK, "c.pvtu"), "-bem_field_plane",
              "-2,0,-2,4,0,0,0,0,4,5,5", "-bem_field_csv", os.path.join(WORK, "c_k0002_0.vtu")],
             "-bem_field_csv", 1),
            (["-o", os.path.join(WORK, "c.pvtu"), "-ksp_max_it", "2"], "DIVERGED_ITS", 2)]:
        p = run(ico + args, expect_ok=False, mpi=2)
        ours = [l for l in p.stderr.split("\n") if l.startswith("bem_solve: error:")]
        check(p.returncode == status and len(ours) == 1 and needle in ours[0],
              f"-o .pvtu on 2 ranks, {' '.join(args[2:]) or args[1]} -> exit {p.returncode}, "
              f"one line with '{needle}': {ours}")
    check(not [f for f in os.listdir(WORK) if f.startswith("c") or f.startswith("bad.")
               or f.startswith(".")], "nothing written, no temporary file left")
    # Names that are not pieces are no clash: another output beside the summary.
    r = summary(ico + ["-k", "1", "-o", os.path.join(WORK, "d.pvtu"), "-bem_csv",
                       os.path.join(WORK, "d_field.vtu")], mpi=2)
    check(os.path.exists(os.path.join(WORK, "d_field.vtu")),
          "-bem_csv d_field.vtu beside -o d.pvtu is not a piece: written")


def case_regularised():
    # The regularised Burton-Miller formulation (-bem_formulation rbm): on the rows where u is
    # unknown CBIE + beta S~ (its normal derivative), S~ the Laplace single layer, no PC.
    import statistics
    # Uniqueness at the zero of j_3 (k = 6.98793, burton_miller's case): the rigid sphere and
    # the Neumann radiation problem stay within 1.5 times the neighbours' median.
    ico3 = ["-mesh", "icosphere:3"]
    zero, around = 6.98793, (6.8, 6.9, 7.1, 7.2)
    for name, args in [("rigid", ["-bem_bc", "neumann"]),
                       ("radiation, Neumann data", ["-bem_problem", "radiation", "-bem_bc",
                                                    "neumann", "-bem_source", "0.4,0.3,-0.3"])]:
        at_zero = summary(ico3 + args + ["-k", str(zero), "-bem_formulation", "rbm"])
        near = statistics.median(
            summary(ico3 + args + ["-k", str(k), "-bem_formulation", "rbm"])["l2"] for k in around)
        check(at_zero["l2"] / near < 1.5,
              f"{name} rbm at the zero of j_3: L2 error {at_zero['l2']:.3e}, "
              f"{at_zero['l2'] / near:.2f} times the neighbours' median {near:.3e} (< 1.5)")
    # The rigid sphere at k = 8 under refinement: rbm's iterations stay flat without a PC, its
    # error within 1.1 times bm's (measured 2026-12-02 on icosphere:3 / 4: rbm 11 / 11
    # iterations, bm 9 / 11 with the leaf blocks and 14 / 19 without a PC; errors 0.92 and 0.94
    # times bm's; to 1.31M in bench/results/bm_regularised.md).
    rbm = [summary(["-mesh", f"icosphere:{L}", "-k", "8", "-bem_formulation", "rbm"])
           for L in (3, 4)]
    bm = [summary(["-mesh", f"icosphere:{L}", "-k", "8", "-bem_formulation", "bm"])
          for L in (3, 4)]
    check("regularised Burton-Miller (rbm), beta = 0+1i" in rbm[0]["out"],
          "the summary names the formulation and beta")
    check(rbm[1]["its"] <= rbm[0]["its"] + 1,
          f"rbm's iterations flat from icosphere:3 to 4: {rbm[0]['its']}, {rbm[1]['its']}")
    for L, r, b in zip((3, 4), rbm, bm):
        check(r["l2"] < 1.1 * b["l2"],
              f"icosphere:{L}: rbm {r['its']} iterations (bm {b['its']} with the leaf blocks), "
              f"L2 error {r['l2']:.3e} within 1.1 times bm's {b['l2']:.3e}")
    # Soft scattering: no row is regularised, so rbm is bm (the same operator and right-hand
    # side; both without a PC: the same iterations and solution).
    soft = ["-mesh", "icosphere:3", "-k", "5", "-bem_bc", "dirichlet", "-ksp_rtol", "1e-10"]
    a_csv, b_csv = os.path.join(WORK, "soft_rbm.csv"), os.path.join(WORK, "soft_bm.csv")
    a = summary(soft + ["-bem_formulation", "rbm", "-bem_csv", a_csv])
    b = summary(soft + ["-bem_formulation", "bm", "-pc_type", "none", "-bem_csv", b_csv])
    d = rel_diff(read_csv(a_csv), read_csv(b_csv))
    check(a["its"] == b["its"] and d < 1e-9,
          f"soft: rbm is bm ({a['its']} / {b['its']} iterations, rel. diff {d:.1e})")
    # Ranks: sharing the tree (3 ranks) gives the 1-rank solve (the regulariser's H x gathered to
    # its columns each MatMult). The distributed FMM (2 ranks) sums S~ with the operator's 6-point
    # rule where one rank takes the centroid rule (its parts are cut from a tree of those points):
    # a change of S~ moves the discrete solution by that change (O(h^2) of S~'s far part) times
    # the discretisation's residual, measured 3.1e-6 on icosphere:3 and 9.9e-7 on icosphere:4
    # (2026-12-02), below the default -ksp_rtol 1e-5: 1e-5 holds it, a wrong gather gives O(1).
    base = ["-mesh", "icosphere:3", "-k", "6", "-bem_formulation", "rbm", "-ksp_rtol", "1e-10"]
    one = os.path.join(WORK, "rbm1.csv")
    r1 = summary(base + ["-bem_csv", one])
    for ranks, extra, bound in ((3, ["-fmm_distribute", "false"], 1e-8), (2, [], 1e-5)):
        path = os.path.join(WORK, f"rbm{ranks}.csv")
        r = summary(base + extra + ["-bem_csv", path], mpi=ranks)
        d = rel_diff(read_csv(path), read_csv(one))
        check(d < bound and abs(r["its"] - r1["its"]) <= 1,
              f"rbm on {ranks} ranks {' '.join(extra)}: the 1-rank solution (rel. diff {d:.1e} < "
              f"{bound:g}, {r['its']} / {r1['its']} iterations)")
    # What it cannot take: a PC (no diagonal, no near-field block), Laplace.
    ico2 = ["-mesh", "icosphere:2", "-k", "4", "-bem_formulation", "rbm"]
    expect_error(ico2 + ["-pc_type", "jacobi"], "no diagonal and no near-field matrix")
    expect_error(ico2 + ["-bem_pc", "leaf_block"], "no near-field block")
    expect_error(ico2 + ["-bem_near_matrix", "on"], "no near-field matrix")
    expect_error(["-mesh", "icosphere:2", "-k", "0", "-bem_formulation", "rbm"], "needs k > 0")


def case_wideband():
    # The wideband FMM: at k D = 24 the level-2 cells are too large for p = 11 at the default
    # -fmm_eps, so they translate in the diagonal form; the solve must be the direct operator's
    # (same iterations, the same error against Mie to the FMM's accuracy, 1e-4 of it).
    base = ["-mesh", "icosphere:4", "-k", "12", "-bem_formulation", "cbie", "-ksp_rtol", "1e-8",
            "-pc_type", "jacobi"]
    fast = summary(base + ["-fmm_view", "-fmm_device", "cpu"])
    check("high-frequency (diagonal) levels 2..2" in fast["out"],
          "k D = 24 at the default -fmm_eps: level 2 in the diagonal form (-fmm_view says so)")
    check("beyond the low-frequency range" not in fast["out"], "and no low-frequency warning")
    direct = summary(base + ["-bem_operator", "direct"])
    check(abs(fast["its"] - direct["its"]) <= 1 and
          abs(fast["l2"] - direct["l2"]) <= 1e-4 * direct["l2"],
          f"the direct operator's solve: {fast['its']} / {direct['its']} iterations, L2 error "
          f"{fast['l2']:.6e} / {direct['l2']:.6e}")
    # Distributed over 2 and 3 ranks: every rank runs the diagonal levels (the conversion level's
    # multipoles summed over the ranks), the same solve as one rank's (point Jacobi: the
    # iterations do not depend on the ranks; the potentials equal to rounding).
    for ranks in (2, 3):
        d = summary(base + ["-fmm_view", "-fmm_device", "cpu"], mpi=ranks)
        check("high-frequency (diagonal) levels 2..2" in d["out"] and
              "beyond the low-frequency range" not in d["out"] and d["its"] == fast["its"] and
              abs(d["l2"] - fast["l2"]) <= 1e-8 * fast["l2"],
              f"the distributed FMM on {ranks} ranks: the diagonal levels, the 1-rank solve "
              f"({d['its']} iterations, L2 error {d['l2']:.6e})")
    shared = summary(base + ["-fmm_distribute", "false"], mpi=2)
    check(shared["its"] == fast["its"] and abs(shared["l2"] - fast["l2"]) <= 1e-8 * fast["l2"],
          f"2 ranks sharing the tree: the 1-rank solve ({shared['its']} iterations, L2 error "
          f"{shared['l2']:.6e})")


def case_sources():
    # Several right-hand sides in one run (README, Several sources): one set-up per k, each
    # source solved apart with it. Each source's solve is a single run's (the same operator,
    # right-hand side and KSP from the same data), so the solutions must be the same numbers:
    # the CSVs (17 significant digits) byte for byte, as the sweep's k are.
    dirs = ["0,0,1", "1,0,0", "0.6,0,-0.8"]
    many = os.path.join(WORK, "dirs.csv")
    out = run(["-mesh", "icosphere:3", "-k", "3", "-bem_incident_dir", ";".join(dirs),
               "-bem_csv", many, "-bem_farfield", "6", "-bem_farfield_csv",
               os.path.join(WORK, "ff.csv")]).stdout
    blocks = source_blocks(out)
    check([b["source"] for b in blocks] == [1, 2, 3] and all(b["of"] == 3 for b in blocks) and
          out.count("fmbem bem_solve summary") == 1,
          "three plane waves: one summary, three source blocks")
    for i, d in enumerate(dirs):
        one = os.path.join(WORK, f"dir{i}.csv")
        single = summary(["-mesh", "icosphere:3", "-k", "3", "-bem_incident_dir", d,
                          "-bem_csv", one, "-bem_farfield", "6", "-bem_farfield_csv",
                          os.path.join(WORK, f"ff{i}.csv")])
        name = lambda base: base[:-4] + f"_s{i + 1:04d}.csv"
        same = (open(name(many)).read() == open(one).read() and
                open(name(os.path.join(WORK, "ff.csv"))).read() ==
                open(os.path.join(WORK, f"ff{i}.csv")).read())
        check(same and blocks[i]["its"] == single["its"] and blocks[i]["l2"] == single["l2"],
              f"plane wave {d}: its surface and far-field CSVs are the single run's byte for byte "
              f"({single['its']} iterations, L2 error {single['l2']:.3e} against Mie)")
    # Generated directions with a sweep: 2 k x 4 directions, outputs _kNNNN_sNNNN, a table row
    # for each (k, source) with the source's number.
    table = os.path.join(WORK, "sources_sweep.csv")
    p = run(["-mesh", "icosphere:2", "-k", "1,2", "-bem_incident_dir", "fibonacci:4",
             "-bem_csv", os.path.join(WORK, "fib.csv"), "-bem_sweep_csv", table])
    rows = read_csv_table(table)
    check(len(rows) == 8 and [int(r["source"]) for r in rows] == [1, 2, 3, 4] * 2 and
          [r["k"] for r in rows] == [1.0] * 4 + [2.0] * 4 and
          all(r["converged"] == 1 and r["error_rel_l2"] < 0.05 for r in rows),
          "sweep of 2 k x 4 Fibonacci directions: 8 rows, each converged against Mie")
    check(all(os.path.exists(os.path.join(WORK, f"fib_k{k:04d}_s{s:04d}.csv"))
              for k in (1, 2) for s in range(1, 5)) and "source 3 of 4" in p.stderr,
          "its files fib_k0001_s0001.csv .. fib_k0002_s0004.csv, progress per source")
    # Point sources outside (scattering) and monopoles inside (radiation, exact on any surface).
    blocks = source_blocks(run(["-mesh", "icosphere:3", "-k", "2", "-bem_incident",
                                "pointsource", "-bem_source", "3,0,0;0,0,-2.5"]).stdout)
    errors = ", ".join("%.3e" % b["l2"] for b in blocks)
    check(len(blocks) == 2 and all(b["l2"] < 0.02 for b in blocks) and
          "point source at 0,0,-2.5" in blocks[1]["label"],
          f"two point sources: each against its own Mie series ({errors})")
    blocks = source_blocks(run(["-mesh", "icosphere:3", "-k", "2", "-bem_problem", "radiation",
                                "-bem_source", "0.1,0,0;0,-0.3,0.2"]).stdout)
    check(len(blocks) == 2 and all(b["l2"] < 0.02 for b in blocks) and
          "monopole at 0,-0.3,0.2" in blocks[1]["block"],
          "two radiating monopoles: each against its own exact field")
    # Distributed over 2 ranks: the same sources' solutions as 1 rank's, to the FMM's rounding.
    two = os.path.join(WORK, "two_ranks.csv")
    run(["-mesh", "icosphere:3", "-k", "3", "-bem_incident_dir", ";".join(dirs[:2]),
         "-bem_csv", two, "-ksp_rtol", "1e-8"], mpi=2)
    run(["-mesh", "icosphere:3", "-k", "3", "-bem_incident_dir", ";".join(dirs[:2]),
         "-bem_csv", many, "-ksp_rtol", "1e-8"])
    for s in (1, 2):
        d = rel_diff(read_csv(two[:-4] + f"_s{s:04d}.csv"), read_csv(many[:-4] + f"_s{s:04d}.csv"))
        # Both solve to 1e-8; the ranks' operator differs from one rank's by rounding and by S~'s
        # rule (README, Parallel runs): far below 1e-5 of the solution.
        check(d < 1e-5, f"2 ranks, source {s}: the 1-rank solution ({d:.2e})")
    # HRTF-style evaluation grids: a Mesh2HRTF grid folder (Nodes.txt, Elements.txt: ids from
    # 200000, as Mesh2HRTF writes them) gives the field of the same points given as CSV, and a
    # generated equiangular sphere at r = 2 the Mie series' field (the surface's accuracy).
    grid = os.path.join(WORK, "m2h_grid")
    os.makedirs(grid, exist_ok=True)
    pts = [(2 * math.sin(t) * math.cos(f), 2 * math.sin(t) * math.sin(f), 2 * math.cos(t))
           for t in (0.3, 1.2, 2.5) for f in (0.0, 2.0, 4.0)]
    with open(os.path.join(grid, "Nodes.txt"), "w") as f:
        f.write(f"{len(pts)}\n" + "".join(f"{200000 + i} {x!r} {y!r} {z!r}\n"
                                          for i, (x, y, z) in enumerate(pts)))
    with open(os.path.join(grid, "Elements.txt"), "w") as f:
        f.write("1\n200000 200000 200001 200002 2 0 1\n")
    with open(os.path.join(WORK, "m2h_points.csv"), "w") as f:
        f.write("".join(f"{x!r},{y!r},{z!r}\n" for x, y, z in pts))
    fields, summaries = {}, {}
    for name, points in [("grid", grid), ("csv", os.path.join(WORK, "m2h_points.csv"))]:
        out = os.path.join(WORK, f"m2h_{name}_field.csv")
        summaries[name] = summary(["-mesh", "icosphere:3", "-k", "2", "-bem_field", points,
                                   "-bem_field_csv", out])["out"]
        fields[name] = [(row["total_re"], row["total_im"]) for row in read_csv_table(out)]
    check("Mesh2HRTF grid: 9 nodes, 1 elements" in summaries["grid"] and
          fields["grid"] == fields["csv"],
          "a Mesh2HRTF grid folder: the field of its nodes, as the same points in CSV")
    r = summary(["-mesh", "icosphere:3", "-k", "2", "-bem_field_sphere", "equiangular:15:2",
                 "-bem_field_csv", os.path.join(WORK, "sphere_field.csv")])
    rows = read_csv_table(os.path.join(WORK, "sphere_field.csv"))
    fe = float(re.search(r"field error +relative L2 = (\S+),", r["out"]).group(1))
    check(len(rows) == 11 * 24 + 2 and all(abs(math.dist((0, 0, 0), (w["x"], w["y"], w["z"])) - 2)
                                            < 1e-12 for w in rows) and fe < 0.02,
          f"an equiangular 15-degree sphere of r = 2: 266 points, field error {fe:.3e} against Mie")
    # Bad lists are refused before any work, naming the option.
    for args, needle in [(["-bem_incident_dir", "0,0,1;"], "an empty entry"),
                         (["-bem_incident_dir", "0,0,1;0,0,0"], "non-zero vector"),
                         (["-bem_incident_dir", "fibonacci:0"], "out of range"),
                         (["-bem_incident", "pointsource", "-bem_source", "3,0,0;0.1,0,0"],
                          "must lie outside the body"),
                         (["-bem_sources", "separate"], "applies to surface groups"),
                         (["-bem_field_reference"], "needs field points"),
                         (["-bem_default_condition", "pressure:1", "-bem_field_sphere",
                           "fibonacci:4:2", "-bem_field_reference"], "driven by a pressure")]:
        p = run(["-mesh", "icosphere:2", "-k", "1", "-bem_csv", os.path.join(WORK, "bad.csv")] +
                args, expect_ok=False)
        check(p.returncode == 1 and needle in p.stderr and "summary" not in p.stdout and
              not any(f.startswith("bad") for f in os.listdir(WORK)),
              f"{' '.join(args)}: refused before any solve ({needle})")


def case_sources_ears():
    # Both ears of a sphere (meshes/sphere_two_ears_N.msh: caps of 20 degrees about +y and -y),
    # each its own source (-bem_sources separate): each ear alone is a vibrating cap on a rigid
    # sphere, exact by its series, on the surface and at points 1 m off it (r = 2). The caps
    # follow their circles, so the error is the discretisation's and falls like h^2 (4 a level;
    # 2.5 leaves room for the coarse level, as the surface-groups case).
    mesh = lambda level: os.path.join(SRC, "meshes", f"sphere_two_ears_{level}.msh")
    points = sphere_points_csv(os.path.join(WORK, "sphere_r2.csv"), 40, 2.0)
    field_errors = lambda out: [float(x) for x in
                                re.findall(r"field error +relative L2 = (\S+),", out)]
    ears = ["-bem_velocity", "left_ear:1e-3,right_ear:2e-3i", "-bem_sources", "separate"]
    errors = {}
    for level in (1, 2):
        out = run(["-mesh", mesh(level), "-bem_frequency", "100,300", "-bem_field", points] +
                  ears).stdout
        for k_index, summary_text in enumerate(out.split("fmbem bem_solve summary")[1:]):
            blocks = source_blocks(summary_text)
            check(len(blocks) == 2 and blocks[0]["label"].startswith("group 'left_ear'") and
                  blocks[1]["label"].startswith("group 'right_ear'") and
                  all("vibrating cap series" in b["block"] for b in blocks),
                  f"level {level}, frequency {k_index + 1}: two ears, each against its cap series")
            for b in blocks:
                errors[(level, k_index, b["source"])] = (b["l2"], field_errors(b["block"])[0])
    for k_index, hz in enumerate((100, 300)):
        for source in (1, 2):
            (a, fa), (b, fb) = errors[(1, k_index, source)], errors[(2, k_index, source)]
            check(a / b > 2.5 and fa / fb > 2.5,
                  f"{hz} Hz, ear {source}: surface error {a:.3e} -> {b:.3e}, field at r = 2 "
                  f"{fa:.3e} -> {fb:.3e}, each falling by > 2.5")
    # Linearity: the ears together (one source) are the sum of the ears apart, to the solver's
    # tolerance (-ksp_rtol 1e-9).
    apart, together = os.path.join(WORK, "apart.csv"), os.path.join(WORK, "together.csv")
    run(["-mesh", mesh(1), "-bem_frequency", "200", "-ksp_rtol", "1e-9", "-bem_csv", apart] +
        ears)
    run(["-mesh", mesh(1), "-bem_frequency", "200", "-ksp_rtol", "1e-9", "-bem_csv", together,
         "-bem_velocity", "left_ear:1e-3,right_ear:2e-3i"])
    pressure = lambda path: [complex(r["p_re"], r["p_im"]) for r in read_csv_table(path)]
    left, right = pressure(apart[:-4] + "_s0001.csv"), pressure(apart[:-4] + "_s0002.csv")
    d = rel_diff([a + b for a, b in zip(left, right)], pressure(together))
    check(d < 1e-7, f"the ears together = left ear + right ear ({d:.2e})")
    # An ear apart is the run with that ear alone (the other rigid): the same numbers.
    alone = os.path.join(WORK, "alone.csv")
    run(["-mesh", mesh(1), "-bem_frequency", "200", "-ksp_rtol", "1e-9", "-bem_csv", alone,
         "-bem_velocity", "right_ear:2e-3i"])
    d = rel_diff(right, pressure(alone))
    check(d < 1e-12, f"the right ear apart = the right ear alone ({d:.1e})")
    # The HRTF's reference (Mesh2HRTF's): each ear's volume velocity Q = v A (A its area, from
    # the summary) as a point source at the origin, p_ref = -i omega rho Q e^{ikr} / (4 pi r);
    # the hrtf columns are the field over it (checked here from the written columns, to the
    # CSV's 17 digits), on a generated Fibonacci sphere of 1 m about the head.
    field_csv = os.path.join(WORK, "hrtf.csv")
    out = run(["-mesh", mesh(1), "-bem_frequency", "200", "-bem_field_sphere", "fibonacci:30:1",
               "-bem_field_reference", "-bem_field_csv", field_csv] + ears).stdout
    omega, rho, c0 = 2 * math.pi * 200, 1.204, 343.0
    # Q as the summary prints it (17 digits; the area there has 6, so v A agrees to 1e-6).
    printed_q = [complex(float(a), float(b)) for a, b in
                 re.findall(r"field reference a point source at 0,0,0 of volume velocity "
                            r"Q = ([-+]?\d[\d.]*(?:e[-+]?\d+)?)([-+]\d[\d.]*(?:e[-+]?\d+)?)i "
                            r"m\^3/s", out)]
    check(len(printed_q) == 2, "the summary gives each ear's reference")
    for source, (name, v) in enumerate([("left_ear", 1e-3), ("right_ear", 2e-3j)], start=1):
        area = float(re.search(rf"group +'{name}' \(tag \d\): \d+ elements, area (\S+),",
                               out).group(1))
        q = printed_q[source - 1]
        check(abs(q - v * area) < 1e-6 * abs(v * area),
              f"ear {source}: Q = {abs(q):.6e} m^3/s is v_n times its area {area}")
        worst = 0.0
        for row in read_csv_table(field_csv[:-4] + f"_s{source:04d}.csv"):
            r = math.dist((0, 0, 0), (row["x"], row["y"], row["z"]))
            ref = -1j * omega * rho * q * cmath.exp(1j * omega / c0 * r) / (4 * math.pi * r)
            got_ref = complex(row["reference_re"], row["reference_im"])
            hrtf = complex(row["hrtf_re"], row["hrtf_im"])
            radiated = complex(row["radiated_re"], row["radiated_im"])
            worst = max(worst, abs(got_ref - ref) / abs(ref),
                        abs(hrtf - radiated / got_ref) / abs(hrtf),
                        abs(row["hrtf_dB"] - 20 * math.log10(abs(hrtf))))
        check(worst < 1e-12 and "volume velocity Q" in out,
              f"ear {source}: the reference of Q = {abs(q):.4e} m^3/s at the origin and the HRTF "
              f"= field / reference ({worst:.1e})")
    # With an incident wave and separate sources: the wave (ears silent) is a source too.
    blocks = source_blocks(run(["-mesh", mesh(1), "-bem_frequency", "200", "-bem_incident_dir",
                                "1,0,0"] + ears).stdout)
    check([b["label"].split(" ")[0] for b in blocks] == ["plane", "group", "group"],
          "a plane wave and two ears: three sources, the wave first")


def case_sofa():
    # The HRTFs of both ears (meshes/sphere_two_ears_1.msh, each ear its own source) at three
    # frequencies on a generated sphere of 1.5 m, in one SimpleFreeFieldHRTF file: sofar (an
    # independent reader, SOFA's rules) verifies it, and its data are the field's hrtf columns
    # (the solved field over the reference) for every position, ear and frequency, its receivers
    # the ears' centres (about +-y on the unit sphere), its source positions the grid's.
    sofa = os.path.join(WORK, "ears.sofa")
    field_csv = os.path.join(WORK, "ears.csv")
    run(["-mesh", os.path.join(SRC, "meshes", "sphere_two_ears_1.msh"), "-bem_frequency",
         "100,200,300", "-bem_velocity", "left_ear:1e-3,right_ear:1e-3", "-bem_sources",
         "separate", "-bem_field_sphere", "equiangular:30:1.5", "-bem_sofa", sofa,
         "-bem_field_csv", field_csv])
    reader = """
import json, sys
import sofar
s = sofar.read_sofa(sys.argv[1], verify=False)
issues = s.verify(issue_handling="return")
print(json.dumps({"issues": issues, "conventions": s.GLOBAL_SOFAConventions,
                  "datatype": s.GLOBAL_DataType, "shape": list(s.Data_Real.shape),
                  "n": s.N.tolist(), "real": s.Data_Real.tolist(), "imag": s.Data_Imag.tolist(),
                  "sources": s.SourcePosition.tolist(),
                  "receivers": s.ReceiverPosition[:, :, 0].tolist()}))
"""

    def sofar_read(path):
        """What sofar reads in the SOFA file at path (the reader above's JSON)."""
        p = subprocess.run([os.environ["SOFAR_PYTHON"], "-c", reader, path], capture_output=True,
                           text=True, timeout=300)
        check(p.returncode == 0, f"sofar reads {os.path.basename(path)} "
                                 f"({p.stderr.strip()[-300:]})")
        return json.loads(p.stdout)
    got = sofar_read(sofa)
    check(got["issues"] is None and got["conventions"] == "SimpleFreeFieldHRTF" and
          got["datatype"] == "TF" and got["shape"] == [62, 2, 3] and
          got["n"] == [100.0, 200.0, 300.0],
          "sofar's verify finds no issue: SimpleFreeFieldHRTF, TF, 62 positions x 2 ears x 3 "
          "frequencies")
    worst = 0.0
    for f in range(3):
        for ear in range(2):
            rows = read_csv_table(field_csv[:-4] + f"_k{f + 1:04d}_s{ear + 1:04d}.csv")
            for m, row in enumerate(rows):
                h = complex(row["hrtf_re"], row["hrtf_im"])
                stored = complex(got["real"][m][ear][f], got["imag"][m][ear][f])
                worst = max(worst, abs(stored - h) / abs(h))
                if f == 0 and ear == 0:
                    az, el, radius = got["sources"][m]
                    x = (radius * math.cos(math.radians(el)) * math.cos(math.radians(az)),
                         radius * math.cos(math.radians(el)) * math.sin(math.radians(az)),
                         radius * math.sin(math.radians(el)))
                    worst = max(worst, math.dist(x, (row["x"], row["y"], row["z"])) / 1.5)
    check(worst < 1e-14, f"its data are the hrtf columns at every position, ear and frequency, "
                         f"its positions the grid's ({worst:.1e})")
    left, right = got["receivers"]
    check(left[1] > 0.9 and right[1] < -0.9 and abs(left[0]) < 0.01 and abs(right[2]) < 0.01,
          f"its receivers are the ears' centres ({left}, {right})")
    # The frequencies split over 2 ranks (-bem_split frequencies, each rank its own solves):
    # rank 0 gathers the same file, its data bit for bit the one-rank run's.
    split = os.path.join(WORK, "ears_split.sofa")
    run(["-mesh", os.path.join(SRC, "meshes", "sphere_two_ears_1.msh"), "-bem_frequency",
         "100,200,300", "-bem_velocity", "left_ear:1e-3,right_ear:1e-3", "-bem_sources",
         "separate", "-bem_field_sphere", "equiangular:30:1.5", "-bem_sofa", split,
         "-bem_split", "frequencies"], mpi=2)
    got_split = sofar_read(split)
    check(got_split["issues"] is None and all(got_split[key] == got[key] for key in
                                              ("real", "imag", "sources", "receivers", "n")),
          "2 ranks with -bem_split frequencies: the same SOFA data, positions and receivers")
    # An incident wave and an ear in one file: refused before any work.
    p = run(["-mesh", os.path.join(SRC, "meshes", "sphere_two_ears_1.msh"), "-bem_frequency",
             "100", "-bem_velocity", "left_ear:1e-3", "-bem_sources", "separate",
             "-bem_incident_dir", "1,0,0", "-bem_field_sphere", "fibonacci:10:1.5", "-bem_sofa",
             os.path.join(WORK, "bad.sofa")], expect_ok=False)
    check(p.returncode == 1 and "one kind of receiver" in p.stderr and
          not os.path.exists(os.path.join(WORK, "bad.sofa")),
          "a plane wave and an ear in one SOFA file: refused before any solve")
    # Incident waves (Mesh2HRTF's plane-wave projects): GeneralTF, verified by sofar; its data the
    # total field over the wave at the centre (the hrtf columns), its receivers the directions.
    general = os.path.join(WORK, "waves.sofa")
    waves_csv = os.path.join(WORK, "waves.csv")
    run(["-mesh", "icosphere:2", "-bem_frequency", "100,200", "-bem_incident_dir",
         "1,0,0;0,0,-2", "-bem_field_sphere", "fibonacci:12:2", "-bem_sofa", general,
         "-bem_field_csv", waves_csv])
    got = sofar_read(general)
    check(got["issues"] is None and got["conventions"] == "GeneralTF" and
          got["shape"] == [12, 2, 2] and got["receivers"] == [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0]],
          "two plane waves: GeneralTF (sofar finds no issue), 12 positions x 2 waves x 2 "
          "frequencies, the receivers the waves' directions")
    worst = 0.0
    for f in range(2):
        for w in range(2):
            rows = read_csv_table(waves_csv[:-4] + f"_k{f + 1:04d}_s{w + 1:04d}.csv")
            for m, row in enumerate(rows):
                total = complex(row["total_re"], row["total_im"])
                h = complex(row["hrtf_re"], row["hrtf_im"])
                stored = complex(got["real"][m][w][f], got["imag"][m][w][f])
                # The reference of a unit plane wave at the origin is 1: hrtf = total.
                worst = max(worst, abs(stored - h) / abs(h), abs(h - total) / abs(total))
    check(worst < 1e-14, f"its data are the total field over the wave at the centre ({worst:.1e})")
    # A rigid ground plane below the head (z = -1.2): the same file with the ground's reflection
    # in the field, its reference the free-field one (the same columns as without the plane, to
    # rounding); a grid reaching below the ground is refused before any solve.
    ground, ground_csv, free_csv = (os.path.join(WORK, n) for n in
                                    ("ground.sofa", "ground.csv", "free.csv"))
    ears = ["-mesh", os.path.join(SRC, "meshes", "sphere_two_ears_1.msh"), "-bem_frequency", "200",
            "-bem_velocity", "left_ear:1e-3,right_ear:1e-3", "-bem_sources", "separate",
            "-bem_field_sphere", "fibonacci:10:1.1"]
    out = run(ears + ["-bem_planes", "z=-1.2:rigid", "-bem_sofa", ground, "-bem_field_csv",
                      ground_csv]).stdout
    run(ears + ["-bem_field_reference", "0,0,0", "-bem_field_csv", free_csv])
    got = sofar_read(ground)
    check("planes          z = -1.2 rigid" in out and got["issues"] is None and
          got["conventions"] == "SimpleFreeFieldHRTF" and got["shape"] == [10, 2, 1],
          "a head above a rigid ground: SimpleFreeFieldHRTF, sofar finds no issue")
    worst_ref, worst_data, moved = 0.0, 0.0, 0.0
    for ear in range(2):
        suffix = f"_s{ear + 1:04d}.csv"
        for m, (g, f) in enumerate(zip(read_csv_table(ground_csv[:-4] + suffix),
                                       read_csv_table(free_csv[:-4] + suffix))):
            ref_g = complex(g["reference_re"], g["reference_im"])
            ref_f = complex(f["reference_re"], f["reference_im"])
            h = complex(g["hrtf_re"], g["hrtf_im"])
            worst_ref = max(worst_ref, abs(ref_g - ref_f) / abs(ref_f))
            worst_data = max(worst_data, abs(complex(got["real"][m][ear][0],
                                                     got["imag"][m][ear][0]) - h) / abs(h))
            moved = max(moved, abs(h - complex(f["hrtf_re"], f["hrtf_im"])) / abs(h))
    check(worst_ref < 1e-14 and worst_data < 1e-14 and moved > 1e-2,
          f"the reference is the free-field one ({worst_ref:.1e}), the data the hrtf columns "
          f"({worst_data:.1e}), the ground's reflection in them (HRTFs moved by {moved:.2f})")
    p = run(ears[:-1] + ["fibonacci:10:1.5", "-bem_planes", "z=-1.2:rigid", "-bem_sofa",
                         os.path.join(WORK, "below.sofa")], expect_ok=False)
    check(p.returncode == 1 and "beyond a reflecting plane" in p.stderr and
          not os.path.exists(os.path.join(WORK, "below.sofa")),
          "a SOFA grid reaching below the ground: refused before any solve")
    # One ear alone is GeneralTF too (Mesh2HRTF's rule: two ears are SimpleFreeFieldHRTF).
    one = os.path.join(WORK, "one_ear.sofa")
    run(["-mesh", os.path.join(SRC, "meshes", "sphere_two_ears_1.msh"), "-bem_frequency", "100",
         "-bem_velocity", "left_ear:1e-3", "-bem_sources", "separate", "-bem_field_sphere",
         "fibonacci:10:1.5", "-bem_sofa", one])
    got = sofar_read(one)
    check(got["issues"] is None and got["conventions"] == "GeneralTF" and
          got["shape"] == [10, 1, 1], "one ear: GeneralTF, sofar finds no issue")


def case_numcalc():
    # NumCalc projects (-bem_numcalc), written here as Mesh2HRTF lays them out
    # (tests/system/numcalc_files.py): the same problem given on our command line gives the same
    # numbers (the written files carry 7 digits, %E: 2e-6 relative), the incident wave's
    # amplitude and the curves' admittance are NC.inp's, and the files parse as Mesh2HRTF's own
    # reader parses NumCalc's.
    import numcalc_files as ncf
    nodes, tris = icosphere_nodes(3)
    grid = ("r2", *icosphere_nodes(1, 2.0))  # 42 evaluation nodes at r = 2
    grid_csv = os.path.join(WORK, "grid.csv")
    with open(grid_csv, "w") as f:
        f.writelines("%.17g,%.17g,%.17g\n" % p for p in grid[1])
    tight = ["-ksp_rtol", "1e-10"]
    # 1. A plane wave of amplitude 0.5-0.25i towards d on the rigid sphere, two frequencies, an
    # evaluation grid: pBoundary and pEvalGrid are the amplitude times the unit wave's solution
    # and field from the command line; the error against Mie's series (scaled by the amplitude)
    # is the command line's; vBoundary is 0 (rigid).
    d = (0.3, 0.4, -math.sqrt(0.75))
    amplitude = 0.5 - 0.25j
    nc = ncf.write_project(os.path.join(WORK, "plane"), nodes, tris, [100.0, 250.0],
                           waves=[("plane", d, amplitude.real, amplitude.imag)], grid=grid)
    out = run(["-bem_numcalc", nc] + tight).stdout
    cli_csv, cli_field = os.path.join(WORK, "cli.csv"), os.path.join(WORK, "cli_field.csv")
    cli = run(["-mesh", "icosphere:3", "-bem_frequency", "100,250", "-bem_incident_dir",
               "%r,%r,%r" % d, "-bem_csv", cli_csv, "-bem_field", grid_csv, "-bem_field_csv",
               cli_field, "-bem_field_velocity"] + tight).stdout
    errors = lambda text: re.findall(r"max \|\w+ - exact\| = \S+, relative L2 = (\S+)", text)
    ours_err, cli_err = errors(out), errors(cli)
    check(len(ours_err) == 2 and all(abs(float(a) / float(b) - 1) < 1e-5
                                     for a, b in zip(ours_err, cli_err)),
          f"the error against Mie's series times the amplitude is the command line's "
          f"({ours_err} / {cli_err})")
    for step in (1, 2):
        ids, p, count = ncf.read_result(be(nc, step, "pBoundary"))
        reference = read_csv(cli_csv[:-4] + f"_k{step:04d}.csv")
        diff = scaled_diff(p, reference, amplitude)
        check(ids == list(range(1280)) and count == 1280 and diff < 2e-6,
              f"step {step}: pBoundary = amplitude x the command line's solution ({diff:.1e})")
        ids, v, count = ncf.read_result(be(nc, step, "vBoundary"))
        check(count == 1280 and max(abs(x) for x in v) == 0, f"step {step}: vBoundary 0 (rigid)")
        ids, pg, count = ncf.read_result(be(nc, step, "pEvalGrid"))
        field = csv_column(cli_field[:-4] + f"_k{step:04d}.csv", "total_re", "total_im")
        diff = scaled_diff(pg, field, amplitude)
        check(ids == list(range(200000, 200042)) and count == 42 and diff < 2e-6,
              f"step {step}: pEvalGrid (node ids from 200000) = amplitude x the command "
              f"line's total field ({diff:.1e})")
        # vEvalGrid: the particle velocity, NumCalc's 6 numbers a node, = amplitude x the
        # command line's -bem_field_velocity columns (7 digits: 2e-6).
        ids, v, count = ncf.read_velocity(be(nc, step, "vEvalGrid"))
        rows = read_csv_table(cli_field[:-4] + f"_k{step:04d}.csv")
        cli_v = [complex(r[f"velocity_{a}_re"], r[f"velocity_{a}_im"]) for r in rows
                 for a in "xyz"]
        diff = scaled_diff([c for node in v for c in node], cli_v, amplitude)
        check(ids == list(range(200000, 200042)) and count == 42 and diff < 2e-6,
              f"step {step}: vEvalGrid = amplitude x the command line's velocity ({diff:.1e})")
    lines = open(be(nc, 1, "pBoundary")).read().split("\n")
    grid_lines = open(be(nc, 1, "pEvalGrid")).read().split("\n")
    check(lines[:3] == ["Mesh2HRTF 1.2.4", "    2", "    0  1280"] and
          re.fullmatch(r"    0 [ -]\d\.\d{6}E[-+]\d\d [ -]\d\.\d{6}E[-+]\d\d", lines[3]) and
          grid_lines[:3] == ["Mesh2HRTF 1.2.4", "    1", "    1    42"],
          "NumCalc's layout: version line, group count, '%5d %5d' group lines, '%5d % E % E' rows")
    velocity_lines = open(be(nc, 1, "vEvalGrid")).read().split("\n")
    check(velocity_lines[:3] == grid_lines[:3] and
          re.fullmatch(r"200000( -?\d\.\d{6}E[-+]\d\d){6}", velocity_lines[3]),
          "vEvalGrid's layout: pEvalGrid's head, then '%5d %E %E %E %E %E %E' rows")
    steps, ended = ncf.read_log(os.path.join(os.path.dirname(nc), "NC.out"))
    check(ended and [s["step"] for s in steps] == [1, 2] and
          [s["frequency"] for s in steps] == [100.0, 250.0] and
          all(s["iterations"] and s["error"] < 1e-9 and None not in s["times"] and
              not s["warning"] for s in steps),
          "NC.out: Mesh2HRTF's report reader finds both steps, their frequencies, iterations, "
          "relative errors and times, and the end")
    # The same project on 2 ranks (the distributed FMM) gives the same files to the solver's
    # tolerance.
    one = ncf.read_result(be(nc, 2, "pEvalGrid"))[1]
    run(["-bem_numcalc", nc] + tight, mpi=2)
    diff = rel_diff(ncf.read_result(be(nc, 2, "pEvalGrid"))[1], one)
    check(diff < 2e-6, f"2 ranks = 1 rank ({diff:.1e})")

    # 2. A point source of Mesh2HRTF's amplitude 0.1 at (0, 0, 3) on the sphere with an
    # admittance from two curves (re: 0.2 at 50 Hz to 0.8 at 300 Hz, im: 1 to 0, times 1.0 and
    # 0.5): at 100 Hz beta = 0.32+0.4i, at 250 Hz 0.68+0.1i, each equal to the command line's
    # -bem_default_condition admittance at that value, with the admittance sphere's series.
    nc = ncf.write_project(os.path.join(WORK, "admittance"), nodes, tris, [100.0, 250.0],
                           boundary=[(0, 1279, "ADMI", 1.0, 1, 0.5, 2)],
                           waves=[("point", (0.0, 0.0, 3.0), 0.1, 0.0)],
                           curves=[(1, [(50.0, 0.2), (300.0, 0.8)]),
                                   (2, [(50.0, 1.0), (300.0, 0.0)])])
    out = run(["-bem_numcalc", nc] + tight).stdout
    check(out.count("admittance sphere series") == 2 and "amplitude 0.1+0i" in out,
          "the admittance sphere's series is the exact solution at both steps, amplitude 0.1")
    for step, (hz, beta) in enumerate([(100, "0.32+0.4i"), (250, "0.68+0.1i")], start=1):
        path = os.path.join(WORK, f"admittance_{step}.csv")
        run(["-mesh", "icosphere:3", "-bem_frequency", str(hz), "-bem_default_condition",
             "admittance:" + beta, "-bem_incident", "pointsource", "-bem_source", "0,0,3",
             "-bem_csv", path] + tight)
        diff = scaled_diff(ncf.read_result(be(nc, step, "pBoundary"))[1],
                           csv_column(path, "p_re", "p_im"), 0.1)
        check(diff < 2e-6, f"{hz} Hz: the curves' admittance {beta}, pBoundary = 0.1 x the "
                           f"command line's ({diff:.1e})")
        diff = scaled_diff(ncf.read_result(be(nc, step, "vBoundary"))[1],
                           csv_column(path, "vn_re", "vn_im"), 0.1)
        check(diff < 2e-6, f"{hz} Hz: vBoundary = 0.1 x the command line's v_n ({diff:.1e})")

    # 3. VELO 1e-3 on every element (a pulsating sphere: exact) and IMPE 0 (NumCalc's sound-soft
    # surface) in a plane wave: each against its exact solution.
    nc = ncf.write_project(os.path.join(WORK, "pulsating"), nodes, tris, [200.0],
                           boundary=[(0, 1279, "VELO", 1e-3, -1, 0.0, -1)])
    out = run(["-bem_numcalc", nc]).stdout
    err = re.search(r"max \|\w+ - exact\| = \S+, relative L2 = (\S+)", out)
    v = ncf.read_result(be(nc, 1, "vBoundary"))[1]
    check(err and float(err.group(1)) < 1e-2 and all(x == 1e-3 for x in v),
          f"pulsating sphere: its exact solution to {err and err.group(1)}; vBoundary 1e-3")
    nc = ncf.write_project(os.path.join(WORK, "soft"), nodes, tris, [200.0],
                           boundary=[(0, 1279, "IMPE", 0.0, -1, 0.0, -1)],
                           waves=[("plane", (0.0, 0.0, 1.0), 1.0, 0.0)])
    out = run(["-bem_numcalc", nc]).stdout
    err = re.search(r"max \|\w+ - exact\| = \S+, relative L2 = (\S+)", out)
    p = ncf.read_result(be(nc, 1, "pBoundary"))[1]
    check("soft sphere Mie series" in out and float(err.group(1)) < 1e-2 and
          all(x == 0 for x in p), f"IMPE 0 is the soft sphere ({err.group(1)}); pBoundary 0")

    # 4. What fmbem cannot express, or NumCalc refuses: one message naming the line and the
    # reason, exit 1, no result written.
    base = open(ncf.write_project(os.path.join(WORK, "bad"), nodes, tris, [200.0],
                                  waves=[("plane", (0.0, 0.0, 1.0), 1.0, 0.0)])).read()
    bad_nc = os.path.join(WORK, "bad", "NumCalc", "source_1", "NC.inp")
    cases = [
        ("2 1280 642 0 0 2 1 4 0", "2 1280 642 0 1 2 1 4 0", "expected SYMMETRY"),
        ("1 0 0 0.0000e+00", "1 0 1 0.0000e+00", "interior problem"),
        ("1.204 1.0 ", "1.204 -1.0 ", "time factor -1"),
        ("RETU", "ELEM 0 TO 10 TRAD 1.0 -1 0.0 -1\nRETU", "transfer conditions"),
        ("RETU", "ELEM 0 TO 10 VELO 1.0 -1 0.0 -1\nELEM 5 TO 20 PRES 1.0 -1 0.0 -1\nRETU",
         "already has a condition"),
        ("RETU", "ELEM 0 TO 10 ADMI 1.0 3 0.0 3\nRETU", "curve 3 is not in CURVES"),
        ("RETU", "ELEM 0 TO 10 VELO 1.0 1 0.0 -1\nRETU", "both be -1 or both"),
        ("1 0 0 0.0000e+00", "2 0 0 0.0000e+00", "counts 2 plane waves, PLANE WAVES gives 1"),
        ("1 0 0 0.0000e+00", "1 1 0 0.0000e+00", "expected 'POINT SOURCES'"),
        ("0 0.0 0.0 1.0 1.0 -1 0.0 -1", "0 0.0 0.0 1.0 1.0 2 0.0 2", "amplitude over frequency"),
        ("END\n", "", "ends before END"),
        ("2 1280 642", "2 1281 642", "its element files hold 1280"),
        ("Mesh2HRTF 1.2.4", "NumCalc 1.2.4", "starts with 'Mesh2HRTF"),
    ]
    for old, new, needle in cases:
        check(old in base, f"the project has '{old}'")
        open(bad_nc, "w").write(base.replace(old, new, 1))
        shutil.rmtree(os.path.join(os.path.dirname(bad_nc), "be.out"), ignore_errors=True)
        expect_error(["-bem_numcalc", bad_nc], needle)
        check(not os.path.exists(os.path.join(os.path.dirname(bad_nc), "be.out")),
              f"nothing written for '{needle}'")
    open(bad_nc, "w").write(base)
    expect_error(["-bem_numcalc", bad_nc, "-mesh", "icosphere:2"], "-mesh and -bem_numcalc")
    # A quadrilateral boundary element, two waves.
    elements = os.path.join(WORK, "bad", "ObjectMeshes", "Reference", "Elements.txt")
    good = open(elements).read()
    lines = good.split("\n")
    first = lines[1].split()
    lines[1] = " ".join([first[0]] + first[1:4] + [first[1]] + first[4:])
    open(elements, "w").write("\n".join(lines))
    expect_error(["-bem_numcalc", bad_nc], "quadrilateral boundary element")
    open(elements, "w").write(good)
    two = base.replace("1 0 0 0.0000e+00", "2 0 0 0.0000e+00").replace(
        "0 0.0 0.0 1.0 1.0 -1 0.0 -1", "0 0.0 0.0 1.0 1.0 -1 0.0 -1\n1 1.0 0.0 0.0 1.0 -1 0.0 -1")
    open(bad_nc, "w").write(two)
    expect_error(["-bem_numcalc", bad_nc], "a second incident wave")

    # 5. A Mesh2HRTF project of two sources (each ear one element, VELO 0.1 as Mesh2HRTF writes
    # it, Both ears): given its folder, both are solved in one run, one set-up per frequency,
    # each into its own source folder, every file byte for byte the single source's run.
    left = max(range(len(tris)), key=lambda i: sum(nodes[v][1] for v in tris[i]))
    right = min(range(len(tris)), key=lambda i: sum(nodes[v][1] for v in tris[i]))
    root = os.path.join(WORK, "ears")
    for source, e in ((1, left), (2, right)):
        ncf.write_project(root, nodes, tris, [150.0, 300.0], grid=grid, source=source,
                          boundary=[(e, e, "VELO", 0.1, -1, 0.0, -1),
                                    (0, 3, "ADMI", 0.5, -1, 0.1, -1)])
    out = run(["-bem_numcalc", root] + tight).stdout
    first_k = out.split("fmbem bem_solve summary")[1]
    blocks = source_blocks(first_k)
    check(len(blocks) == 2 and blocks[1]["label"].endswith("source_2/NC.inp") and
          first_k.count("group 'source_1/NC.inp line") == 2 and
          first_k.count("group 'source_2/NC.inp line") == 1,
          "a project folder's two sources in one run, the shared ADMI line kept once")
    together = {}
    for source in (1, 2):
        folder = os.path.join(root, "NumCalc", f"source_{source}")
        for step in (1, 2):
            for name in ("pBoundary", "vBoundary", "pEvalGrid"):
                together[(source, step, name)] = open(be(os.path.join(folder, "NC.inp"), step,
                                                         name)).read()
        check(ncf.read_log(os.path.join(folder, "NC.out"))[1], f"source {source}: its NC.out")
    for source in (1, 2):
        nc = os.path.join(root, "NumCalc", f"source_{source}", "NC.inp")
        run(["-bem_numcalc", nc] + tight)
        same = all(open(be(nc, step, name)).read() == together[(source, step, name)]
                   for step in (1, 2) for name in ("pBoundary", "vBoundary", "pEvalGrid"))
        check(same, f"source {source} alone writes the same files, byte for byte")
    # A SYMMETRY section (x = 0 symmetric, kind 1) on the half octasphere: NumCalc sums the
    # incident wave and its image as they are (NC_IncidentWaveRHS), so the half's pressure is
    # twice the whole sphere's (the wave along z is even in x) at the same elements: to the
    # files' 7 digits (2e-6 relative).
    centroid = {}
    symmetric = {}
    for name, keep in (("whole", False), ("half", True)):
        o_nodes, o_tris = octasphere_nodes(3, keep)
        nc = ncf.write_project(os.path.join(WORK, "sym_" + name), o_nodes, o_tris, [200.0],
                               waves=[("plane", (0.0, 0.0, 1.0), 1.0, 0.0)])
        if keep:
            text = open(nc).read().replace(
                "# SYMMETRY\n# 0 0 0\n# 0.0000e+00 0.0000e+00 0.0000e+00\n",
                "SYMMETRY\n1 0 0\n0.0 0.0 0.0\n")
            lines = text.split("\n")
            at = lines.index("## 1. Main Parameters I") + 1
            words = lines[at].split()
            words[4] = "1"
            lines[at] = " ".join(words)
            open(nc, "w").write("\n".join(lines))
        out = run(["-bem_numcalc", nc, "-bem_operator", "direct"] + tight).stdout
        check((not keep) or "planes          x = 0 symmetric" in out,
              f"{name}: the SYMMETRY section's plane is used")
        ids, values, _ = ncf.read_result(be(nc, 1, "pBoundary"))
        centroid[name] = [tuple(round(sum(o_nodes[v][a] for v in t) / 3, 9) for a in range(3))
                          for t in o_tris]
        symmetric[name] = dict(zip((centroid[name][i] for i in ids), values))
    worst = max(abs(v - 2 * symmetric["whole"][c]) for c, v in symmetric["half"].items())
    scale = max(abs(v) for v in symmetric["whole"].values())
    check(worst < 2e-6 * 2 * scale,
          f"NumCalc SYMMETRY: the half's pBoundary is twice the whole's ({worst / scale:.1e})")
    # Sources that are not one problem but for their velocities: refused, naming what differs.
    nc2 = os.path.join(root, "NumCalc", "source_2", "NC.inp")
    text = open(nc2).read()
    open(nc2, "w").write(text.replace("0.000002 0.030000e+04", "0.000002 0.031000e+04"))
    expect_error(["-bem_numcalc", root], "differ in their frequencies")
    open(nc2, "w").write(text.replace("ADMI 0.5 -1 0.1 -1", "ADMI 0.5 -1 0.2 -1"))
    expect_error(["-bem_numcalc", root], "a ADMI line that not every source has")
    open(nc2, "w").write(text)


def case_split_frequencies():
    # -bem_split frequencies: each rank solves its own k of a sweep whole (PETSC_COMM_SELF), by
    # the same operations on the same data as one rank, so every output must be the one-rank
    # run's bit for bit (times aside); rank 0 prints the summaries in the sweep's order, the
    # table and NumCalc's logs whole. Ranks take k in rounds, every other round reversed.
    base = ["-mesh", "icosphere:2", "-k", "1:5:1", "-bem_incident_dir", "0,0,1;1,0,0",
            "-bem_farfield", "4", "-bem_field_sphere", "fibonacci:10:2"]

    def split_run(tag, ranks):
        names = {n: os.path.join(WORK, f"{tag}_{n}.csv") for n in ("u", "far", "field", "sweep")}
        args = base + ["-bem_csv", names["u"], "-bem_farfield_csv", names["far"],
                       "-bem_field_csv", names["field"], "-bem_sweep_csv", names["sweep"]]
        if ranks:
            args += ["-bem_split", "frequencies"]
        return run(args, mpi=ranks), names

    def comparable(text, tag):
        """A summary without what differs between runs: times (the table's too), memory, the
        split line."""
        return [re.sub(r"((?:CONVERGED|DIVERGED)_\w+)\s+[\d.]+\s+[\d.]+", r"\1",
                       re.sub(r" in [\d.]+ s;", "", l.replace(tag + "_", "X_")))
                for l in text.split("\n")
                if not re.search(r"time|seconds|memory|MB|split  | s$", l)]
    one, _ = split_run("one", 0)
    three, _ = split_run("three", 3)
    same = [(k, s, n) for k in range(1, 6) for s in (1, 2) for n in ("u", "far", "field")
            if open(os.path.join(WORK, f"three_{n}_k{k:04d}_s{s:04d}.csv")).read() ==
            open(os.path.join(WORK, f"one_{n}_k{k:04d}_s{s:04d}.csv")).read()]
    check(len(same) == 30, f"3 ranks, 5 k x 2 waves: every surface, far-field and field file is "
                           f"the one-rank run's byte for byte ({len(same)} of 30)")
    rows_one = read_csv_table(os.path.join(WORK, "one_sweep.csv"))
    rows_three = read_csv_table(os.path.join(WORK, "three_sweep.csv"))
    strip = lambda rows: [{c: v for c, v in r.items() if not c.endswith("_s")} for r in rows]
    check(len(rows_three) == 10 and strip(rows_three) == strip(rows_one),
          "the sweep CSV: the one-rank run's rows (k, source, iterations, errors) in its order")
    blocks_one = one.stdout.split("fmbem bem_solve summary")
    blocks_three = three.stdout.split("fmbem bem_solve summary")
    check(len(blocks_three) == 6 and all(f", k {i} of 5" in blocks_three[i] for i in range(1, 6)),
          "five summaries, in the sweep's order")
    check(all(comparable(a, "three") == comparable(b, "one")
              for a, b in zip(blocks_three, blocks_one)),
          "each summary and the closing table equal the one-rank run's but for times and memory")
    owners = [int(re.search(r"this k on rank (\d+)", b).group(1)) for b in blocks_three[1:]]
    check(owners == [0, 1, 2, 2, 1], f"k 1..5 on ranks 0, 1, 2, 2, 1 (rounds, every other one "
                                     f"reversed): {owners}")
    progress = [l for l in three.stderr.split("\n") if l.startswith("bem_solve: k = ")]
    check(len(progress) == 10 and all(re.search(r"on rank \d:", l) for l in progress),
          "a progress line per k and source, naming its rank")
    # A NumCalc project of two ears on 2 ranks: the result files and NC.out's steps are the
    # one-rank run's.
    import numcalc_files as ncf
    nodes, tris = icosphere_nodes(2)
    grid = ("r2", *icosphere_nodes(1, 2.0))
    left = max(range(len(tris)), key=lambda i: sum(nodes[v][1] for v in tris[i]))
    right = min(range(len(tris)), key=lambda i: sum(nodes[v][1] for v in tris[i]))
    results = {}
    for ranks in (0, 2):
        root = os.path.join(WORK, f"ears{ranks}")
        for source, e in ((1, left), (2, right)):
            ncf.write_project(root, nodes, tris, [100.0, 200.0, 300.0], grid=grid, source=source,
                              boundary=[(e, e, "VELO", 0.1, -1, 0.0, -1)])
        run(["-bem_numcalc", root] + (["-bem_split", "frequencies"] if ranks else []), mpi=ranks)
        files, logs = {}, {}
        for source in (1, 2):
            nc = os.path.join(root, "NumCalc", f"source_{source}", "NC.inp")
            for step in (1, 2, 3):
                for name in ("pBoundary", "vBoundary", "pEvalGrid"):
                    files[(source, step, name)] = open(be(nc, step, name)).read()
            steps, ended = ncf.read_log(os.path.join(os.path.dirname(nc), "NC.out"))
            logs[source] = (ended, [(s["step"], s["frequency"], s["iterations"], s["error"])
                                    for s in steps])
        results[ranks] = files, logs
    check(results[2][0] == results[0][0], "a two-ear NumCalc project on 2 ranks: every result "
                                          "file is the one-rank run's byte for byte")
    check(results[2][1] == results[0][1] and all(ended and len(steps) == 3
                                                 for ended, steps in results[2][1].values()),
          "each source's NC.out: three steps in order, their iterations and residuals the "
          "one-rank run's, and the end")
    # Refusals, before any work: fewer frequencies than ranks, a distributed FMM's options.
    for args, needle in ((["-k", "1,2"], "2 frequencies for 3 ranks"),
                         (["-k", "1:3:1", "-fmm_distribute", "false"], "-fmm_distribute")):
        p = run(["-mesh", "icosphere:2", "-bem_split", "frequencies"] + args, expect_ok=False,
                mpi=3)
        check(p.returncode == 1 and p.stderr.count("bem_solve: error:") == 1 and needle in
              p.stderr, f"-bem_split frequencies {' '.join(args)}: one error naming '{needle}'")
    p = run(["-mesh", "icosphere:2", "-bem_split", "sideways", "-k", "1"], expect_ok=False)
    check(p.returncode == 1 and "-bem_split" in p.stderr, "-bem_split sideways: refused")
    # A first solve that fails on every rank (an unknown KSP type): one error, exit 1, no hang;
    # a later k that fails (7 iterations allowed) fails alone: exit 2, its rank's error line, the
    # others' files written.
    p = run(["-mesh", "icosphere:2", "-k", "1:3:1", "-bem_split", "frequencies", "-ksp_type",
             "nosuchksp"], expect_ok=False, mpi=3)
    check(p.returncode == 1 and p.stderr.count("bem_solve: error:") == 1,
          f"an unknown -ksp_type on 3 ranks: one error, exit 1 ({p.stderr.strip()[-200:]})")
    failed = os.path.join(WORK, "failed.csv")
    # (rbm on icosphere:2 takes 4, 5 and 10 iterations at k = 1, 2, 8.)
    p = run(["-mesh", "icosphere:2", "-k", "1,2,8", "-bem_split", "frequencies", "-ksp_max_it",
             "7", "-bem_csv", failed], expect_ok=False, mpi=3)
    written = sorted(f for f in os.listdir(WORK) if f.startswith("failed"))
    errors = [l for l in p.stderr.split("\n") if l.startswith("bem_solve: error:")]
    check(p.returncode == 2 and len(errors) == 1 and "at k = 8: DIVERGED_ITS" in errors[0] and
          written == ["failed_k0001.csv", "failed_k0002.csv"],
          f"a later k that fails on its rank: its error line, the others written, exit 2 "
          f"({written}, {errors})")


def case_numcalc_groups():
    # A NumCalc project's BOUNDARY ranges are the command line's surface groups: the icosphere's
    # elements ordered so that two caps (about +y and -y) are ranges, given the same mesh as a
    # Gmsh file with the caps as physical groups 1 and 2; pBoundary, vBoundary and pEvalGrid
    # equal the command line's p, v_n and field (2e-6: the files' 7 digits).
    import numcalc_files as ncf
    nodes, tris = icosphere_nodes(3)
    grid = ("r2", *icosphere_nodes(1, 2.0))
    grid_csv = os.path.join(WORK, "grid.csv")
    with open(grid_csv, "w") as f:
        f.writelines("%.17g,%.17g,%.17g\n" % p for p in grid[1])
    height = lambda t: sum(nodes[v][1] for v in t) / 3
    left = [t for t in tris if height(t) > 0.8]
    right = [t for t in tris if height(t) < -0.8]
    rest = [t for t in tris if abs(height(t)) <= 0.8]
    ordered = left + right + rest
    nl, nr = len(left), len(right)
    nc = ncf.write_project(os.path.join(WORK, "caps"), nodes, ordered, [120.0, 240.0], grid=grid,
                           boundary=[(0, nl - 1, "VELO", 1e-3, -1, 0.0, -1),
                                     (nl, nl + nr - 1, "VELO", 0.0, -1, 2e-3, -1),
                                     (nl + nr, nl + nr + 9, "IMPE", 2.0, -1, -1.0, -1)])
    msh = os.path.join(WORK, "caps.msh")
    with open(msh, "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n" % len(nodes))
        for i, p in enumerate(nodes):
            f.write("%d %.17g %.17g %.17g\n" % (i + 1, *p))
        f.write("$EndNodes\n$Elements\n%d\n" % len(ordered))
        for i, t in enumerate(ordered):
            tag = 1 if i < nl else 2 if i < nl + nr else 3 if i < nl + nr + 10 else 4
            f.write("%d 2 2 %d %d %d %d %d\n" % (i + 1, tag, tag, t[0] + 1, t[1] + 1, t[2] + 1))
        f.write("$EndElements\n")
    tight = ["-ksp_rtol", "1e-10"]
    run(["-bem_numcalc", nc] + tight)
    cli_csv, cli_field = os.path.join(WORK, "cli.csv"), os.path.join(WORK, "cli_field.csv")
    run(["-mesh", msh, "-bem_frequency", "120,240", "-bem_velocity", "1:1e-3,2:2e-3i",
         "-bem_impedance", "3:2-1i", "-bem_csv", cli_csv, "-bem_field", grid_csv,
         "-bem_field_csv", cli_field] + tight)
    for step in (1, 2):
        rows = read_csv_table(cli_csv[:-4] + f"_k{step:04d}.csv")
        for name, column in (("pBoundary", "p"), ("vBoundary", "vn")):
            got = ncf.read_result(be(nc, step, name))[1]
            d = rel_diff(got, [complex(r[column + "_re"], r[column + "_im"]) for r in rows])
            check(d < 2e-6, f"step {step}: {name} = the command line's {column} ({d:.1e})")
        field = csv_column(cli_field[:-4] + f"_k{step:04d}.csv", "radiated_re", "radiated_im")
        d = rel_diff(ncf.read_result(be(nc, step, "pEvalGrid"))[1], field)
        check(d < 2e-6, f"step {step}: pEvalGrid = the command line's field ({d:.1e})")


def case_planes():
    # Image planes (-bem_planes). A part of the octasphere with symmetric / antisymmetric planes
    # solves the whole sphere's problem for the incident wave's even / odd part: each element's
    # value is the projection of the whole sphere's solution, (1/2^m) sum over the images of
    # sign x u_whole(image). The same integrals and the direct operator: equal to the solver's
    # tolerance (rtol 1e-10 on both: 1e-8 of the largest value allowed) for cbie, bm (the
    # quadratic read fitted across the planes) and rbm, rigid and soft.
    def by_centroid(path):
        rows = read_csv_table(path)
        return {(round(r["x"], 9), round(r["y"], 9), round(r["z"], 9)):
                complex(r["re"], r["im"]) for r in rows}

    def projected(whole, x, parities):
        axes = [a for a in range(3) if parities[a] != "-"]
        total = 0
        for m in range(1 << len(axes)):
            y, sign = list(x), 1
            for i, a in enumerate(axes):
                if m >> i & 1:
                    y[a] = -y[a]
                    sign = -sign if parities[a] == "o" else sign
            total += sign * whole[tuple(round(c, 9) for c in y)]
        return total / (1 << len(axes))

    tight = ["-k", "4", "-bem_operator", "direct", "-ksp_rtol", "1e-10"]
    parts = [("x", "x=0:symmetric", "e--"), ("xy", "x=0:antisymmetric,y=0:symmetric", "oe-"),
             ("xyz", "x=0:symmetric,y=0:symmetric,z=0:antisymmetric", "eeo"),
             ("xyz", "x=0:antisymmetric,y=0:symmetric,z=0:symmetric", "oee")]
    for bc in ("neumann", "dirichlet"):
        for formulation in ("cbie", "bm", "rbm"):
            if bc == "dirichlet" and formulation == "cbie":
                continue
            common = tight + ["-bem_bc", bc, "-bem_formulation", formulation,
                              "-bem_incident_dir", "0.6,0,0.8"]
            whole_csv = os.path.join(WORK, "whole.csv")
            run(["-mesh", "octasphere:3", "-bem_csv", whole_csv] + common)
            whole = by_centroid(whole_csv)
            scale = max(abs(v) for v in whole.values())
            for axes, planes, parities in parts:
                part_csv = os.path.join(WORK, "part.csv")
                r = summary(["-mesh", "octasphere:3:1:" + axes, "-bem_planes", planes,
                             "-bem_csv", part_csv] + common)
                part = by_centroid(part_csv)
                check(r["n"] == 512 >> len(axes) and "planes " in r["out"],
                      f"{planes}: {r['n']} elements and the planes line")
                worst = max(abs(v - projected(whole, x, parities)) for x, v in part.items())
                check(worst < 1e-8 * scale,
                      f"{bc} {formulation} {planes}: the whole sphere's projection "
                      f"({worst / scale:.1e} of the largest value)")
    # A sweep of two k with two incident waves (each even across x = 0): the half's four solutions
    # are the whole's, and on two ranks with -bem_split frequencies the same again.
    sweep = ["-k", "2,4", "-bem_incident_dir", "0,0,1;0,0.6,0.8", "-bem_operator", "direct",
             "-ksp_rtol", "1e-10"]
    run(["-mesh", "octasphere:3", "-bem_csv", os.path.join(WORK, "sw_whole.csv")] + sweep)
    run(["-mesh", "octasphere:3:1:x", "-bem_planes", "x=0:symmetric",
         "-bem_csv", os.path.join(WORK, "sw_half.csv")] + sweep)
    run(["-mesh", "octasphere:3:1:x", "-bem_planes", "x=0:symmetric", "-bem_split", "frequencies",
         "-bem_csv", os.path.join(WORK, "sw_split.csv")] + sweep, mpi=2)
    for step in ("k0001_s0001", "k0001_s0002", "k0002_s0001", "k0002_s0002"):
        whole = by_centroid(os.path.join(WORK, f"sw_whole_{step}.csv"))
        scale = max(abs(v) for v in whole.values())
        for name in ("half", "split"):
            part = by_centroid(os.path.join(WORK, f"sw_{name}_{step}.csv"))
            worst = max(abs(v - projected(whole, x, "e--")) for x, v in part.items())
            check(worst < 1e-8 * scale, f"sweep and sources, {name} {step}: the whole's "
                  f"({worst / scale:.1e})")

    # The FMM, default options (rbm): the eighth's error against the projected Mie series is the
    # whole sphere's (the same discretisation; the FMM's 1e-4 moves it by far less than 10 %).
    whole = summary(["-mesh", "octasphere:4", "-k", "4", "-bem_incident_dir", "0.6,0,0.8"])
    eighth = summary(["-mesh", "octasphere:4:1:xyz", "-k", "4", "-bem_incident_dir", "0.6,0,0.8",
                      "-bem_planes", "x=0:symmetric,y=0:symmetric,z=0:symmetric"])
    check("sphere Mie series" in eighth["out"] and abs(eighth["l2"] / whole["l2"] - 1) < 0.1,
          f"fmm: the eighth's error {eighth['l2']:.3e} is the whole's {whole['l2']:.3e}")
    # On several ranks: the distributed FMM (the default; each element's mirror sources are
    # sources of it in the partitioned tree) and the rows split over whole FMMs
    # (-fmm_distribute false). The two FMMs sum the images differently (mirror sources there,
    # mirror targets on one rank), so their solutions differ by the FMM's error: asked at 1e-6
    # and solved to 1e-9, u_a - u_b = A^-1 ((A_a - A_b) u + r_a - r_b) stays within 1e-5 of the
    # largest value for a condition number below 5 (rbm on the sphere: about 2).
    precise = ["-fmm_eps", "1e-6", "-ksp_rtol", "1e-9"]
    for mesh, planes, extra in (
            ("octasphere:4:1:xyz", "x=0:symmetric,y=0:symmetric,z=0:antisymmetric",
             ["-bem_incident_dir", "0.6,0,0.8"]),
            ("octasphere:4:1:z", "z=0:rigid", ["-bem_incident", "pointsource", "-bem_source",
                                                "0.5,0.2,1.8"]),
            ("icosphere:3", "z=-1.5:soft", ["-bem_problem", "radiation", "-bem_source",
                                             "0.1,0.2,0.3", "-bem_formulation", "bm"])):
        base_args = ["-mesh", mesh, "-k", "4", "-bem_planes", planes] + extra + precise
        one_csv = os.path.join(WORK, "ranks_one.csv")
        one = summary(base_args + ["-bem_csv", one_csv])
        reference = by_centroid(one_csv)
        scale = max(abs(v) for v in reference.values())
        for ranks, distribute in ((3, "true"), (2, "false")):
            csv = os.path.join(WORK, f"ranks_{ranks}.csv")
            r = summary(base_args + ["-fmm_distribute", distribute, "-bem_csv", csv], mpi=ranks)
            got = by_centroid(csv)
            worst = max(abs(got[x] - v) for x, v in reference.items())
            check(set(got) == set(reference) and worst < 1e-5 * scale and
                  ("distributed     tree partitioned over" in r["out"]) == (distribute == "true")
                  and "planes " in r["out"],
                  f"{planes} on {ranks} ranks, -fmm_distribute {distribute}: the one-rank "
                  f"solution to {worst / scale:.1e} ({r['its']} iterations, one rank "
                  f"{one['its']})")

    # A monopole inside a body above a rigid / soft plane (and beside two): the exact solution is
    # the monopole and its images, signed. Converging like the body alone: the L2 error falls by
    # more than 3 a level (h^2: 4) on icosphere:2..4, for cbie, bm and rbm.
    for planes, formulations in (("z=-1.5:rigid", ("cbie", "rbm")), ("z=-1.5:soft", ("cbie", "rbm")),
                                 ("x=1.2:soft,y=-1.1:rigid", ("bm",))):
        for formulation in formulations:
            refinement(["-k", "4", "-bem_problem", "radiation", "-bem_source", "0.1,0.2,0.3",
                        "-bem_planes", planes, "-bem_formulation", formulation], (2, 3, 4), 3.0,
                       f"monopole, {planes}, {formulation}")
    # A point source above a rigid plane scattered by a rigid sphere resting on it: the
    # hemisphere's solution is the whole sphere's for the source and its image (the Mie series
    # symmetrized), converging.
    res = [summary(["-mesh", f"octasphere:{L}:1:z", "-k", "2", "-bem_incident", "pointsource",
                    "-bem_source", "0.5,0.2,1.8", "-bem_planes", "z=0:rigid"]) for L in (2, 3, 4)]
    for a, b in zip(res, res[1:]):
        check("sphere Mie series" in b["out"] and a["l2"] / b["l2"] > 3,
              f"hemisphere on a rigid plane: {a['l2']:.3e} -> {b['l2']:.3e}")

    # The field, its velocity and the far field with images. Points and their mirror images
    # across x = 0, y = 0, z = 0 (none on a plane): an eighth's field at each is the projection
    # of the whole sphere's over the point's images, as on the surface (direct operator, rtol
    # 1e-10: 1e-8 of the largest value); the far field likewise over the mirrored directions.
    import random
    rng = random.Random(5)
    base_points = []
    while len(base_points) < 6:
        p = [rng.uniform(0.2, 1.6) for _ in range(3)]
        if 1.2 < math.sqrt(sum(c * c for c in p)) < 2.5:
            base_points.append(p)
    mirrored = [[sx * p[0], sy * p[1], sz * p[2]] for p in base_points
                for sx in (1, -1) for sy in (1, -1) for sz in (1, -1)]
    points_csv = os.path.join(WORK, "points.csv")
    with open(points_csv, "w") as f:
        f.write("x,y,z\n" + "".join("%.17g,%.17g,%.17g\n" % tuple(p) for p in mirrored))
    # The far field on the x-z circle of 16 directions: every direction's mirror images across
    # the coordinate planes are directions of it.
    field_args = ["-bem_field", points_csv, "-bem_field_velocity", "-bem_farfield", "16"]
    common = tight + ["-bem_formulation", "bm", "-bem_incident_dir", "0.6,0,0.8"] + field_args

    def field_table(path):
        return [(complex(r["scattered_re"], r["scattered_im"]),
                 [complex(r[f"velocity_{a}_re"], r[f"velocity_{a}_im"]) for a in "xyz"])
                for r in read_csv_table(path)]

    run(["-mesh", "octasphere:3", "-bem_field_csv", os.path.join(WORK, "whole_field.csv"),
         "-bem_farfield_csv", os.path.join(WORK, "whole_far.csv")] + common)
    whole_field = field_table(os.path.join(WORK, "whole_field.csv"))
    whole_far = read_csv_table(os.path.join(WORK, "whole_far.csv"))
    for axes, planes, parities in parts:
        r = summary(["-mesh", "octasphere:3:1:" + axes, "-bem_planes", planes,
                     "-bem_field_csv", os.path.join(WORK, "part_field.csv"),
                     "-bem_farfield_csv", os.path.join(WORK, "part_far.csv")] + common)
        part_field = field_table(os.path.join(WORK, "part_field.csv"))
        signs = [1 if c == "e" else -1 if c == "o" else 0 for c in parities]

        def image_sign(i, j):
            # Point j's image index relative to point i's (both in one group of 8): the axes
            # flipped, and the product of their parities' signs (0: an axis without a plane).
            flips = (i ^ j) & 7
            sign = 1
            for bit, axis in ((4, 0), (2, 1), (1, 2)):
                if flips & bit:
                    sign *= signs[axis]
            return sign

        worst, scale = 0.0, max(abs(v) for v, _ in whole_field)
        for i, (value, velocity) in enumerate(part_field):
            group = i - i % 8
            weight = 1.0 / (1 << sum(1 for c in parities if c != "-"))
            expect = sum(image_sign(i, j) * whole_field[j][0] for j in range(group, group + 8)
                         if image_sign(i, j) != 0) * weight
            worst = max(worst, abs(value - expect))
            for a in range(3):
                # The velocity's component along a flipped axis changes sign with the image.
                expect_v = sum(image_sign(i, j) * whole_field[j][1][a] *
                               (-1 if ((i ^ j) & 7) & (4 >> a) else 1)
                               for j in range(group, group + 8) if image_sign(i, j) != 0) * weight
                worst = max(worst, abs(velocity[a] - expect_v) * 343 * 1.204 / 4)
        check(worst < 1e-8 * scale, f"field of {planes}: the whole's projection "
              f"({worst / scale:.1e} of the largest value; velocity in units of p / rho c)")
        part_far = read_csv_table(os.path.join(WORK, "part_far.csv"))
        whole_f = {(round(w["dx"], 12), round(w["dy"], 12), round(w["dz"], 12)):
                   complex(w["F_re"], w["F_im"]) for w in whole_far}
        worst_far, compared = 0.0, 0
        for row in part_far:
            d = [row["dx"], row["dy"], row["dz"]]
            expect, count = 0, 0
            for m in range(8):
                e = [(-c if m >> (2 - a) & 1 else c) for a, c in enumerate(d)]
                key = tuple(round(c, 12) for c in e)
                sign = 1
                for a in range(3):
                    if m >> (2 - a) & 1:
                        sign *= signs[a]
                if sign == 0:
                    continue
                if key not in whole_f:
                    expect = None
                    break
                expect += sign * whole_f[key]
                count += 1
            if expect is None:
                continue
            value = complex(row["F_re"], row["F_im"])
            worst_far = max(worst_far, abs(value - expect / count))
            compared += 1
        check(compared == 16 and worst_far < 1e-8 * max(abs(v) for v in whole_f.values()),
              f"far field of {planes}: the whole's projection in {compared} directions "
              f"({worst_far:.1e})")

    # The field of a monopole inside a body above a rigid plane: the monopole and its image,
    # converging like the surface (more than 3 a level); points below the plane are not in the
    # fluid (NaN, flagged); the far field into the upper half-space likewise, NaN below.
    ring_csv = os.path.join(WORK, "ring.csv")
    with open(ring_csv, "w") as f:
        f.write("x,y,z\n" + "".join("%.17g,0.3,%.17g\n" % (2.2 * math.sin(2 * math.pi * i / 40),
                                                         2.2 * math.cos(2 * math.pi * i / 40))
                                     for i in range(40)))
    errors = []
    for level in (2, 3, 4):
        out = run(["-mesh", f"icosphere:{level}", "-k", "4", "-bem_problem", "radiation",
                   "-bem_source", "0.1,0.2,0.3", "-bem_planes", "z=-1.5:rigid", "-bem_field",
                   ring_csv, "-bem_field_csv", os.path.join(WORK, "ring_out.csv"),
                   "-bem_farfield", "24", "-bem_farfield_csv",
                   os.path.join(WORK, "ring_far.csv")]).stdout
        field_err = float(re.search(r"field error\s+relative L2 = ([^,\s]+)", out).group(1))
        far_err = float(re.search(r"farfield error\s+relative L2 = ([^,\s]+)", out).group(1))
        errors.append((field_err, far_err))
        rows = read_csv_table(os.path.join(WORK, "ring_out.csv"))
        below = [r for r in rows if r["z"] < -1.5]
        check(below and all(r["location"] == 2 and math.isnan(r["radiated_re"]) for r in below)
              and "beyond a reflecting plane" in out,
              f"icosphere:{level}: the {len(below)} points below the rigid plane are flagged")
        far = read_csv_table(os.path.join(WORK, "ring_far.csv"))
        check(all(math.isnan(r["F_re"]) == (r["dz"] < 0) for r in far),
              "the far field is NaN exactly for the directions below the plane")
    for a, b in zip(errors, errors[1:]):
        check(a[0] / b[0] > 3 and a[1] / b[1] > 3,
              f"monopole above a rigid plane: field {a[0]:.2e} -> {b[0]:.2e}, "
              f"far field {a[1]:.2e} -> {b[1]:.2e}")

    # Refusals, each one clear line.
    base = ["-mesh", "octasphere:2:1:x", "-k", "2"]
    expect_error(base, "the surface is open")
    expect_error(base + ["-bem_planes", "x=0:mirror"], "bad -bem_planes")
    expect_error(base + ["-bem_planes", "x=0:symmetric,x=1:soft"], "two planes perpendicular")
    expect_error(base + ["-bem_planes", "y=0:symmetric"], "both sides of the plane y = 0")
    expect_error(["-mesh", "icosphere:2", "-k", "2", "-bem_planes", "z=0.5:rigid"],
                 "both sides of the plane z = 0.5")
    expect_error(["-mesh", "icosphere:2", "-k", "2", "-bem_problem", "radiation", "-bem_source",
                  "0,0,0", "-bem_planes", "z=0:soft,x=3:rigid"], "both sides")
    expect_error(["-mesh", "octasphere:2:1:z", "-k", "2", "-bem_problem", "radiation",
                  "-bem_source", "0.1,0.1,0", "-bem_planes", "z=0:symmetric"],
                 "lies on the plane z = 0")
    expect_error(["-mesh", "icosphere:2", "-k", "2", "-bem_incident", "pointsource",
                  "-bem_source", "0,0,-3", "-bem_planes", "z=-1.5:rigid"],
                 "lies beyond the plane z = -1.5")


def case_baffle():
    # A circular piston of radius a flush in an infinite rigid baffle (z = 0, the fluid above):
    # a flat disc of elements in the plane, velocity v0 into the fluid. Its image is itself
    # facing the other way: the field is the Rayleigh integral u = -2 S q, on the axis
    #   p(z) = rho c v0 (e^{ikz} - e^{ik sqrt(z^2 + a^2)}),
    # at the centre p(0) = rho c v0 (1 - e^{ika}), and the far field
    #   F(t) = -(q a^2 / 2) 2 J1(ka sin t) / (ka sin t),  q = i k rho c v0,
    # none below the baffle. Each converges like h^2 (more than 3 per halving of the rings) for
    # cbie and rbm; the centre element's offset from the axis is O(h) and its error O(h^2).
    a, v0, rho, c, frequency = 0.5, 1e-3, 1.204, 343.0, 500.0
    k = 2 * math.pi * frequency / c

    def disc_nodes(rings):
        nodes, tris, previous = [(0.0, 0.0, 0.0)], [], [0]
        for r in range(1, rings + 1):
            m = 6 * r
            ring = []
            for j in range(m):
                t = 2 * math.pi * j / m
                nodes.append((a * r / rings * math.cos(t), a * r / rings * math.sin(t), 0.0))
                ring.append(len(nodes) - 1)
            if r == 1:
                tris += [(0, ring[j], ring[(j + 1) % 6]) for j in range(6)]
            else:
                pm, i, j = len(previous), 0, 0
                while i < pm or j < m:
                    if j < m and (i >= pm or (j + 1) / m <= (i + 1) / pm):
                        tris.append((previous[i % pm], ring[j], ring[(j + 1) % m]))
                        j += 1
                    else:
                        tris.append((previous[i % pm], ring[j % m], previous[(i + 1) % pm]))
                        i += 1
            previous = ring
        return nodes, tris

    def disc_msh(path, rings):
        write_msh22(path, *disc_nodes(rings), "piston")

    def bessel_j1(x):
        return sum((-1) ** m * (x / 2) ** (2 * m + 1) / (math.factorial(m) * math.factorial(m + 1))
                   for m in range(40))

    axis_csv = os.path.join(WORK, "axis.csv")
    with open(axis_csv, "w") as f:
        f.write("x,y,z\n" + "".join("0,0,%g\n" % (0.1 * i) for i in range(1, 21)))
    for formulation in ("cbie", "rbm"):
        errors = []
        for rings in (4, 8, 16):
            msh = os.path.join(WORK, f"disc{rings}.msh")
            disc_msh(msh, rings)
            surface_csv, field_csv, far_csv = (os.path.join(WORK, n)
                                               for n in ("s.csv", "f.csv", "ff.csv"))
            out = run(["-mesh", msh, "-bem_planes", "z=0:rigid", "-bem_frequency", str(frequency),
                       "-bem_velocity", f"1:{v0}", "-bem_formulation", formulation, "-bem_csv",
                       surface_csv, "-bem_field", axis_csv, "-bem_field_csv", field_csv,
                       "-bem_farfield", "36", "-bem_farfield_csv", far_csv,
                       "-bem_field_reference", "0,0,0"]).stdout
            rows = read_csv_table(surface_csv)
            centre = min(rows, key=lambda r: r["x"] ** 2 + r["y"] ** 2)
            p0 = rho * c * v0 * (1 - cmath.exp(1j * k * a))
            centre_err = abs(complex(centre["p_re"], centre["p_im"]) - p0) / abs(p0)
            on_axis = [(complex(r["radiated_re"], r["radiated_im"]),
                        rho * c * v0 * (cmath.exp(1j * k * r["z"]) -
                                        cmath.exp(1j * k * math.sqrt(r["z"] ** 2 + a * a))))
                       for r in read_csv_table(field_csv)]
            axis_err = rel_diff([v for v, _ in on_axis], [e for _, e in on_axis])
            # The HRTF's reference is the free-field point source of the piston's own volume
            # velocity Q = v0 A (A the mesh's polygon area; its image is the baffle's doing):
            # p_ref = -i omega rho Q e^{ikz} / (4 pi z) on the axis, no plane, to rounding; the
            # hrtf column is the field over it.
            nodes, tris = disc_nodes(rings)
            area = sum(0.5 * abs((nodes[b][0] - nodes[a_][0]) * (nodes[c_][1] - nodes[a_][1]) -
                                 (nodes[c_][0] - nodes[a_][0]) * (nodes[b][1] - nodes[a_][1]))
                       for a_, b, c_ in tris)
            q_line = next(l for l in out.splitlines() if l.startswith("  field reference "))
            q_summary = complex(q_line.split("Q = ")[1].split()[0].replace("i", "j"))
            worst = 0.0
            for r in read_csv_table(field_csv):
                ref = complex(r["reference_re"], r["reference_im"])
                ref_exact = (-1j * k * c * rho * v0 * area * cmath.exp(1j * k * r["z"]) /
                             (4 * math.pi * r["z"]))
                radiated = complex(r["radiated_re"], r["radiated_im"])
                hrtf = complex(r["hrtf_re"], r["hrtf_im"])
                worst = max(worst, abs(ref - ref_exact) / abs(ref_exact),
                            abs(hrtf * ref - radiated) / abs(radiated))
            check(abs(q_summary - v0 * area) < 1e-12 * v0 * area and worst < 1e-12,
                  f"{formulation}, {rings} rings: the reference is the piston's own volume "
                  f"velocity {q_summary:.6e} (v0 A = {v0 * area:.6e}) as a free-field point source, "
                  f"the hrtf the field over it ({worst:.1e})")
            q = 1j * k * rho * c * v0
            far, below = [], []
            for r in read_csv_table(far_csv):
                if r["dz"] < 0:
                    below.append(math.isnan(r["F_re"]))
                    continue
                x = k * a * abs(r["dx"])
                directivity = 1.0 if x < 1e-12 else 2 * bessel_j1(x) / x
                far.append((complex(r["F_re"], r["F_im"]), -(q * a * a / 2) * directivity))
            far_err = rel_diff([v for v, _ in far], [e for _, e in far])
            check("planes          z = 0 rigid" in out and below and all(below),
                  f"{formulation}, {rings} rings: the far field below the baffle is NaN")
            errors.append((centre_err, axis_err, far_err))
        for (c1, a1, f1), (c2, a2, f2) in zip(errors, errors[1:]):
            check(c1 / c2 > 3 and a1 / a2 > 3 and f1 / f2 > 3,
                  f"baffled piston, {formulation}: centre {c1:.2e} -> {c2:.2e}, axis {a1:.2e} -> "
                  f"{a2:.2e}, far field {f1:.2e} -> {f2:.2e}")
        check(errors[-1][1] < 2e-3 and errors[-1][2] < 2e-3,
              f"{formulation}: 16 rings within 2e-3 on the axis and in the far field")
    # A dome (a hemisphere open at the plane) with a flush annulus of rigid plane around it, a
    # monopole inside: the exact solution is the monopole and its image, 2 G on the annulus. Its
    # rows' whole identity and cancelled normal derivatives: converging like h^2 (more than 3 a
    # halving) for cbie, bm and rbm.
    def dome_msh(path, n):
        m = 8 * n
        nodes, tris, rings = [(0.0, 0.0, 1.0)], [], []

        def band(r0, r1, shift):
            for j in range(m):
                a_, b_, c_, d_ = r0[j], r0[(j + 1) % m], r1[j], r1[(j + 1) % m]
                tris.extend([(a_, c_, b_), (b_, c_, d_)] if shift else [(a_, c_, d_), (a_, d_, b_)])

        def ring_at(radius, height, shift):
            ring = []
            for j in range(m):
                phi = 2 * math.pi * (j + 0.5 * shift) / m
                nodes.append((radius * math.cos(phi), radius * math.sin(phi), height))
                ring.append(len(nodes) - 1)
            return ring

        for i in range(1, 2 * n + 1):
            theta = math.pi / 2 * i / (2 * n)
            rings.append(ring_at(math.sin(theta), math.cos(theta) if i < 2 * n else 0.0, i % 2))
        tris.extend((0, rings[0][j], rings[0][(j + 1) % m]) for j in range(m))
        for i in range(1, len(rings)):
            band(rings[i - 1], rings[i], i % 2 == 1)
        previous = rings[-1]
        for k_ in range(1, max(2, n // 2) + 1):
            shift = (2 * n + k_) % 2
            ring = ring_at(1 + 0.5 * k_ / max(2, n // 2), 0.0, shift)
            band(previous, ring, shift == 1)
            previous = ring
        write_msh22(path, nodes, tris)

    for formulation, sizes in (("cbie", (4, 8, 16)), ("bm", (4, 8)), ("rbm", (4, 8))):
        meshes = []
        for n in sizes:
            meshes.append(os.path.join(WORK, f"dome{n}.msh"))
            dome_msh(meshes[-1], n)
        res = [summary(["-mesh", msh, "-bem_planes", "z=0:rigid", "-k", "2", "-bem_problem",
                        "radiation", "-bem_source", "0.1,0.2,0.3", "-bem_formulation",
                        formulation]) for msh in meshes]
        for a_, b_ in zip(res, res[1:]):
            check(a_["l2"] / b_["l2"] > 3,
                  f"dome and flush annulus, {formulation}: {a_['l2']:.3e} -> {b_['l2']:.3e}")
    # The flush annulus on the distributed FMM (3 ranks): the one-rank solution to the FMMs'
    # difference (as the planes case derives it: 1e-5 of the largest value at -fmm_eps 1e-6).
    solutions = []
    for ranks in (1, 3):
        csv = os.path.join(WORK, f"dome_ranks{ranks}.csv")
        run(["-mesh", os.path.join(WORK, "dome8.msh"), "-bem_planes", "z=0:rigid", "-k", "2",
             "-bem_problem", "radiation", "-bem_source", "0.1,0.2,0.3", "-fmm_eps", "1e-6",
             "-ksp_rtol", "1e-9", "-bem_csv", csv], mpi=ranks if ranks > 1 else 0)
        solutions.append([complex(r["re"], r["im"]) for r in read_csv_table(csv)])
    worst = max(abs(a_ - b_) for a_, b_ in zip(*solutions))
    scale = max(abs(v) for v in solutions[0])
    check(len(solutions[0]) == len(solutions[1]) and worst < 1e-5 * scale,
          f"dome and flush annulus on 3 ranks: the one-rank solution to {worst / scale:.1e}")

    # Elements in a soft or a symmetry plane are refused (a body's face resting on a rigid plane,
    # facing away from the fluid, is mesh_test's).
    expect_error(["-mesh", os.path.join(WORK, "disc16.msh"), "-bem_planes", "z=0:soft",
                  "-bem_frequency", "500", "-bem_velocity", "1:1e-3"], "lies wholly in")
    expect_error(["-mesh", os.path.join(WORK, "disc16.msh"), "-bem_planes", "z=0:symmetric",
                  "-bem_frequency", "500", "-bem_velocity", "1:1e-3"], "lies wholly in")


# The cases by name: ctest runs each as its own test (tests/system/CMakeLists.txt).
CASES = {
    "rigid_k8": case_rigid_k8,
    "rigid_k1": case_rigid_k1,
    "soft_k8": case_soft_k8,
    "laplace": case_laplace,
    "point_source_k4": case_point_source_k4,
    "burton_miller": case_burton_miller,
    "burton_miller_gpu": case_burton_miller_gpu,
    "burton_miller_refinement": case_burton_miller_refinement,
    "burton_miller_single_density": case_burton_miller_single_density,
    "near_matrix": case_near_matrix,
    "leaf_block": case_leaf_block,
    "radiation_cube": case_radiation_cube,
    "bm_sharp_edges": case_bm_sharp_edges,
    "shipped_meshes": case_shipped_meshes,
    "quadrature_refinement": case_quadrature_refinement,
    "mpi": case_mpi,
    "petsc_options": case_petsc_options,
    "bad_input": case_bad_input,
    "hostile_options": case_hostile_options,
    "hostile_second_round": case_hostile_second_round,
    "fmm_vs_direct": case_fmm_vs_direct,
    "far_from_origin": case_far_from_origin,
    "field": case_field,
    "field_gmsh": case_field_gmsh,
    "surface_groups": case_surface_groups,
    "sweep": case_sweep,
    "mpi_tree": case_mpi_tree,
    "mpi_distributed": case_mpi_distributed,
    "pvtu": case_pvtu,
    "regularised": case_regularised,
    "wideband": case_wideband,
    "sources": case_sources,
    "sources_ears": case_sources_ears,
    "sofa": case_sofa,
    "numcalc": case_numcalc,
    "split_frequencies": case_split_frequencies,
    "numcalc_groups": case_numcalc_groups,
    "planes": case_planes,
    "baffle": case_baffle,
}

if CASE not in CASES:
    sys.exit("unknown case " + CASE)
CASES[CASE]()
print("passed")
