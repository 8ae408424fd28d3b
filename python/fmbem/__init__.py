"""fmbem from Python: the boundary element solver of ``bem_solve``, with meshes from arrays
and results as numpy arrays.

    import fmbem
    run = fmbem.solve("icosphere:4", k=8)
    u = run.solutions[0].unknown          # the surface pressure, one value per element

A run is ``bem_solve``'s own: the same options (``-bem_*``, ``-fmm_*`` and PETSc's ``-ksp_*``,
``-pc_*``, given as a dict or a command-line string), the same checks and messages, the same
numbers bit for bit; the files the options ask for are written as well. The summary goes to
the process's standard output, as the program prints it.
"""

from __future__ import annotations

import itertools
import queue
import shlex
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from . import _fmbem

Error = _fmbem.Error

__all__ = ["Error", "SolveFailed", "Surface", "Solution", "Run", "Operator", "solve", "solve_iter",
           "read_mesh", "petsc"]


class SolveFailed(Error):
    """A solve did not converge (bem_solve's exit status 2); ``run`` holds every solve's result."""

    def __init__(self, message: str, run: "Run"):
        super().__init__(message)
        self.run = run


_names = itertools.count(1)


class _Stopped(Exception):
    """Ends a run whose solves are no longer wanted (solve_iter closed early)."""


class Surface:
    """A closed triangle surface given as arrays: ``vertices`` (n, 3) in metres, ``triangles``
    (m, 3) vertex indices (counter-clockwise seen from the fluid, as in a mesh file), and
    optionally ``groups``, one positive tag per triangle (0 or less: none), with
    ``group_names`` {tag: name} for the conditions that name groups (``-bem_velocity`` ...).
    The arrays are copied; the mesh is checked as a file's is when a run reads it."""

    def __init__(self, vertices, triangles, groups=None, group_names: Mapping[int, str] | None = None):
        self._held = _fmbem.make_surface(
            f"python-{next(_names)}",
            np.asarray(vertices, dtype=np.float64),
            np.asarray(triangles, dtype=np.int64),
            None if groups is None else np.asarray(groups, dtype=np.int64),
            dict(group_names or {}),
        )

    @property
    def spec(self) -> str:
        """The ``-mesh`` that reads this surface (``memory:NAME``) while the object lives."""
        return self._held.spec

    @classmethod
    def from_gmsh(cls, gmsh) -> "Surface":
        """The triangles of the current model of Gmsh's Python API (``import gmsh``), with its
        two-dimensional physical groups as groups (their tags and names)."""
        tags, coords, _ = gmsh.model.mesh.getNodes()
        index = {int(t): i for i, t in enumerate(tags)}
        vertices = np.asarray(coords, dtype=np.float64).reshape(-1, 3)
        triangles, groups, names = [], [], {}
        physical = gmsh.model.getPhysicalGroups(2)
        entity_group = {}
        for dim, tag in physical:
            names[tag] = gmsh.model.getPhysicalName(dim, tag)
            for entity in gmsh.model.getEntitiesForPhysicalGroup(dim, tag):
                entity_group.setdefault(int(entity), tag)
        for _, entity in gmsh.model.getEntities(2):
            types, _, nodes = gmsh.model.mesh.getElements(2, entity)
            for element_type, element_nodes in zip(types, nodes):
                if element_type != 2:  # 3-node triangles only
                    raise Error(f"Gmsh model: surface {entity} has elements of type {element_type}; "
                                "fmbem needs 3-node triangles")
                for a, b, c in np.asarray(element_nodes, dtype=np.int64).reshape(-1, 3):
                    triangles.append((index[a], index[b], index[c]))
                    groups.append(entity_group.get(int(entity), 0))
        if not physical:
            return cls(vertices, triangles)
        return cls(vertices, triangles, groups, {t: n for t, n in names.items() if n})


