"""The Python module against the command line: the same problems give the same numbers bit for
bit (both are run_bem_solve; the CSV files hold 17 significant digits, which read back exactly),
meshes from arrays equal the files they came from, and bad input raises fmbem.Error with the
command line's message, the interpreter left working."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fmbem

SOURCE = Path(__file__).resolve().parents[2]
BEM_SOLVE = os.environ.get("FMBEM_BEM_SOLVE", str(SOURCE / "build" / "bin" / "bem_solve"))


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return {name: np.array([float(r[i]) for r in rows[1:]]) for i, name in enumerate(rows[0])}


def bem_solve(tmp_path, *args):
    done = subprocess.run([BEM_SOLVE, *args], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def test_sphere_from_arrays_equals_the_command_line(tmp_path):
    options = "-bem_formulation bm -bem_farfield 12"
    bem_solve(tmp_path, "-mesh", "icosphere:3", "-k", "2", *options.split(),
              "-bem_csv", "u.csv", "-bem_farfield_csv", "far.csv")
    cli, far = read_csv(tmp_path / "u.csv"), read_csv(tmp_path / "far.csv")

    mesh = fmbem.read_mesh("icosphere:3")
    assert np.array_equal(mesh["centroids"], np.column_stack([cli["x"], cli["y"], cli["z"]]))
    surface = fmbem.Surface(mesh["vertices"], mesh["triangles"])
    for given in (surface, "icosphere:3"):
        run = fmbem.solve(given, k=2, options=options)
        assert run.ok and len(run.solutions) == 1
        s = run.solutions[0]
        assert s.solved and s.unknown_name == "u" and s.unknown.dtype == np.complex128
        assert np.array_equal(s.unknown.real, cli["re"]) and np.array_equal(s.unknown.imag, cli["im"])
        assert np.array_equal(s.surface["u_re"], cli["re"])
        for name, values in far.items():
            assert np.array_equal(s.farfield[name], values), name
        # The Mie series' error the command line reports, and the mesh's arrays.
        assert s.error_relative_l2 is not None and 0 < s.error_relative_l2 < 1e-2
        assert np.array_equal(run.mesh["centroids"], mesh["centroids"])
    # The same options as a dict.
    run = fmbem.solve(surface, k=2, options={"bem_formulation": "bm", "-bem_farfield": 12})
    assert np.array_equal(run.solutions[0].unknown.real, cli["re"])


def test_groups_from_arrays_equal_the_file(tmp_path):
    """Two vibrating ears given by group name on a surface from arrays: the command line's
    physical values (p, v_n per element) on the file it came from, bit for bit."""
    path = str(SOURCE / "meshes" / "sphere_two_ears_1.msh")
    options = ["-bem_frequency", "300", "-bem_velocity", "left_ear:1e-3,right_ear:2e-3",
               "-bem_sources", "separate"]
    bem_solve(tmp_path, "-mesh", path, *options, "-bem_csv", "ears.csv")
    mesh = fmbem.read_mesh(path)
    assert set(mesh["group_names"].values()) == {"left_ear", "right_ear", "head"}
    surface = fmbem.Surface(mesh["vertices"], mesh["triangles"], mesh["groups"], mesh["group_names"])
    run = fmbem.solve(surface, options=options)
    assert [s.source for s in run.solutions] == [0, 1]
    for s in run.solutions:
        cli = read_csv(tmp_path / f"ears_s{s.source + 1:04d}.csv")
        assert s.frequency == 300.0
        for name in ("group", "p_re", "p_im", "vn_re", "vn_im"):
            assert np.array_equal(s.surface[name], cli[name]), name


def test_sweep_yields_each_solve_as_it_finishes():
    seen = []
    run = fmbem.solve("icosphere:2", k="1:3:1", on_solve=lambda s: seen.append(s.k))
    assert seen == [1.0, 2.0, 3.0] and [s.k_index for s in run.solutions] == [0, 1, 2]
    assert [s.k for s in fmbem.solve_iter("icosphere:2", k=[1, 2])] == [1.0, 2.0]
    # Stopping early ends the run; the next run is whole.
    for s in fmbem.solve_iter("icosphere:2", k=[1, 2, 3]):
        break
    assert len(fmbem.solve("icosphere:2", k=[1, 2]).solutions) == 2


def test_field_points_from_an_array_equal_a_csv_of_them(tmp_path):
    """Field points given as an array: the command line's field at a CSV of the same points, bit
    for bit (the CSV written with repr's 17 digits reads back exactly), over a sweep of two k."""
    rng = np.random.default_rng(7)
    directions = rng.normal(size=(9, 3))
    points = directions / np.linalg.norm(directions, axis=1)[:, None] * rng.uniform(1.5, 4, (9, 1))
    (tmp_path / "points.csv").write_text(
        "".join(",".join(repr(float(c)) for c in p) + "\n" for p in points))
    bem_solve(tmp_path, "-mesh", "icosphere:3", "-k", "1,3", "-bem_field", "points.csv",
              "-bem_field_csv", "field.csv")
    run = fmbem.solve("icosphere:3", k=[1, 3], field_points=points)
    for s in run.solutions:
        cli = read_csv(tmp_path / f"field_k{s.k_index + 1:04d}.csv")
        assert np.array_equal(np.column_stack([s.field["x"], s.field["y"], s.field["z"]]), points)
        for name in ("scattered_re", "scattered_im", "total_re", "total_im", "exact_re"):
            assert np.array_equal(s.field[name], cli[name]), name
    with pytest.raises(fmbem.Error, match="shape"):
        fmbem.solve("icosphere:1", k=1, field_points=[1.0, 2.0, 3.0])
    with pytest.raises(fmbem.Error, match="given twice"):
        fmbem.solve("icosphere:1", k=1, field_points=points, options="-bem_field_sphere fibonacci:10:2")
    with pytest.raises(fmbem.Error, match="point 2"):
        fmbem.solve("icosphere:1", k=1, field_points=[[2, 0, 0], [np.nan, 0, 0]])


def test_bad_input_raises_the_command_lines_message():
    with pytest.raises(fmbem.Error, match="-bem_formulation nonsense is not known"):
        fmbem.solve("icosphere:2", k=1, options={"bem_formulation": "nonsense"})
    with pytest.raises(fmbem.Error, match="did you mean"):
        fmbem.solve("icosphere:2", k=1, options="-bem_formulaton bm")
    with pytest.raises(fmbem.Error, match="shape"):
        fmbem.Surface(np.zeros((4, 2)), [[0, 1, 2]])
    with pytest.raises(fmbem.Error, match="outside"):
        fmbem.Surface(np.zeros((3, 3)), [[0, 1, 3]])
    with pytest.raises(fmbem.Error, match="one group tag per triangle"):
        fmbem.Surface(np.eye(3), [[0, 1, 2]], groups=[1, 2])
    with pytest.raises(fmbem.Error, match="given twice"):
        fmbem.solve("icosphere:2", k=1, options={"k": 2})
    # An open surface (one triangle of a tetrahedron's four) is refused as a file's would be.
    tetrahedron = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    with pytest.raises(fmbem.Error, match="(?i)open|closed|edge"):
        fmbem.solve(fmbem.Surface(tetrahedron, [[0, 2, 1], [0, 1, 3], [0, 3, 2]]), k=1)
    with pytest.raises(fmbem.Error, match="no surface of that name"):
        fmbem.solve("memory:none", k=1)
    # Still working after all that.
    assert fmbem.solve("icosphere:1", k=1).solutions[0].solved


def test_failed_solve_raises_with_every_result():
    with pytest.raises(fmbem.SolveFailed) as failed:
        fmbem.solve("icosphere:2", k=1, options="-ksp_max_it 1 -ksp_rtol 1e-12")
    s = failed.value.run.solutions[0]
    assert not s.solved and s.reason == "DIVERGED_ITS" and s.unknown.size == 0
    run = fmbem.solve("icosphere:2", k=1, options="-ksp_max_it 1 -ksp_rtol 1e-12", check=False)
    assert run.exit_status == 2 and not run.ok


def test_ranks_under_mpiexec_solve_as_one(tmp_path):
    """Two Python processes under mpiexec, each calling solve with the same arguments, are one
    run of two ranks (the distributed FMM): rank 0 receives the solution, equal to one process's
    to the solvers' tolerance. Both stop at a true relative residual of 1e-10; the operator is the
    same (the distributed FMM equals the whole one bit for bit), so the two solutions differ by
    at most cond(A) 2e-10 relative: 1e-8 allows cond(A) up to 50 (Burton-Miller on the sphere)."""
    script = tmp_path / "ranks.py"
    script.write_text(
        "import sys, numpy as np, fmbem\n"
        "run = fmbem.solve('icosphere:3', k=2, options='-bem_formulation bm -ksp_rtol 1e-10')\n"
        "if run.solutions:\n"
        "    np.save(sys.argv[1], run.solutions[0].unknown)\n")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    out = tmp_path / "two_ranks.npy"
    done = subprocess.run(["mpiexec", "-n", "2", "--oversubscribe", sys.executable, str(script),
                           str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fmm on 2 rank(s)" in done.stdout
    one = fmbem.solve("icosphere:3", k=2, options="-bem_formulation bm -ksp_rtol 1e-10")
    u1, u2 = one.solutions[0].unknown, np.load(out)
    assert np.linalg.norm(u2 - u1) <= 1e-8 * np.linalg.norm(u1)


def test_operator_driven_through_petsc4py_equals_solve():
    """The run's operator, KSP and right-hand side as petsc4py objects: the run's KSP from a
    zero guess on them repeats solve's solve bit for bit (the same operations in the same order;
    the regularised formulation needs no continuation here), and a KSP of one's own (GMRES, no
    preconditioner) on A reaches the same solution within its tolerance: both true residuals are
    below 1e-10 and A is well conditioned (second kind), so they agree to 1e-8."""
    PETSc = fmbem.petsc()
    options = "-ksp_rtol 1e-10 -bem_farfield 8"
    points = [[2.0, 0.5, 0.0], [0.0, -3.0, 1.0]]
    s = fmbem.solve("icosphere:3", k=2, options=options, field_points=points).solutions[0]
    op = fmbem.Operator("icosphere:3", k=2, options=options, field_points=points)
    assert op.k == 2.0 and op.sources == 1
    A, b, x, ksp = op.mat(), op.rhs(), op.vector(), op.ksp()
    ksp.solve(b, x)
    assert ksp.getIterationNumber() == s.iterations
    u = op.gather(x)
    assert np.array_equal(u, s.unknown)
    # The field of that solution is the solve's, by the same evaluation.
    fields = op.field(x)
    for kind in ("field", "farfield"):
        expected = getattr(s, kind)
        assert fields[kind].keys() == expected.keys()
        assert len(next(iter(expected.values()))) == (2 if kind == "field" else 8)
        for name, values in expected.items():
            assert np.array_equal(fields[kind][name], values), (kind, name)
    with pytest.raises(fmbem.Error, match="no field points"):
        fmbem.Operator("icosphere:2", k=1).field(x)
    own = PETSc.KSP().create()
    own.setOperators(A)
    own.setType("gmres")
    own.getPC().setType("none")
    own.setTolerances(rtol=1e-10)
    y = op.vector()
    own.solve(b, y)
    r = b.duplicate()
    A.mult(y, r)
    r.axpy(-1.0, b)
    assert r.norm() <= 1e-10 * b.norm() * 1.0001
    assert np.linalg.norm(op.gather(y) - u) <= 1e-8 * np.linalg.norm(u)
    with pytest.raises(fmbem.Error, match="no sweep point"):
        op.at(3)
    # The next k of a sweep; options nothing reads are refused as the command line refuses them.
    sweep = fmbem.Operator("icosphere:2", k=[1, 2])
    assert sweep.wavenumbers == [1.0, 2.0] and sweep.at(1).k == 2.0
    assert sweep.mat().getSize() == (320, 320)
    with pytest.raises(fmbem.Error, match="unknown option -ksp_rtoll"):
        fmbem.Operator("icosphere:2", k=1, options="-ksp_rtoll 1e-3")


def test_gmsh_model_straight_in_equals_its_file(tmp_path):
    """A sphere meshed with Gmsh's Python API, taken from the model (Surface.from_gmsh) and from
    the .msh file Gmsh writes of it: the same problem, the same numbers bit for bit; its physical
    group arrives by name."""
    import gmsh  # Debian: python3-gmsh
    gmsh.initialize([], readConfigFiles=False)
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("ball")
        gmsh.model.occ.addSphere(0, 0, 0, 0.5)
        gmsh.model.occ.synchronize()
        gmsh.model.addPhysicalGroup(2, [s for _, s in gmsh.model.getEntities(2)], 7)
        gmsh.model.setPhysicalName(2, 7, "skin")
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.15)
        gmsh.model.mesh.generate(2)
        surface = fmbem.Surface.from_gmsh(gmsh)
        path = str(tmp_path / "ball.msh")
        gmsh.write(path)
    finally:
        gmsh.finalize()
    options = "-bem_rigid skin"
    model = fmbem.solve(surface, k=3, options=options).solutions[0]
    written = fmbem.solve(path, k=3, options=options).solutions[0]
    assert model.unknown.size > 300
    assert np.array_equal(model.unknown, written.unknown)
