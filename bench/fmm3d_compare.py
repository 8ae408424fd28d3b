"""Time FMM3D's Helmholtz FMM (fmm3dpy.hfmm3d) on the point set fmm_matmult writes.

Compares against our C++ FMM by running FMM3D on the same sources, charges and
targets that ``fmm_matmult -points DIR`` writes, and measuring its accuracy against
the direct-summation reference written next to them:

    phi(x) = sum_j exp(i k |x - y_j|) / (4 pi |x - y_j|) q_j.

DIR/points.bin (little-endian): int64 ns, int64 nt, float64 k, ns*3 float64 source
coordinates, ns*2 float64 complex charges (re, im), nt*3 float64 target coordinates.
DIR/reference.bin: int64 nsample, nsample int64 target indices (0-based),
nsample*2 float64 complex reference potentials.

For each eps one hfmm3d call (targets, potential only) is timed with wall-clock
time (minimum over --repeat calls) and the relative 2-norm error on the sampled
targets is reported. The table is printed as Markdown and written with the run
details to DIR/fmm3d_results.json.

The kernel normalisation differs between FMM3D versions (fmm3dpy 2.x includes the
1/(4 pi), older releases did not); it is detected with a one-pair probe call.

FMM3D runs on one thread here (OMP_NUM_THREADS=1; the PyPI wheel has no OpenMP).

    pip install fmm3dpy numpy
    python3 bench/fmm3d_compare.py DIR [--eps 1e-3 1e-6 ...] [--repeat N]
"""

import argparse
import json
import os
import time

os.environ["OMP_NUM_THREADS"] = "1"  # before fmm3dpy (and its OpenMP, if any) loads

import fmm3dpy  # noqa: E402
import numpy as np  # noqa: E402


def load(directory):
    """Return k, sources (3, ns), charges (ns,), targets (3, nt), sample indices, reference."""
    path = os.path.join(directory, "points.bin")
    ns, nt = np.fromfile(path, dtype="<i8", count=2)
    k = float(np.fromfile(path, dtype="<f8", count=1, offset=16)[0])
    data = np.fromfile(path, dtype="<f8", offset=24)
    assert data.size == 3 * ns + 2 * ns + 3 * nt, "points.bin has the wrong size"
    # (n, 3) row-major is (3, n) column-major: the layout Fortran wants, without a copy.
    sources = data[: 3 * ns].reshape(ns, 3).T
    charges = data[3 * ns : 5 * ns].view(np.complex128)
    targets = data[5 * ns :].reshape(nt, 3).T

    ref = np.fromfile(os.path.join(directory, "reference.bin"), dtype="<i8")
    nsample = ref[0]
    assert ref.size == 1 + 3 * nsample, "reference.bin has the wrong size"
    index = ref[1 : 1 + nsample]
    reference = ref[1 + nsample :].view(np.complex128)
    return k, sources, charges, targets, index, reference


def kernel_scale(k):
    """Factor taking FMM3D's potential to ours: 1, or 1/(4 pi) for FMM3D's e^{ikr}/r."""
    pot = fmm3dpy.hfmm3d(
        eps=1e-12,
        zk=k,
        sources=np.zeros((3, 1), order="F"),
        charges=np.ones(1, dtype=np.complex128),
        targets=np.asfortranarray([[1.0], [0.0], [0.0]]),
        pgt=1,
    ).pottarg[0]
    ratio = abs(pot / (np.exp(1j * k) / (4 * np.pi)))
    if abs(ratio - 1) < 1e-6:
        return 1.0
    if abs(ratio - 4 * np.pi) < 1e-6:
        return 1 / (4 * np.pi)
    raise RuntimeError(f"unexpected FMM3D kernel normalisation (ratio {ratio})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", help="directory with points.bin and reference.bin")
    parser.add_argument(
        "--eps",
        type=float,
        nargs="+",
        default=[1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8],
        help="FMM3D tolerances to time",
    )
    parser.add_argument("--repeat", type=int, default=1, help="minimum time over N calls")
    args = parser.parse_args()

    k, sources, charges, targets, index, reference = load(args.directory)
    scale = kernel_scale(k)
    ns, nt = sources.shape[1], targets.shape[1]
    print(
        f"fmm3dpy {fmm3dpy.__version__}: ns {ns} nt {nt} k {k:g} sample {index.size} "
        f"scale {scale:.6g} repeat {args.repeat}\n"
    )
    print("| eps | time (s) | relative error |")
    print("|---|---|---|")
    results = []
    for eps in args.eps:
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            out = fmm3dpy.hfmm3d(
                eps=eps, zk=k, sources=sources, charges=charges, targets=targets, pg=0, pgt=1
            )
            best = min(best, time.perf_counter() - start)
        if out.ier != 0:
            print(f"warning: hfmm3d returned ier = {out.ier} for eps = {eps:g}")
        diff = out.pottarg[index] * scale - reference
        error = float(np.sqrt(np.sum(np.abs(diff) ** 2) / np.sum(np.abs(reference) ** 2)))
        print(f"| {eps:.0e} | {best:.3f} | {error:.2e} |", flush=True)
        results.append({"eps": eps, "seconds": best, "error": error})

    summary = {
        "fmm3dpy_version": fmm3dpy.__version__,
        "ns": int(ns),
        "nt": int(nt),
        "k": float(k),
        "nsample": int(index.size),
        "repeat": args.repeat,
        "omp_num_threads": os.environ["OMP_NUM_THREADS"],
        "results": results,
    }
    with open(os.path.join(args.directory, "fmm3d_results.json"), "w") as f:
        json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