@dataclass
class Solution:
    """One solve of a run (a k and a source), as bem_solve's files hold it."""

    k: float
    k_index: int
    frequency: float | None  # Hz, when the run was given frequencies
    source: int  # 0-based, of the run's sources
    source_label: str
    solved: bool
    reason: str  # KSP's converged reason, or REFUSED
    refusal: str  # why a solve after the first was refused
    iterations: int
    residual: float  # the true relative residual
    setup_seconds: float
    solve_seconds: float
    error_max: float | None  # against the exact solution, where one is known
    error_relative_l2: float | None
    unknown_name: str  # "u": the surface pressure; "q": its normal derivative
    unknown: np.ndarray  # complex, one value per element (the mesh's order)
    surface: dict[str, np.ndarray]  # -o's arrays per element (u_re, ..., p_re, vn_re, spl_db)
    field: dict[str, np.ndarray]  # -bem_field_csv's columns (x, y, z, scattered_re, ...)
    farfield: dict[str, np.ndarray]  # -bem_farfield_csv's columns


@dataclass
class Run:
    """What a run gave: each solve in the order solved (k by k, the sources of a k together) and
    bem_solve's exit status (0, or 2 when a solve failed); ``mesh``: the mesh's arrays
    (read_mesh), read when first asked for."""

    solutions: list[Solution] = field(default_factory=list)
    exit_status: int = 0
    mesh_spec: str | None = None
    _surface: Any = field(default=None, repr=False)  # keeps a Surface readable for `mesh`
    _mesh: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def hrtf(self) -> dict[str, Any]:
        """The transfer functions of a run with ``bem_field_reference`` (``bem_sofa``) in SOFA's
        layout, for sofar/pyfar: ``data`` (M points x R sources x N frequencies, complex: the
        field over the reference, Data.Real + i Data.Imag), ``frequencies`` (Hz), ``positions``
        (M x 3, m: the field points, the SOFA file's source positions by reciprocity) and
        ``receivers`` (the R sources' labels). Every solve must have succeeded."""
        if not self.solutions or "hrtf_re" not in self.solutions[0].field:
            raise Error("no HRTFs: the run needs field points and bem_field_reference (or bem_sofa)")
        failed = [s for s in self.solutions if not s.solved]
        if failed:
            raise Error(f"{len(failed)} solves failed: no complete HRTF set")
        ks = sorted({s.k_index for s in self.solutions})
        count = 1 + max(s.source for s in self.solutions)
        first = self.solutions[0].field
        data = np.empty((first["x"].size, count, len(ks)), dtype=complex)
        frequencies = np.empty(len(ks))
        receivers = [""] * count
        for s in self.solutions:
            data[:, s.source, ks.index(s.k_index)] = s.field["hrtf_re"] + 1j * s.field["hrtf_im"]
            frequencies[ks.index(s.k_index)] = s.frequency if s.frequency is not None else np.nan
            receivers[s.source] = s.source_label
        positions = np.column_stack([first["x"], first["y"], first["z"]])
        return {"data": data, "frequencies": frequencies, "positions": positions,
                "receivers": receivers}

    @property
    def mesh(self) -> dict[str, Any] | None:
        if self._mesh is None and self.mesh_spec is not None:
            self._mesh = _fmbem.load_mesh(self.mesh_spec)
        return self._mesh


def _option_words(options) -> list[str]:
    """A dict {name: value} (name with or without the dash; True: a flag, a list: comma-separated),
    a command-line string, or a list of its words, as words."""
    if options is None:
        return []
    if isinstance(options, str):
        return shlex.split(options)
    if isinstance(options, (list, tuple)):
        return [str(w) for w in options]
    words = []
    for name, value in dict(options).items():
        name = name if name.startswith("-") else "-" + name
        if value is None or value is True:
            words.append(name)
            continue
        words.append(name)
        if value is False:
            words.append("false")
        elif isinstance(value, (list, tuple, np.ndarray)):
            words.append(",".join(repr(float(v)) if isinstance(v, float) else str(v) for v in value))
        elif isinstance(value, float):
            words.append(repr(value))
        else:
            words.append(str(value))
    return words


class _FieldPoints:
    """Field points from an (m, 3) array (metres), readable as the ``-bem_field`` ``memory:NAME``
    while this object lives."""

    def __init__(self, points):
        self._held = _fmbem.make_field_points(f"python-points-{next(_names)}",
                                              np.asarray(points, dtype=np.float64))

    @property
    def spec(self) -> str:
        return self._held.spec


