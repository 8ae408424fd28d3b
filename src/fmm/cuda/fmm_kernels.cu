// P2M, M2M, L2L and L2P on the GPU. The regular basis Rhat_n^m is the CPU's (expansions.cpp),
// so that both agree to rounding: the scaled Bessel functions and the direction are its code
// (src/fmm/host_device), the normalised Legendre functions its recurrence in n at fixed m from
// the diagonal P_m^m, interleaved here with the sums over a leaf's points.
#include <cuda_runtime.h>

#include <algorithm>

#include "../host_device/expansions.hpp"
#include "cuda_util.cuh"
#include "fmm_kernels.cuh"

namespace fmbem::fmm::cuda {

namespace {

// Points of a leaf whose basis data one P2M block stages at a time.
constexpr int kP2MChunk = 32;
constexpr int kL2PThreads = 64;

__device__ __forceinline__ double2 cmul(double2 a, double2 b) {
  return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// a * conj(b)
__device__ __forceinline__ double2 cmul_conj(double2 a, double2 b) {
  return make_double2(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}
__device__ __forceinline__ void cadd(double2& s, double2 v) {
  s.x += v.x;
  s.y += v.y;
}

// j_n(x) for x^2 >= 2n + 3 (the CPU calls Boost here): Miller's downward recurrence from well
// above max(n, x), normalised by sum_l (2l + 1) j_l^2 = 1, the sign taken from j_0 or j_1.
__device__ double spherical_bessel_j(int n, double x) {
  const int start = max(n, int(x)) + 40;
  double upper = 0.0, current = 1e-30, sum = 0.0, value = 0.0;
  for (int l = start; l >= 0; --l) {
    sum += (2.0 * l + 1.0) * current * current;
    if (l == n) value = current;
    if (l == 0) break;
    const double lower = (2.0 * l + 1.0) / x * current - upper;
    upper = current;
    current = lower;
    if (fabs(current) > 1e100) {
      current *= 1e-100;
      upper *= 1e-100;
      value *= 1e-100;
      sum *= 1e-200;
    }
  }
  // current = j_0 and upper = j_1, unnormalised.
  double s, c;
  sincos(x, &s, &c);
  const double j0 = s / x, j1 = s / (x * x) - c / x;
  const double sign =
      fabs(j0) >= fabs(j1) ? (j0 * current >= 0.0 ? 1.0 : -1.0) : (j1 * upper >= 0.0 ? 1.0 : -1.0);
  return sign * value / sqrt(sum);
}

using Direction = host_device::Direction<double2>;

// radial[n] = jhat_n(k |r|) (|r| / sigma)^n (screened: ihat_n(kappa |r|)), n = 0..max_n:
// Rhat_n^m(r) = Y_n^m(r) radial[n].
__device__ void regular_radial(int max_n, double k, bool screened, double sigma, double x, double y,
                               double z, double* radial) {
  const double len = sqrt(x * x + y * y + z * z);
  if (screened)
    host_device::scaled_modified_bessel_i(max_n, k * len, radial);
  else
    host_device::scaled_bessel_j(max_n, k * len, radial,
                                 [](int n, double at) { return spherical_bessel_j(n, at); });
  const double ratio = len / sigma;
  double power = 1.0;
  for (int n = 0; n <= max_n; ++n) {
    radial[n] = radial[n] * power;
    power *= ratio;
  }
}

// P_n^m from P_m^m by the recurrence in n (spherical_harmonics), m >= 0.
__device__ __forceinline__ double legendre_up(const LegendreTable& t, int n, int m, double cos_t,
                                              double p_mm) {
  double p_prev = 0.0, p_cur = p_mm;
  for (int l = m + 1; l <= n; ++l) {
    if (l == m + 1) {
      p_prev = p_cur;
      p_cur = __ldg(&t.first[m]) * cos_t * p_mm;
    } else {
      const int index = l * l + l + m;
      const double p_next = __ldg(&t.a[index]) * (cos_t * p_cur - __ldg(&t.b[index]) * p_prev);
      p_prev = p_cur;
      p_cur = p_next;
    }
  }
  return p_cur;
}

// Rhat_n^m from P_n^|m|, e^{i |m| phi} and radial[n]; m < 0 by Y_n^-m = (-1)^m conj(Y_n^m).
__device__ __forceinline__ double2 basis_value(int m, double p_nm, double2 phase, double radial) {
  double2 v = make_double2(p_nm * phase.x, p_nm * phase.y);
  if (m < 0) {
    const double s = (-m) % 2 ? -1.0 : 1.0;
    v = make_double2(s * v.x, s * -v.y);
  }
  return make_double2(v.x * radial, v.y * radial);
}

// Shared memory of a P2M block: per staged point the radial factors, P_m^m and e^{i m phi}
// (m, n = 0..max_n), cos(theta), charge and the three dipole weights; the accumulators of the
// block's coefficients (charges: p^2, dipoles: 3 (p+1)^2 by q).
struct P2MLayout {
  int max_n, width, size, extended;
  __host__ __device__ P2MLayout(int order, bool dipoles)
      : max_n(dipoles ? order : order - 1),
        width(max_n + 1),
        size(order * order),
        extended((max_n + 1) * (max_n + 1)) {}
  __host__ __device__ std::size_t phase_offset() const { return 0; }  // double2 [chunk][width]
  __host__ __device__ std::size_t strength_offset() const {           // double2 [chunk][4]
    return phase_offset() + std::size_t(kP2MChunk) * width * 16;
  }
  __host__ __device__ std::size_t accumulator_offset() const {  // double2 [size + 3 extended]
    return strength_offset() + std::size_t(kP2MChunk) * 4 * 16;
  }
  __host__ __device__ std::size_t radial_offset() const {  // double [chunk][width]
    return accumulator_offset() + std::size_t(size + 3 * extended) * 16;
  }
  __host__ __device__ std::size_t pmm_offset() const {  // double [chunk][width]
    return radial_offset() + std::size_t(kP2MChunk) * width * 8;
  }
  __host__ __device__ std::size_t cos_offset() const {  // double [chunk]
    return pmm_offset() + std::size_t(kP2MChunk) * width * 8;
  }
  __host__ __device__ std::size_t bytes() const { return cos_offset() + kP2MChunk * 8; }
};

template <bool kCharges, bool kDipoles>
__global__ void p2m_kernel(const P2MArgs a, const double2 g0, const double2 g1x,
                           const double2 g1y) {
  extern __shared__ double2 shared[];
  char* base = reinterpret_cast<char*>(shared);
  const P2MLayout layout(a.order, kDipoles);
  double2* phase = reinterpret_cast<double2*>(base + layout.phase_offset());
  double2* strength = reinterpret_cast<double2*>(base + layout.strength_offset());
  double2* acc = reinterpret_cast<double2*>(base + layout.accumulator_offset());
  double* radial = reinterpret_cast<double*>(base + layout.radial_offset());
  double* pmm = reinterpret_cast<double*>(base + layout.pmm_offset());
  double* cos_t = reinterpret_cast<double*>(base + layout.cos_offset());
  const int width = layout.width, size = layout.size, extended = layout.extended;
  const LeafItem leaf = a.leaves[blockIdx.x];
  for (int c = threadIdx.x; c < size + 3 * extended; c += blockDim.x) acc[c] = make_double2(0, 0);

  for (int first = leaf.begin; first < leaf.end; first += kP2MChunk) {
    const int count = min(kP2MChunk, leaf.end - first);
    __syncthreads();  // the previous chunk is consumed
    if (threadIdx.x < count) {
      const int t = threadIdx.x, i = first + t;
      const double x = a.sx[i] - leaf.cx, y = a.sy[i] - leaf.cy, z = a.sz[i] - leaf.cz;
      regular_radial(layout.max_n, a.k, a.screened, leaf.sigma, x, y, z, radial + t * width);
      const Direction d = host_device::direction_of<double2>(x, y, z);
      double p_mm = a.legendre.p00;
      double2 e = make_double2(1.0, 0.0);
      for (int m = 0; m <= layout.max_n; ++m) {
        if (m > 0) {
          p_mm *= __ldg(&a.legendre.diagonal[m]) * d.sin_t;
          e = cmul(e, d.e_iphi);
        }
        pmm[t * width + m] = p_mm;
        phase[t * width + m] = e;
      }
      cos_t[t] = d.cos_t;
      const int j = a.source_order[i];
      if (kCharges) strength[t * 4] = a.charges[j];
      if (kDipoles) {
        // weight_q = d_j conj(g_q . n_j): g_0 = g0 e_z, g_(+-1) = (-+g1x, g1y, 0).
        const double2 dj = a.dipoles[j];
        const double nx = a.nx[i], ny = a.ny[i], nz = a.nz[i];
        const double2 gm1 = make_double2(g1x.x * nx + g1y.x * ny, g1x.y * nx + g1y.y * ny);
        const double2 gp1 = make_double2(-g1x.x * nx + g1y.x * ny, -g1x.y * nx + g1y.y * ny);
        const double2 gz = make_double2(g0.x * nz, g0.y * nz);
        const bool zero = dj.x == 0.0 && dj.y == 0.0;
        strength[t * 4 + 1] = zero ? make_double2(0, 0) : cmul_conj(dj, gm1);
        strength[t * 4 + 2] = zero ? make_double2(0, 0) : cmul_conj(dj, gz);
        strength[t * 4 + 3] = zero ? make_double2(0, 0) : cmul_conj(dj, gp1);
      }
    }
    __syncthreads();
    // A thread per (n, m >= 0) does (n, m) and (n, -m): one Legendre recurrence for both.
    for (int h = threadIdx.x; h < width * (width + 1) / 2; h += blockDim.x) {
      int n = int((sqrt(8.0 * h + 1.0) - 1.0) / 2.0);
      if ((n + 1) * (n + 2) / 2 <= h) ++n;  // rounding of the square root
      if (n * (n + 1) / 2 > h) --n;
      const int m = h - n * (n + 1) / 2, c = n * n + n + m, c_neg = n * n + n - m;
      double2 charge_sum = make_double2(0, 0), charge_neg = make_double2(0, 0), q_sum[3] = {},
              q_neg[3] = {};
      for (int t = 0; t < count; ++t) {
        const double p_nm = legendre_up(a.legendre, n, m, cos_t[t], pmm[t * width + m]);
        const double2 e = phase[t * width + m];
        const double rad = radial[t * width + n];
        const double2 r = basis_value(m, p_nm, e, rad);
        const double2 r_neg = basis_value(-m, p_nm, e, rad);
        if (kCharges && n < a.order) {
          cadd(charge_sum, cmul_conj(strength[t * 4], r));
          if (m > 0) cadd(charge_neg, cmul_conj(strength[t * 4], r_neg));
        }
        if (kDipoles)
          for (int q = 0; q < 3; ++q) {
            cadd(q_sum[q], cmul_conj(strength[t * 4 + 1 + q], r));
            if (m > 0) cadd(q_neg[q], cmul_conj(strength[t * 4 + 1 + q], r_neg));
          }
      }
      if (kCharges && n < a.order) {
        cadd(acc[c], charge_sum);
        if (m > 0) cadd(acc[c_neg], charge_neg);
      }
      if (kDipoles)
        for (int q = 0; q < 3; ++q) {
          cadd(acc[size + q * extended + c], q_sum[q]);
          if (m > 0) cadd(acc[size + q * extended + c_neg], q_neg[q]);
        }
    }
  }
  __syncthreads();
  double2* out = a.multipole + std::size_t(leaf.cell) * size;
  for (int c = threadIdx.x; c < size; c += blockDim.x) {
    double2 m = acc[c];
    if (kDipoles) {
      const int* offsets = a.gradient_offsets + leaf.level * (size + 1);
      for (int t = offsets[c]; t < offsets[c + 1]; ++t) {
        const GradientItem term = a.gradient[t];
        cadd(m, cmul(term.coefficient, acc[size + (term.q + 1) * extended + term.source]));
      }
    }
    out[c] = m;
  }
}

// kNormal: the output is phi + weight n . grad phi (L2PArgs); the shared memory then holds the
// three vectors Lq of (p+1)^2 after the locals, and the basis runs to degree p.
template <bool kNormal>
__global__ void l2p_kernel(const L2PArgs a) {
  extern __shared__ double2 shared[];
  const int size = a.order * a.order, max_n = kNormal ? a.order : a.order - 1;
  const int extended = kNormal ? (a.order + 1) * (a.order + 1) : 0;
  double2* local = shared;
  double2* lq = shared + size;  // kNormal: [3][extended]
  double* radial =
      reinterpret_cast<double*>(shared + size + 3 * extended) + threadIdx.x * (max_n + 1);
  const LeafItem leaf = a.leaves[blockIdx.x];
  for (int c = threadIdx.x; c < size; c += blockDim.x)
    local[c] = a.local[std::size_t(leaf.cell) * size + c];
  __syncthreads();
  if constexpr (kNormal) {
    // Lq[slot] = sum over the slot's terms of coefficient L[target] (the CPU's by_q).
    const int* offsets = a.gradient_offsets + std::size_t(leaf.level) * (3 * extended + 1);
    for (int slot = threadIdx.x; slot < 3 * extended; slot += blockDim.x) {
      double2 sum = make_double2(0, 0);
      for (int t = offsets[slot]; t < offsets[slot + 1]; ++t) {
        const LocalGradientItem term = a.gradient[t];
        cadd(sum, cmul(term.coefficient, local[term.target]));
      }
      lq[slot] = sum;
    }
    __syncthreads();
  }
  for (int i = leaf.begin + threadIdx.x; i < leaf.end; i += blockDim.x) {
    const double x = a.tx[i] - leaf.cx, y = a.ty[i] - leaf.cy, z = a.tz[i] - leaf.cz;
    regular_radial(max_n, a.k, a.screened, leaf.sigma, x, y, z, radial);
    const Direction d = host_device::direction_of<double2>(x, y, z);
    // kNormal: w_q = weight (n . g_q), the combined coefficient L + sum_q w_q Lq.
    double2 w[3];
    if constexpr (kNormal) {
      const double nx = a.nx[i], ny = a.ny[i], nz = a.nz[i];
#pragma unroll
      for (int q = 0; q < 3; ++q) {
        const double2 g = make_double2(a.gx[q].x * nx + a.gy[q].x * ny + a.gz[q].x * nz,
                                       a.gx[q].y * nx + a.gy[q].y * ny + a.gz[q].y * nz);
        w[q] = cmul(a.weight, g);
      }
    }
    const auto coefficient = [&](int c, int n) {
      if constexpr (!kNormal) {
        return local[c];
      } else {
        double2 v = cmul(w[0], lq[c]);
        cadd(v, cmul(w[1], lq[extended + c]));
        cadd(v, cmul(w[2], lq[2 * extended + c]));
        if (n < a.order && !a.apart) v = make_double2(local[c].x + v.x, local[c].y + v.y);
        return v;
      }
    };
    // kNormal and apart: sum is n . grad phi, value phi.
    double2 sum = make_double2(0, 0), value = make_double2(0, 0), e = make_double2(1.0, 0.0);
    double p_mm = a.legendre.p00;
    for (int m = 0; m <= max_n; ++m) {
      if (m > 0) {
        p_mm *= __ldg(&a.legendre.diagonal[m]) * d.sin_t;
        e = cmul(e, d.e_iphi);
      }
      double p_prev = 0.0, p_cur = p_mm;
      for (int n = m; n <= max_n; ++n) {
        if (n == m + 1) {
          p_prev = p_cur;
          p_cur = __ldg(&a.legendre.first[m]) * d.cos_t * p_mm;
        } else if (n > m + 1) {
          const int index = n * n + n + m;
          const double p_next = __ldg(&a.legendre.a[index]) *
                                (d.cos_t * p_cur - __ldg(&a.legendre.b[index]) * p_prev);
          p_prev = p_cur;
          p_cur = p_next;
        }
        const int c = n * n + n;
        const double2 plus = basis_value(m, p_cur, e, radial[n]);
        cadd(sum, cmul(coefficient(c + m, n), plus));
        const double2 minus = m > 0 ? basis_value(-m, p_cur, e, radial[n]) : make_double2(0, 0);
        if (m > 0) cadd(sum, cmul(coefficient(c - m, n), minus));
        if (kNormal && a.apart && n < a.order) {
          cadd(value, cmul(local[c + m], plus));
          if (m > 0) cadd(value, cmul(local[c - m], minus));
        }
      }
    }
    const int t = a.target_order[i];
    if (kNormal && a.apart) {
      double2& derivative = a.potential[std::size_t(a.targets) + t];
      derivative = make_double2(derivative.x + sum.x, derivative.y + sum.y);
      sum = value;
    }
    double2& out = a.potential[t];
    out = make_double2(out.x + sum.x, out.y + sum.y);
  }
}

template <int kTile>
__global__ void shift_kernel(const ShiftArgs a, int slots) {
  extern __shared__ double2 staged[];  // [kTile][size]
  __shared__ int in_cell[kTile], out_cell[kTile];
  const int size = a.order * a.order;
  const int first = blockIdx.x * kTile;
  for (int o = 0; o < 8; ++o) {
    __syncthreads();  // the previous octant is consumed
    if (threadIdx.x < kTile) {
      const int slot = first + threadIdx.x;
      int in = -1, out = -1;
      if (slot < slots) {
        in = a.in_cell[8 * slot + o];
        out = a.out_cell[8 * slot + o];
      }
      in_cell[threadIdx.x] = out >= 0 ? in : -1;
      out_cell[threadIdx.x] = out;
    }
    __syncthreads();
    bool any = false;
    for (int t = 0; t < kTile; ++t) any |= in_cell[t] >= 0;
    if (!any) continue;  // uniform over the block
    for (int idx = threadIdx.x; idx < kTile * size; idx += blockDim.x) {
      const int t = idx / size, j = idx - t * size;
      staged[idx] = in_cell[t] >= 0 ? a.in[std::size_t(in_cell[t]) * size + j] : double2{0, 0};
    }
    __syncthreads();
    const double2* matrix = a.matrices + std::size_t(o) * size * size;
    for (int i = threadIdx.x; i < size; i += blockDim.x) {
      double2 sums[kTile];
#pragma unroll
      for (int t = 0; t < kTile; ++t) sums[t] = make_double2(0, 0);
      for (int j = 0; j < size; ++j) {
        const double2 v = matrix[std::size_t(j) * size + i];
#pragma unroll
        for (int t = 0; t < kTile; ++t) cadd(sums[t], cmul(v, staged[t * size + j]));
      }
#pragma unroll
      for (int t = 0; t < kTile; ++t)
        if (in_cell[t] >= 0) {
          double2& y = a.out[std::size_t(out_cell[t]) * size + i];
          y = make_double2(y.x + sums[t].x, y.y + sums[t].y);
        }
    }
  }
}

void set_shared_limit(const void* kernel, std::size_t bytes) {
  if (bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
          "cudaFuncSetAttribute");
}

}  // namespace

void launch_p2m(const P2MArgs& a, int leaves, cudaStream_t stream) {
  if (leaves == 0) return;
  const bool charges = a.charges != nullptr, dipoles = a.dipoles != nullptr;
  if (!charges && !dipoles) return;
  const P2MLayout layout(a.order, dipoles);
  const int pairs = layout.width * (layout.width + 1) / 2;  // (n, m >= 0)
  const int threads = std::min(512, std::max(kP2MChunk, (pairs + 31) / 32 * 32));
  const std::size_t bytes = layout.bytes();
  // g_q of harmonic_gradient: g_0 = sqrt(3 / 4pi) e_z, g_(+-1) = -+sqrt(3 / 8pi) (e_x +- i e_y).
  const double c0 = std::sqrt(3.0 / (4.0 * 3.141592653589793));
  const double c1 = std::sqrt(3.0 / (8.0 * 3.141592653589793));
  const double2 g0{c0, 0.0}, g1x{c1, 0.0}, g1y{0.0, -c1};
  const auto run = [&](auto kernel) {
    set_shared_limit(reinterpret_cast<const void*>(kernel), bytes);
    kernel<<<leaves, threads, bytes, stream>>>(a, g0, g1x, g1y);
    check_launch("the P2M kernel");
  };
  if (charges && dipoles)
    run(p2m_kernel<true, true>);
  else if (charges)
    run(p2m_kernel<true, false>);
  else
    run(p2m_kernel<false, true>);
}

void launch_l2p(const L2PArgs& a, int leaves, cudaStream_t stream) {
  if (leaves == 0) return;
  if (a.nx == nullptr) {
    const std::size_t bytes =
        std::size_t(a.order) * a.order * sizeof(double2) + std::size_t(kL2PThreads) * a.order * 8;
    set_shared_limit(reinterpret_cast<const void*>(l2p_kernel<false>), bytes);
    l2p_kernel<false><<<leaves, kL2PThreads, bytes, stream>>>(a);
    check_launch("the L2P kernel");
    return;
  }
  // The locals, the three Lq of (p+1)^2 and the radial factors of degrees 0..p a thread.
  const std::size_t extended = std::size_t(a.order + 1) * (a.order + 1);
  const std::size_t bytes = (std::size_t(a.order) * a.order + 3 * extended) * sizeof(double2) +
                            std::size_t(kL2PThreads) * (a.order + 1) * 8;
  set_shared_limit(reinterpret_cast<const void*>(l2p_kernel<true>), bytes);
  l2p_kernel<true><<<leaves, kL2PThreads, bytes, stream>>>(a);
  check_launch("the L2P kernel (with the target normal derivative)");
}

int shift_parents_per_block(int order) {
  const std::size_t vector_bytes = std::size_t(order) * order * sizeof(double2);
  if (16 * vector_bytes <= 96 * 1024) return 16;
  if (4 * vector_bytes <= 96 * 1024) return 4;
  return 1;
}

void launch_shift(const ShiftArgs& a, int slots, int max_tile, cudaStream_t stream) {
  int tile = max_tile;
  if (slots == 0) return;
  const int size = a.order * a.order;
  const int threads = std::min(256, (size + 31) / 32 * 32);
  // Coarse levels have few parents: smaller tiles give more blocks (two a multiprocessor) at
  // the price of more matrix reads, which such levels can afford.
  int device = 0, processors = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device), "SM count");
  while (tile > 1 && (slots + tile - 1) / tile < 2 * processors) tile /= 4;
  const int blocks = (slots + tile - 1) / tile;
  const std::size_t bytes = std::size_t(tile) * size * sizeof(double2);
  const auto run = [&](auto kernel) {
    set_shared_limit(reinterpret_cast<const void*>(kernel), bytes);
    kernel<<<blocks, threads, bytes, stream>>>(a, slots);
    check_launch("the M2M/L2L kernel");
  };
  if (tile == 16)
    run(shift_kernel<16>);
  else if (tile == 4)
    run(shift_kernel<4>);
  else
    run(shift_kernel<1>);
}

}  // namespace fmbem::fmm::cuda
