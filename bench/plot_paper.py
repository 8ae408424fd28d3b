#!/usr/bin/python3
"""Redraws the reference paper's figures from the recorded results.

Usage:
    bench/plot_paper.py [RESULTS_DIR]       (default: bench/results; Debian's /usr/bin/python3)

Reads RESULTS_DIR/paper_experiment_cpu.csv and paper_experiment_gpu.csv (either may be missing;
written by bench/paper_experiment.sh) and the "All sizes" table of RESULTS_DIR/gpu_m2l.md
(bench/gpu_m2l), and writes into RESULTS_DIR:
    paper_error.png       max |u - exact| and relative L2 error vs N (the paper's Figure 2)
    paper_time.png        set-up + solve and s per MatMult vs N, log-log, O(N) guide (Figure 3)
    paper_m2l_tflops.png  M2L TFLOP/s vs N per scheme, p = 8 and 16 (Figure 4)
    paper_phases.png      the MatMult split by phase at the largest N, per device and p
Needs matplotlib: Debian's package, `apt-get install -y python3-matplotlib`.
"""
import csv
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PHASES = [("p2m_s", "P2M"), ("m2m_s", "M2M"), ("m2l_s", "M2L"), ("l2l_s", "L2L"),
          ("l2p_s", "L2P"), ("near_s", "near field (U, W, X)"),
          ("other_s", "correction and other")]
