"""Would one Krylov solve for several sources pay? GMRES on the stacked system diag(A, ..., A)
[x_1; ...; x_m] = [b_1; ...; b_m] (one Krylov space, every MatMult one product with m densities:
what an FMM on several densities at once would serve, PETSc 3.18 having no block Krylov method)
against m separate solves, in iterations: the stacked solve needs each block's residual at the
separate solves' tolerance, so it runs at rtol / sqrt(m) on the stacked norm and reports the
largest block's true relative residual. m plane waves of a Fibonacci sphere (-bem_incident_dir
fibonacci:m), the default formulation and KSP (rbm, GMRES(30), no PC, rtol 1e-5).

    python bench/stacked_krylov.py MESH K M [M ...]
    python bench/stacked_krylov.py --numcalc PROJECT     # a NumCalc project's sources (ears)

Prints a Markdown table: m, the separate solves' iterations (largest and sum), the stacked
solve's iterations (each a product with m densities) at rtol and at rtol / sqrt(m), and the
largest block's true relative residual of each.
"""
import math
import sys

import numpy as np

import fmbem


def stacked_solve(PETSc, A, rhs, rtol, restart):
    m = len(rhs)
    n_local = rhs[0].getLocalSize()
    x_block, y_block = A.createVecs()

    class Stacked:
        def mult(self, mat, x, y):
            xs, ys = x.getArray(readonly=True), y.getArray()
            for i in range(m):
                x_block.setArray(xs[i * n_local:(i + 1) * n_local])
                A.mult(x_block, y_block)
                ys[i * n_local:(i + 1) * n_local] = y_block.getArray(readonly=True)

    size = (m * n_local, None)
    S = PETSc.Mat().createPython((size, size), Stacked(), comm=A.getComm())
    S.setUp()
    b = PETSc.Vec().createMPI(size, comm=A.getComm())
    b.setArray(np.concatenate([v.getArray(readonly=True) for v in rhs]))
    x = b.duplicate()
    ksp = PETSc.KSP().create(comm=A.getComm())
    ksp.setOperators(S)
    ksp.setType("gmres")
    ksp.setGMRESRestart(restart)
    ksp.getPC().setType("none")
    ksp.setTolerances(rtol=rtol, max_it=10000)
    ksp.solve(b, x)
    # Each block's true relative residual.
    r = b.duplicate()
    S.mult(x, r)
    r.aypx(-1.0, b)
    rs, bs = r.getArray(readonly=True), b.getArray(readonly=True)
    worst = max(np.linalg.norm(rs[i * n_local:(i + 1) * n_local]) /
                np.linalg.norm(bs[i * n_local:(i + 1) * n_local]) for i in range(m))
    return ksp.getIterationNumber(), ksp.getConvergedReason(), worst


def main():
    if sys.argv[1] == "--numcalc":
        # One run of the project: its first frequency, every source.
        mesh, k, counts = sys.argv[2], None, [None]
    else:
        mesh, k = sys.argv[1], float(sys.argv[2])
        counts = [int(a) for a in sys.argv[3:]] or [2, 8, 32]
    PETSc = fmbem.petsc()
    print("| mesh | k | m | separate: largest | separate: sum | stacked at rtol: iterations "
          "| largest block residual | stacked at rtol / sqrt(m): iterations "
          "| largest block residual |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in counts:
        if m is None:
            op = fmbem.Operator(None, options=f"-bem_numcalc {mesh}")
            m, k = op.sources, op.k
        else:
            op = fmbem.Operator(mesh, k=k, options=f"-bem_incident_dir fibonacci:{m}")
        A = op.mat()
        rhs = [op.rhs(i) for i in range(m)]
        ksp = op.ksp()
        rtol = ksp.getTolerances()[0]
        restart = 30
        separate = []
        for b in rhs:
            x = op.vector()
            ksp.solve(b, x)
            separate.append(ksp.getIterationNumber())
        at_rtol = stacked_solve(PETSc, A, rhs, rtol, restart)
        at_scaled = stacked_solve(PETSc, A, rhs, rtol / math.sqrt(m), restart)
        print(f"| {mesh} | {k:g} | {m} | {max(separate)} | {sum(separate)} | {at_rtol[0]} "
              f"| {at_rtol[2]:.2e} | {at_scaled[0]} | {at_scaled[2]:.2e} |", flush=True)


if __name__ == "__main__":
    main()
