#include <cstddef>

#include "cuda_util.cuh"
#include "fmbem/core/error.hpp"
#include "near_field_kernels.cuh"

namespace fmbem::fmm::cuda {

namespace {

constexpr double kInv4Pi = 0.07957747154594767;  // 1 / (4 pi)

// Shared-memory fields of a staged source: position, then charge (re, im), then normal and
// dipole (re, im).
constexpr int fields(bool charges, bool dipoles) {
  return 3 + (charges ? 2 : 0) + (dipoles ? 5 : 0);
}

// The kernels: 1 / r (Laplace), exp(ikr) / r (Helmholtz), exp(-kappa r) / r (screened, k the
// screening constant kappa).
enum Kernel { kLaplace, kHelmholtz, kScreened };

// acc += G q + dG/dn_y d for one pair, without the factor 1 / (4 pi):
//   exp(ikr) / r (q + (ikr - 1) w d), w = (y - x) . n / r^2,
// the CPU's terms (direct_sum.cpp) with the charge and the dipole put under one exp(ikr) / r
// (screened: ikr = -kappa r, all real). Pairs with r^2 <= skip2 add nothing.
template <int kKernel, bool kCharges, bool kDipoles>
__device__ __forceinline__ void add_pair(double x, double y, double z, double qr, double qi,
                                         double nx, double ny, double nz, double dr, double di,
                                         double tx, double ty, double tz, double k, double skip2,
                                         double& acc_re, double& acc_im) {
  const double dx = x - tx, dy = y - ty, dz = z - tz;  // y - x
  const double r2 = fma(dx, dx, fma(dy, dy, dz * dz));
  const double inv_r = r2 > skip2 ? rsqrt(r2) : 0.0;
  double fr = kCharges ? qr : 0.0, fi = kCharges ? qi : 0.0;
  if constexpr (kKernel == kHelmholtz) {
    const double kr = k * (r2 * inv_r);
    double s, c;
    sincos(kr, &s, &c);
    if constexpr (kDipoles) {
      const double w = fma(dx, nx, fma(dy, ny, dz * nz)) * (inv_r * inv_r);
      const double wr = w * dr, wi = w * di;
      fr = fma(-kr, wi, fr - wr);
      fi = fma(kr, wr, fi - wi);
    }
    const double er = c * inv_r, ei = s * inv_r;
    acc_re = fma(er, fr, fma(-ei, fi, acc_re));
    acc_im = fma(er, fi, fma(ei, fr, acc_im));
  } else if constexpr (kKernel == kScreened) {
    const double kr = k * (r2 * inv_r);
    if constexpr (kDipoles) {
      const double w = fma(dx, nx, fma(dy, ny, dz * nz)) * (inv_r * inv_r) * (kr + 1.0);
      fr = fma(-w, dr, fr);
      fi = fma(-w, di, fi);
    }
    const double e = exp(-kr) * inv_r;
    acc_re = fma(e, fr, acc_re);
    acc_im = fma(e, fi, acc_im);
  } else {
    if constexpr (kDipoles) {
      const double w = fma(dx, nx, fma(dy, ny, dz * nz)) * (inv_r * inv_r);
      fr = fma(-w, dr, fr);
      fi = fma(-w, di, fi);
    }
    acc_re = fma(inv_r, fr, acc_re);
    acc_im = fma(inv_r, fi, acc_im);
  }
}

// add_pair, and der += minus the derivative of the pair's term along the target's unit normal
// (mx, my, mz), without the factor 1 / (4 pi): the CPU's potential_and_normal_derivative
// (direct_sum.cpp) with e = exp(ikr) / r, t = d . n_x, w = d . n_y / r^2, d = y - x,
//   der = e / r^2 ((ikr - 1) (t q + n_x . n_y d) + (3 - k^2 r^2 - 3ikr) t w d)
// (screened: ikr = -kappa r). The value is add_pair's, to the same operations.
template <int kKernel, bool kCharges, bool kDipoles>
__device__ __forceinline__ void add_pair_normal(double x, double y, double z, double qr, double qi,
                                                double nx, double ny, double nz, double dr,
                                                double di, double tx, double ty, double tz,
                                                double mx, double my, double mz, double k,
                                                double skip2, double& acc_re, double& acc_im,
                                                double& der_re, double& der_im) {
  const double dx = x - tx, dy = y - ty, dz = z - tz;  // y - x
  const double r2 = fma(dx, dx, fma(dy, dy, dz * dz));
  const double inv_r = r2 > skip2 ? rsqrt(r2) : 0.0;
  const double inv_r2 = inv_r * inv_r;
  const double t = fma(dx, mx, fma(dy, my, dz * mz));
  double fr = kCharges ? qr : 0.0, fi = kCharges ? qi : 0.0;
  // a = t q + (n_x . n_y) d, b = t w d.
  double ar = kCharges ? t * qr : 0.0, ai = kCharges ? t * qi : 0.0, br = 0.0, bi = 0.0, w = 0.0;
  if constexpr (kDipoles) {
    w = fma(dx, nx, fma(dy, ny, dz * nz)) * inv_r2;
    const double nn = fma(mx, nx, fma(my, ny, mz * nz));
    ar = fma(nn, dr, ar);
    ai = fma(nn, di, ai);
    const double tw = t * w;
    br = tw * dr;
    bi = tw * di;
  }
  if constexpr (kKernel == kHelmholtz) {
    const double kr = k * (r2 * inv_r);
    double s, c;
    sincos(kr, &s, &c);
    if constexpr (kDipoles) {
      const double wr = w * dr, wi = w * di;
      fr = fma(-kr, wi, fr - wr);
      fi = fma(kr, wr, fi - wi);
    }
    const double er = c * inv_r, ei = s * inv_r;
    acc_re = fma(er, fr, fma(-ei, fi, acc_re));
    acc_im = fma(er, fi, fma(ei, fr, acc_im));
    // (ikr - 1) a + (3 - k^2 r^2 - 3ikr) b
    double gr = fma(-kr, ai, -ar), gi = fma(kr, ar, -ai);
    if constexpr (kDipoles) {
      const double h = fma(-kr, kr, 3.0), kr3 = 3.0 * kr;
      gr = fma(h, br, fma(kr3, bi, gr));
      gi = fma(h, bi, fma(-kr3, br, gi));
    }
    const double e2r = er * inv_r2, e2i = ei * inv_r2;
    der_re = fma(e2r, gr, fma(-e2i, gi, der_re));
    der_im = fma(e2r, gi, fma(e2i, gr, der_im));
  } else if constexpr (kKernel == kScreened) {
    const double kr = k * (r2 * inv_r), kr1 = kr + 1.0;
    if constexpr (kDipoles) {
      fr = fma(-w * kr1, dr, fr);
      fi = fma(-w * kr1, di, fi);
    }
    const double e = exp(-kr) * inv_r;
    acc_re = fma(e, fr, acc_re);
    acc_im = fma(e, fi, acc_im);
    // -(kappa r + 1) a + (3 + kappa^2 r^2 + 3 kappa r) b
    const double h = fma(kr, kr, fma(3.0, kr, 3.0));
    const double gr = fma(h, br, -kr1 * ar), gi = fma(h, bi, -kr1 * ai);
    const double e2 = e * inv_r2;
    der_re = fma(e2, gr, der_re);
    der_im = fma(e2, gi, der_im);
  } else {
    if constexpr (kDipoles) {
      fr = fma(-w, dr, fr);
      fi = fma(-w, di, fi);
    }
    acc_re = fma(inv_r, fr, acc_re);
    acc_im = fma(inv_r, fi, acc_im);
    // -a + 3 b
    const double e3 = inv_r * inv_r2;
    der_re = fma(e3, fma(3.0, br, -ar), der_re);
    der_im = fma(e3, fma(3.0, bi, -ai), der_im);
  }
}

// kNormal: the sum is phi + weight dphi/dn_t (NearFieldArgs' target normals).
template <int kKernel, bool kCharges, bool kDipoles, bool kNormal, int R>
__global__ void __launch_bounds__(kNearFieldMaxThreads) near_field_kernel(const NearFieldArgs a) {
  extern __shared__ double shared[];
  const int B = blockDim.x, tid = threadIdx.x;
  const int4 item = a.items[blockIdx.x];
  const int m = item.w, slots = (m + R - 1) / R, P = B / slots;
  const int slot = tid % slots, phase = tid / slots;
  // This thread's targets: slot, slot + slots, ... (the last repeated where m runs out).
  double tx[R], ty[R], tz[R], acc_re[R], acc_im[R];
  // kNormal: the targets' normals and the derivative sums.
  double mx[kNormal ? R : 1], my[kNormal ? R : 1], mz[kNormal ? R : 1], der_re[kNormal ? R : 1],
      der_im[kNormal ? R : 1];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int t = item.z + min(slot + i * slots, m - 1);
    tx[i] = a.tx[t];
    ty[i] = a.ty[t];
    tz[i] = a.tz[t];
    acc_re[i] = acc_im[i] = 0.0;
    if constexpr (kNormal) {
      mx[i] = a.tnx[t];
      my[i] = a.tny[t];
      mz[i] = a.tnz[t];
      der_re[i] = der_im[i] = 0.0;
    }
  }
  double* s_x = shared;
  double* s_y = s_x + B;
  double* s_z = s_y + B;
  double* s_qr = s_z + B;
  double* s_qi = s_qr + (kCharges ? B : 0);
  double* s_nx = s_qi + (kCharges ? B : 0);
  double* s_ny = s_nx + B;
  double* s_nz = s_ny + B;
  double* s_dr = s_nz + B;
  double* s_di = s_dr + B;
  const int total = item.y > item.x ? a.ranges[item.y - 1].x : 0;
  int range = item.x;  // the range holding position base
  for (int base = 0; base < total; base += B) {
    const int count = min(B, total - base);
    if (tid < count) {
      const int g = base + tid;
      int r = range;
      while (a.ranges[r].x <= g) ++r;
      const int j = g + a.ranges[r].y;
      s_x[tid] = a.sx[j];
      s_y[tid] = a.sy[j];
      s_z[tid] = a.sz[j];
      if constexpr (kCharges) {
        const double2 q = a.charges[j];
        s_qr[tid] = q.x;
        s_qi[tid] = q.y;
      }
      if constexpr (kDipoles) {
        const double2 d = a.dipoles[j];
        s_nx[tid] = a.nx[j];
        s_ny[tid] = a.ny[j];
        s_nz[tid] = a.nz[j];
        s_dr[tid] = d.x;
        s_di[tid] = d.y;
      }
    }
    while (range < item.y && a.ranges[range].x <= base + B) ++range;
    __syncthreads();
    if (phase < P) {
#pragma unroll 2
      for (int j = phase; j < count; j += P) {
        const double x = s_x[j], y = s_y[j], z = s_z[j];
        const double qr = kCharges ? s_qr[j] : 0.0, qi = kCharges ? s_qi[j] : 0.0;
        const double nx = kDipoles ? s_nx[j] : 0.0, ny = kDipoles ? s_ny[j] : 0.0,
                     nz = kDipoles ? s_nz[j] : 0.0, dr = kDipoles ? s_dr[j] : 0.0,
                     di = kDipoles ? s_di[j] : 0.0;
#pragma unroll
        for (int i = 0; i < R; ++i) {
          if constexpr (kNormal)
            add_pair_normal<kKernel, kCharges, kDipoles>(
                x, y, z, qr, qi, nx, ny, nz, dr, di, tx[i], ty[i], tz[i], mx[i], my[i], mz[i], a.k,
                a.skip2, acc_re[i], acc_im[i], der_re[i], der_im[i]);
          else
            add_pair<kKernel, kCharges, kDipoles>(x, y, z, qr, qi, nx, ny, nz, dr, di, tx[i], ty[i],
                                                  tz[i], a.k, a.skip2, acc_re[i], acc_im[i]);
        }
      }
    }
    __syncthreads();
  }
  // The phases' sums of target u = i slots + slot at partial[phase * R slots + u] (kNormal: the
  // derivative sums at derivative[...] after them), added in phase order.
  double2* partial = reinterpret_cast<double2*>(shared);
  const int width = R * slots;
  double2* derivative = partial + P * width;
  if (phase < P) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      partial[phase * width + i * slots + slot] = {acc_re[i], acc_im[i]};
      if constexpr (kNormal) derivative[phase * width + i * slots + slot] = {der_re[i], der_im[i]};
    }
  }
  __syncthreads();
  for (int u = tid; u < m; u += B) {
    double re = 0.0, im = 0.0;
    for (int p = 0; p < P; ++p) {
      const double2 v = partial[p * width + u];
      re += v.x;
      im += v.y;
    }
    if constexpr (kNormal) {
      // value + weight dphi/dn_t, dphi/dn_t = -(the derivative sums).
      double dre = 0.0, dim = 0.0;
      for (int p = 0; p < P; ++p) {
        const double2 v = derivative[p * width + u];
        dre += v.x;
        dim += v.y;
      }
      if (a.apart) {
        double2* out = a.potential + std::size_t(a.targets) + a.target_order[item.z + u];
        double2 v = *out;
        v.x -= dre * kInv4Pi;
        v.y -= dim * kInv4Pi;
        *out = v;
      } else {
        re -= a.weight.x * dre - a.weight.y * dim;
        im -= a.weight.x * dim + a.weight.y * dre;
      }
    }
    double2* out = a.potential + a.target_order[item.z + u];
    double2 value = *out;
    value.x += re * kInv4Pi;
    value.y += im * kInv4Pi;
    *out = value;
  }
}