STYLE = {"cpu": dict(color="tab:blue"), "gpu": dict(color="tab:red")}
P_LINE = {8: "-", 16: "--"}


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def read_experiment(results):
    """Rows of the experiment CSVs that solved, as dicts with numbers where numeric."""
    rows = []
    for device in ("cpu", "gpu"):
        path = os.path.join(results, f"paper_experiment_{device}.csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["status"] != "ok":
                    continue
                out = dict(row)
                for key, value in row.items():
                    if key not in ("device", "mesh", "reason", "m2l_on", "near_on", "extra",
                                   "date", "machine", "commit", "status"):
                        out[key] = num(value)
                out["p"] = int(out["p"])
                rows.append(out)
    return rows


def series(rows, device, p):
    chosen = [r for r in rows if r["device"] == device and r["p"] == p and r["N"]]
    return sorted(chosen, key=lambda r: r["N"])


def read_gpu_m2l(results):
    """The "All sizes" table of gpu_m2l.md: {(p, scheme): [(N, TFLOP/s)]}, plus the CPU
    reference (scheme "CPU reference") from its CPU ms column (8 p^4 flops per pair)."""
    path = os.path.join(results, "gpu_m2l.md")
    curves = {}
    if not os.path.exists(path):
        return curves
    header = None
    best = {}  # cluster and ij: the best chunk size B per (N, p)
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| L | N | p | scheme | pairs | GPU ms | TFLOP/s"):
                header = cells
                continue
            if header is None:
                continue
            if not line.startswith("|"):
                if line.strip():
                    header = None
                continue
            if cells[0].startswith("---") or len(cells) != len(header):
                continue
            r = dict(zip(header, cells))
            n, p, scheme = int(r["N"]), int(r["p"]), r["scheme"]
            tflops, pairs, cpu_ms = num(r["TFLOP/s"]), num(r["pairs"]), num(r["CPU ms"])
            name = scheme.split()[0]
            if re.search(r" B=\d+", scheme):
                key = (p, name + " (best B)", n)
                best[key] = max(best.get(key, 0.0), tflops)
            else:
                curves.setdefault((p, name), {})[n] = tflops
            if cpu_ms:
                curves.setdefault((p, "CPU reference, 16 cores"), {})[n] = \
                    8 * pairs * p ** 4 / (cpu_ms * 1e-3) / 1e12
    for (p, name, n), tflops in best.items():
        curves.setdefault((p, name), {})[n] = tflops
    return {key: sorted(points.items()) for key, points in curves.items()}


def mesh_markers(ax, rows, ykey, **kw):
    """Icosphere points as circles, Gmsh points as squares."""
    for marker, family in (("o", "icosphere"), ("s", "gmsh")):
        pts = [(r["N"], r[ykey]) for r in rows if r["mesh"].startswith(family) and r[ykey]]
        if pts:
            ax.plot(*zip(*pts), marker, mfc="none", **kw)


def plot_error(rows, out):
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    for device in ("cpu", "gpu"):
        for p in (8, 16):
            s = series(rows, device, p)
            if not s:
                continue
            n = [r["N"] for r in s]
            ax.plot(n, [r["max_error"] for r in s], P_LINE[p], **STYLE[device],
                    label=f"{device.upper()} p = {p}: max error")
            ax.plot(n, [r["rel_l2_error"] for r in s], P_LINE[p], **STYLE[device], alpha=0.45,
                    label=f"{device.upper()} p = {p}: relative L2 error")
            mesh_markers(ax, s, "max_error", **STYLE[device])
            mesh_markers(ax, s, "rel_l2_error", **STYLE[device], alpha=0.45)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N (elements); o icosphere, \u25a1 Gmsh")
    ax.set_ylabel("error against the Mie series")
    ax.set_title("Rigid sphere, k = 8: error (the paper's Figure 2)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def plot_time(rows, out):
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    anchor = None
    for device in ("cpu", "gpu"):
        for p in (8, 16):
            s = series(rows, device, p)
            if not s:
                continue
            n = [r["N"] for r in s]
            total = [r["setup_s"] + r["solve_s"] for r in s]
            ax.plot(n, total, P_LINE[p], marker="o", mfc="none", **STYLE[device],
                    label=f"{device.upper()} p = {p}: set-up + solve")
            ax.plot(n, [r["s_per_matmult"] for r in s], P_LINE[p], marker=".", **STYLE[device],
                    alpha=0.5, label=f"{device.upper()} p = {p}: one MatMult")
            if anchor is None:
                anchor = (n[-1], total[-1])
    if anchor:
        lo = min(r["N"] for r in rows)
        xs = [lo, anchor[0]]
        ax.plot(xs, [anchor[1] * x / anchor[0] for x in xs], ":", color="gray", label="O(N)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("N (elements)")
    ax.set_ylabel("seconds")
    ax.set_title("Rigid sphere, k = 8: time (the paper's Figure 3)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def plot_m2l(rows, curves, out):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    names = sorted({name for _, name in curves})
    colors = {name: plt.cm.tab10(i % 10) for i, name in enumerate(names)}
    for ax, p in zip(axes, (8, 16)):
        for name in names:
            pts = curves.get((p, name))
            if pts:
                ax.plot(*zip(*pts), "-o", ms=4, color=colors[name], label=f"gpu_m2l: {name}")
        for device in ("cpu", "gpu"):
            s = [r for r in series(rows, device, p) if r.get("m2l_tflops")]
            if s:
                on = s[-1]["m2l_on"] or device
                ax.plot([r["N"] for r in s], [r["m2l_tflops"] for r in s], "--s", mfc="none",
                        ms=5, **STYLE[device], label=f"bem_solve M2L on {on}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("N (elements)")
        ax.set_title(f"M2L, p = {p}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("TFLOP/s (8 p^4 flops per M2L pair)")
    axes[1].legend(fontsize=7, loc="lower right")
    fig.suptitle("M2L throughput per scheme (the paper's Figure 4)")
    fig.text(0.01, 0.01, "gpu_m2l: bench/results/gpu_m2l.md, All sizes (H100); cluster and ij are "
             "the first kernels at N <= 327,680 and the restructured ones at 1,310,720. "
             "bem_solve: M2L event time per MatMult in the solve.", fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out, dpi=120)
    plt.close(fig)


def plot_phases(rows, out):
    n_max = max(r["N"] for r in rows)
    chosen = sorted((r for r in rows if r["N"] == n_max), key=lambda r: (r["device"], r["p"]))
    labels = [f"{r['device'].upper()}\np = {r['p']}" for r in chosen]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    colors = plt.cm.tab10.colors
    for ax, share in zip(axes, (False, True)):
        bottom = [0.0] * len(chosen)
        for i, (key, name) in enumerate(PHASES):
            vals = [max(r[key] or 0.0, 0.0) for r in chosen]
            if share:
                vals = [v / (r["s_per_matmult"] or 1) * 100 for v, r in zip(vals, chosen)]
            ax.bar(labels, vals, bottom=bottom, color=colors[i], label=name)
            bottom = [b + v for b, v in zip(bottom, vals)]
        if not share:
            for x, r in enumerate(chosen):
                ax.annotate(f"{r['s_per_matmult']:.3g} s", (x, r["s_per_matmult"]),
                            ha="center", va="bottom", fontsize=8)
        ax.set_ylabel("% of the MatMult" if share else "seconds per MatMult")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(f"MatMult by phase at N = {int(n_max):,} (-log_view events)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results")
    rows = read_experiment(results)
    if not rows:
        sys.exit(f"plot_paper: no solved rows in {results}/paper_experiment_*.csv")
    written = []
    for name, draw in (("paper_error.png", lambda o: plot_error(rows, o)),
                       ("paper_time.png", lambda o: plot_time(rows, o)),
                       ("paper_m2l_tflops.png",
                        lambda o: plot_m2l(rows, read_gpu_m2l(results), o)),
                       ("paper_phases.png", lambda o: plot_phases(rows, o))):
        draw(os.path.join(results, name))
        written.append(name)
    print("plot_paper: wrote " + ", ".join(os.path.join(results, w) for w in written))


if __name__ == "__main__":
    main()