def _words(mesh, k, frequency, options, field_points=None) -> list[str]:
    """The run's words; ``field_points`` a _FieldPoints, kept alive by the caller for the run."""
    words = _option_words(options)
    given = {w for w in words if w.startswith("-") and not w.lstrip("-")[:1].isdigit()}
    if field_points is not None:
        clashes = given & {"-bem_field", "-bem_field_plane", "-bem_field_sphere"}
        if clashes:
            raise Error(f"the field points are given twice: as field_points and as the option "
                        f"{sorted(clashes)[0]}")
        words += ["-bem_field", field_points.spec]
    if mesh is not None:
        if "-mesh" in given:
            raise Error("the mesh is given twice: as the argument and as the option -mesh")
        words = ["-mesh", mesh.spec if isinstance(mesh, Surface) else str(mesh)] + words
    for name, value in (("-k", k), ("-bem_frequency", frequency)):
        if value is None:
            continue
        if name in given:
            raise Error(f"{name} is given twice: as the argument and as an option")
        words += _option_words({name: list(np.atleast_1d(value)) if not isinstance(value, str) else value})
    return words


def read_mesh(spec: str) -> dict[str, Any]:
    """The mesh ``spec`` names (a .msh file, icosphere:L[:R], numcalc:PATH) as a run reads and
    checks it: vertices, triangles, centroids, normals, areas, groups (tag per triangle, -1
    none) and group_names."""
    return _fmbem.load_mesh(str(spec))


def _mesh_spec(words: list[str]) -> str | None:
    for i, w in enumerate(words[:-1]):
        if w == "-mesh":
            return words[i + 1]
    return None


def solve_iter(mesh=None, *, k=None, frequency=None, options=None,
               field_points=None) -> Iterator[Solution]:
    """The solves of a run as they finish (a sweep's progress); arguments as ``solve``. A solve
    that failed is yielded with ``solved`` False; bad input raises ``Error``. Stopping early
    ends the run after the solve under way."""
    points = None if field_points is None else _FieldPoints(field_points)
    words = _words(mesh, k, frequency, options, points)
    done = object()
    results: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    failure: list[BaseException] = []

    def on_solve(record):
        if stop.is_set():
            raise _Stopped
        results.put(Solution(**record))

    def work():
        try:
            _fmbem.run(words, on_solve)
        except BaseException as e:  # handed to the consumer
            failure.append(e)
        finally:
            results.put(done)

    worker = threading.Thread(target=work, name="fmbem-run", daemon=True)
    worker.start()
    try:
        while True:
            item = results.get()
            if item is done:
                break
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # let the run reach its next solve and end
            try:
                results.get(timeout=0.1)
            except queue.Empty:
                pass
        worker.join()
    if failure and not isinstance(failure[0], _Stopped):
        raise failure[0]


def solve(mesh=None, *, k=None, frequency=None, options=None, field_points=None,
          on_solve: Callable[[Solution], None] | None = None, check: bool = True) -> Run:
    """Solves as ``bem_solve`` would with these options.

    mesh: a ``Surface``, or a ``-mesh`` spec (a .msh file, ``icosphere:L[:R]``, ``numcalc:PATH``).
    k, frequency: a wavenumber (1/m) or frequency (Hz), a list of them, or a sweep's text
    ("100:1000:100"), as ``-k`` and ``-bem_frequency``.
    options: every other option, as a dict ({"bem_formulation": "bm", "ksp_rtol": 1e-8}), a
    command-line string ("-bem_formulation bm -ksp_rtol 1e-8") or its list of words.
    field_points: an (m, 3) array of points (metres) where each solution's field is evaluated
    (``Solution.field``: x, y, z and the pressures, as ``-bem_field`` with a CSV of them).
    on_solve: called with each Solution as it finishes.
    check: raise SolveFailed when a solve failed (else see Run.exit_status).
    Bad input raises fmbem.Error with bem_solve's message; nothing is solved then."""
    points = None if field_points is None else _FieldPoints(field_points)
    words = _words(mesh, k, frequency, options, points)
    run = Run()

    def collect(record):
        solution = Solution(**record)
        run.solutions.append(solution)
        if on_solve is not None:
            on_solve(solution)

    run.exit_status = _fmbem.run(words, collect)
    run.mesh_spec = _mesh_spec(words)
    run._surface = mesh if isinstance(mesh, Surface) else None
    if check and run.exit_status != 0:
        failed = [s for s in run.solutions if not s.solved]
        first = failed[0] if failed else None
        detail = f": at k = {first.k:g}, source {first.source + 1}: {first.refusal or first.reason}" if first else ""
        raise SolveFailed(f"{len(failed)} of {len(run.solutions)} solves failed{detail}", run)
    return run