template <int kKernel, bool kCharges, bool kDipoles, bool kNormal>
void launch(const NearFieldArgs& a, int items, int threads, int targets_per_thread,
            cudaStream_t stream) {
  const std::size_t bytes =
      near_field_shared_bytes(kCharges, kDipoles, threads, targets_per_thread, kNormal);
  if (targets_per_thread == 1)
    near_field_kernel<kKernel, kCharges, kDipoles, kNormal, 1>
        <<<items, threads, bytes, stream>>>(a);
  else
    near_field_kernel<kKernel, kCharges, kDipoles, kNormal, 2>
        <<<items, threads, bytes, stream>>>(a);
  check_launch("near_field_kernel");
}

template <int kKernel, bool kNormal>
void launch_kind(const NearFieldArgs& a, int items, int threads, int targets_per_thread,
                 cudaStream_t stream) {
  if (a.charges && a.dipoles)
    launch<kKernel, true, true, kNormal>(a, items, threads, targets_per_thread, stream);
  else if (a.charges)
    launch<kKernel, true, false, kNormal>(a, items, threads, targets_per_thread, stream);
  else if (a.dipoles)
    launch<kKernel, false, true, kNormal>(a, items, threads, targets_per_thread, stream);
}

__global__ void gather_kernel(int n, const int* __restrict__ order, const double2* __restrict__ in,
                              double2* __restrict__ sorted) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sorted[i] = in[order[i]];
}

}  // namespace

