"""Spectral model of Burton-Miller and its regularised forms on the unit sphere (issue: bounded
Burton-Miller iterations).

On the unit sphere the layer operators are diagonal in spherical harmonics: for degree n (2n + 1
modes), with G = exp(ikr) / (4 pi r), S_n = i k j_n h_n, D_n = i k^2 j_n h_n' + 1/2,
D'_n = i k^2 j_n' h_n - 1/2, N_n = i k^3 j_n' h_n' (h = h^(1); the k -> 0 limits -1/(2(2n+1)),
1/(2n+1), -n(n+1)/(2n+1) are checked at start-up). The products j_n h_n are formed from ratios
(j_n / j_{n-1} downward, h_n / h_{n-1} upward), so that they neither under- nor overflow at
n >> k, and at imaginary k (S_{i kappa}, the Yukawa kernel exp(-kappa r) / (4 pi r)) alike.
GMRES (no restart, zero start, every mode excited, rtol 1e-6) on the diagonal operators of the
rigid sphere, degrees 0 .. n_max (a mesh resolving n_max):
  bm   1/2 - D - (i/k) N                       (today's default)
  reg  1/2 - D - i S_{i kappa} N               (the regularised equation, beta = i)
for kappa = k (Bruno, Elling and Turc's choice) and kappa tied to the resolution (n_max / 4 ..
2 n_max: a regulariser decaying within a few elements, near-field only).

    python3 bench/bm_spectral_model.py
"""
import numpy as np

def sphere_eigenvalues(k, nmax):
    """S_n, D_n, D'_n, N_n of the unit sphere at complex or real k (G = e^{ikr}/(4 pi r))."""
    z = complex(k)
    N = nmax
    # r_n = j_n / j_{n-1}, downward from far above (minimal solution).
    top = N + 60 + int(2 * abs(z))
    r = np.zeros(top + 2, dtype=complex)
    r[top + 1] = z / (2 * top + 3)
    for n in range(top, 0, -1):
        r[n] = 1.0 / ((2 * n + 1) / z - r[n + 1])
    # s_n = h_n / h_{n-1}, upward (dominant solution).
    s = np.zeros(N + 2, dtype=complex)
    s[1] = 1.0 / z - 1j
    for n in range(1, N + 1):
        s[n + 1] = (2 * n + 1) / z - 1.0 / s[n]
    # j_0 h_0 = sin z (-i e^{iz}) / z^2 = (1 - e^{2iz}) / (2 z^2): no overflow for Im z >= 0.
    P = np.zeros(N + 1, dtype=complex)
    P[0] = (1.0 - np.exp(2j * z)) / (2.0 * z * z)
    for n in range(1, N + 1):
        P[n] = P[n - 1] * r[n] * s[n]
    n = np.arange(N + 1)
    # f_n'/f_n = f_{n-1}/f_n - (n+1)/z; for n = 0: j_0' = -j_1, h_0' = -h_1.
    jd = np.empty(N + 1, dtype=complex)
    hd = np.empty(N + 1, dtype=complex)
    jd[0] = -r[1]
    hd[0] = -s[1]
    jd[1:] = 1.0 / r[1:N + 1] - (n[1:] + 1) / z
    hd[1:] = 1.0 / s[1:N + 1] - (n[1:] + 1) / z
    S = 1j * z * P
    D = 1j * z**2 * P * hd + 0.5
    Dp = 1j * z**2 * P * jd - 0.5
    Nh = 1j * z**3 * P * jd * hd
    return S, D, Dp, Nh

def gmres_iterations(lam, weights, rtol=1e-6, maxit=2000):
    """GMRES (no restart, zero start) on diag(lam) with rhs 1 in the inner product weighted by
    weights (each mode's multiplicity)."""
    w = np.sqrt(weights)
    b = w.astype(complex)  # scaled coordinates: operator diag(lam) stays diagonal
    beta = np.linalg.norm(b)
    V = [b / beta]
    H = np.zeros((maxit + 1, maxit), dtype=complex)
    for j in range(maxit):
        v = lam * V[j]
        for i in range(j + 1):
            H[i, j] = np.vdot(V[i], v)
            v = v - H[i, j] * V[i]
        for i in range(j + 1):  # reorthogonalise
            c = np.vdot(V[i], v); H[i, j] += c; v = v - c * V[i]
        H[j + 1, j] = np.linalg.norm(v)
        e1 = np.zeros(j + 2, dtype=complex); e1[0] = beta
        y, *_ = np.linalg.lstsq(H[:j + 2, :j + 1], e1, rcond=None)
        res = np.linalg.norm(H[:j + 2, :j + 1] @ y - e1) / beta
        if res < rtol or H[j + 1, j] < 1e-300:
            return j + 1
        V.append(v / H[j + 1, j])
    return maxit

def check_laplace_limit():
    S, D, Dp, N = sphere_eigenvalues(1e-4, 5)
    n = np.arange(6)
    assert np.allclose(D.real, -1 / (2 * (2 * n + 1)), atol=1e-6), D
    assert np.allclose(N.real, -n * (n + 1) / (2 * n + 1), atol=1e-5), N
    assert np.allclose(S.real, 1 / (2 * n + 1), atol=1e-4), S

if __name__ == "__main__":
    check_laplace_limit()
    print("| k | n_max | bm | reg, kappa = k | kappa = n_max/4 | n_max/2 | n_max | 2 n_max |")
    print("|---|---|---|---|---|---|---|---|")
    for k in (8.0, 16.0, 32.0, 64.0):
        for nmax in (40, 160, 640, 2000):
            if nmax < 4 * k:
                continue
            S, D, Dp, N = sphere_eigenvalues(k, nmax)
            wts = 2 * np.arange(nmax + 1) + 1.0
            row = [gmres_iterations(0.5 - D - (1j / k) * N, wts)]
            for kappa in (k, nmax / 4, nmax / 2, nmax, 2 * nmax):
                Sk = sphere_eigenvalues(1j * kappa, nmax)[0]
                row.append(gmres_iterations(0.5 - D - 1j * Sk * N, wts))
            print(f"| {k:g} | {nmax} | " + " | ".join(str(r) for r in row) + " |")
    # The regulariser fmbem builds (the Laplace single layer, kappa -> 0) and kappa = k/2.
    print()
    print("| k | n_max | bm | reg, Laplace S~ (kappa = 0) | kappa = k/2 | kappa = k |")
    print("|---|---|---|---|---|---|")
    for k, sizes in ((8.0, (160, 640, 2000)), (16.0, (160, 640, 2000)), (32.0, (160, 640, 2000)),
                     (64.0, (640, 2000)), (100.0, (400, 1000))):
        for nmax in sizes:
            S, D, Dp, N = sphere_eigenvalues(k, nmax)
            wts = 2 * np.arange(nmax + 1) + 1.0
            row = [gmres_iterations(0.5 - D - (1j / k) * N, wts)]
            # kappa = 1e-3 stands for the Laplace limit (the ratios' recurrences need z != 0).
            for kappa in (1e-3, k / 2, k):
                Sk = sphere_eigenvalues(1j * kappa, nmax)[0]
                row.append(gmres_iterations(0.5 - D - 1j * Sk * N, wts))
            print(f"| {k:g} | {nmax} | " + " | ".join(str(r) for r in row) + " |")
