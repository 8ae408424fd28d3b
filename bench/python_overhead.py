#!/usr/bin/env python3
"""The Python module's cost against the command line: the same solve run by `bem_solve` and by
`fmbem.solve`, alternately (ABAB...), in one process tree on the same machine, each the whole run
(PETSc's start, the mesh, set-up, solve) timed from outside, and the set-up and solve times the
runs report. The module adds no copy of surface-sized data per MatMult (the operator is the
program's own); what it adds is the solution's arrays handed over once per solve.

    python_overhead.py [--mesh icosphere:6] [--k 8] [--repeat 3] [--options "..."]
        BEM_SOLVE (default build/bin/bem_solve); run with the fmbem package importable
        (/opt/fmbem-python/bin/python, or PYTHONPATH=build/python).
Prints a Markdown table (bench/results/python_overhead.md).
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import fmbem

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli_run(bem_solve, words):
    start = time.perf_counter()
    done = subprocess.run([bem_solve, *words], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    times = re.search(r"times +set-up ([\d.]+) s, solve ([\d.]+) s", done.stdout)
    iterations = re.search(r"solver +(\d+) iterations", done.stdout)
    return wall, float(times.group(1)), float(times.group(2)), int(iterations.group(1))


def python_run(words):
    # A fresh interpreter a run, as the command line gets a fresh process: PETSc's start counts.
    code = ("import sys, time, fmbem; t = time.perf_counter(); "
            "s = fmbem.solve(options=sys.argv[1:]).solutions[0]; "
            "print('RESULT', time.perf_counter() - t, s.setup_seconds, s.solve_seconds, s.iterations)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *words], capture_output=True, text=True,
                          check=True)
    wall = time.perf_counter() - start
    inner, setup, solve, iterations = done.stdout.split("RESULT")[1].split()
    return wall, float(setup), float(solve), int(iterations), float(inner)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mesh", default="icosphere:6")
    parser.add_argument("--k", default="8")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--options", default="")
    args = parser.parse_args()
    bem_solve = os.environ.get("BEM_SOLVE", os.path.join(SOURCE, "build", "bin", "bem_solve"))
    words = ["-mesh", args.mesh, "-k", args.k, *shlex.split(args.options)]
    cli, py = [], []
    for _ in range(args.repeat):
        cli.append(cli_run(bem_solve, words))
        py.append(python_run(words))
    assert len({r[3] for r in cli + py}) == 1, "the iterations differ between the runs"
    med = lambda rows, i: statistics.median(r[i] for r in rows)
    print(f"| what | bem_solve (s) | fmbem.solve (s) | ratio |")
    print(f"|---|---|---|---|")
    for name, i in (("whole run (wall, fresh process)", 0), ("set-up (reported)", 1),
                    ("solve (reported)", 2)):
        print(f"| {name} | {med(cli, i):.3f} | {med(py, i):.3f} | {med(py, i) / med(cli, i):.3f} |")
    print(f"\nfmbem.solve's call alone (inside the interpreter, after `import fmbem`): "
          f"{statistics.median(r[4] for r in py):.3f} s; the rest of its whole run is the "
          f"interpreter's start and imports.")
    print("\nEach pair (bem_solve, fmbem.solve): whole / set-up / solve s")
    for i, (c, p) in enumerate(zip(cli, py)):
        print(f"    {i + 1}: {c[0]:.3f} / {c[1]:.3f} / {c[2]:.3f}   {p[0]:.3f} / {p[1]:.3f} / {p[2]:.3f}")
    print(f"\nmedians of {args.repeat} alternating runs; {cli[0][3]} iterations; "
          f"`{' '.join(words)}`; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")


if __name__ == "__main__":
    main()