std::size_t near_field_shared_bytes(bool charges, bool dipoles, int threads, int targets_per_thread,
                                    bool target_normals) {
  const std::size_t staged = std::size_t(fields(charges, dipoles)) * threads * sizeof(double);
  // The phases' sums (target normals: and the derivative sums).
  const std::size_t partial =
      std::size_t(target_normals ? 2 : 1) * targets_per_thread * threads * sizeof(double2);
  return staged > partial ? staged : partial;
}

void launch_near_field(const NearFieldArgs& args, int items, int threads, int targets_per_thread,
                       cudaStream_t stream) {
  if (items <= 0 || (!args.charges && !args.dipoles)) return;
  if (threads % 32 != 0 || threads < 32 || threads > kNearFieldMaxThreads ||
      (targets_per_thread != 1 && targets_per_thread != 2))
    throw Error("GPU near field: bad launch shape");
  const bool normals = args.tnx != nullptr;
  if (args.screened && args.k != 0.0) {
    if (normals)
      launch_kind<kScreened, true>(args, items, threads, targets_per_thread, stream);
    else
      launch_kind<kScreened, false>(args, items, threads, targets_per_thread, stream);
  } else if (args.k != 0.0 && normals) {
    launch_kind<kHelmholtz, true>(args, items, threads, targets_per_thread, stream);
  } else if (args.k != 0.0) {
    launch_kind<kHelmholtz, false>(args, items, threads, targets_per_thread, stream);
  } else if (normals) {
    launch_kind<kLaplace, true>(args, items, threads, targets_per_thread, stream);
  } else {
    launch_kind<kLaplace, false>(args, items, threads, targets_per_thread, stream);
  }
}

void launch_gather_strengths(int n, const int* order, const double2* in, double2* sorted,
                             cudaStream_t stream) {
  if (n <= 0) return;
  gather_kernel<<<(n + 255) / 256, 256, 0, stream>>>(n, order, in, sorted);
  check_launch("gather_kernel");
}

}  // namespace fmbem::fmm::cuda