def petsc():
    """petsc4py's PETSc module on the PETSc fmbem runs on (complex scalars): Debian's petsc4py
    loads the build PETSC_DIR names, so it is set to fmbem's when unset; another one is refused
    (two PETSc libraries in one process cannot share objects)."""
    import os

    os.environ.setdefault("PETSC_DIR", _fmbem.petsc_dir)
    try:
        import petsc4py
    except ImportError as e:
        raise Error("petsc4py is not installed (Debian: python3-petsc4py-complex)") from e
    petsc4py.init()
    from petsc4py import PETSc

    if not np.issubdtype(PETSc.ScalarType, np.complexfloating):
        raise Error(f"petsc4py runs a PETSc with real scalars (PETSC_DIR={os.environ['PETSC_DIR']}); "
                    f"fmbem's is complex: set PETSC_DIR={_fmbem.petsc_dir}")
    return PETSc


class Operator:
    """A run's operator at one of its wavenumbers, for driving the solve yourself: ``mat()`` the
    boundary operator A (a PETSc shell matrix whose MatMult is the FMM), ``ksp()`` the KSP the run
    would use (its preconditioner and -ksp_* options set up), ``rhs(source)`` a source's b,
    ``vector()`` a vector of A's layout, ``gather(x)`` a solution in the mesh's element order,
    ``field(x)`` its field at ``field_points`` (and far field, with ``-bem_farfield``);
    PETSc objects as petsc4py's (``fmbem.petsc()``), each keeping this Operator alive (A's products
    read the operator it holds). Arguments as ``solve``'s; ``index`` picks the sweep point, and
    ``at(index)`` gives the same run's operator at another.

        op = fmbem.Operator("icosphere:4", k=8)
        A, b, x = op.mat(), op.rhs(), op.vector()
        ksp = op.ksp()
        ksp.solve(b, x)                 # or any petsc4py KSP on A
        u = op.gather(x)                # numpy, the surface pressure per element
        p = op.field(x)["field"]        # with field_points=...: x, y, z, total_re, ...
    """

    def __init__(self, mesh=None, *, k=None, frequency=None, options=None, field_points=None,
                 index: int = 0):
        petsc()  # petsc4py on this PETSc before any object is handed over
        self._surface = mesh if isinstance(mesh, Surface) else None
        self._points = None if field_points is None else _FieldPoints(field_points)
        self._core = _fmbem.Operator(_words(mesh, k, frequency, options, self._points), index)

    @property
    def wavenumbers(self) -> list[float]:
        return list(self._core.wavenumbers)

    @property
    def k(self) -> float:
        return self._core.wavenumbers[self._core.index]

    @property
    def sources(self) -> int:
        return self._core.sources

    def at(self, index: int) -> "Operator":
        """The same run's operator at sweep point ``index`` (a new Operator; this one stays)."""
        other = Operator.__new__(Operator)
        other._surface = self._surface
        other._points = self._points
        other._core = self._core.at(index)
        return other

    def _tie(self, obj):
        # The PETSc object keeps this Operator (the operator its products read) alive.
        obj.setAttr("fmbem.Operator", self)
        return obj

    def mat(self):
        return self._tie(self._core.mat())

    def ksp(self):
        return self._tie(self._core.ksp())

    def vector(self):
        return self._core.vector()

    def rhs(self, source: int = 0):
        return self._core.right_hand_side(source)

    def gather(self, x) -> np.ndarray:
        return self._core.gather(x)

    def field(self, x, source: int = 0) -> dict[str, dict[str, np.ndarray]]:
        """The field of solution ``x`` (source ``source``'s) at the run's field points
        (``field_points`` or a ``-bem_field*`` option) and its far field (``-bem_farfield``):
        ``{"field": ..., "farfield": ...}``, the columns ``Solution.field`` and ``.farfield`` hold
        (on rank 0; empty on the others)."""
        return self._core.field(source, x)
