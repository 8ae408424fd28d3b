// The near-field correction's entries, its SpMV and the point strengths on the GPU.
//
// The entry kernel runs the CPU's panel_integrals (hypersingular_integrals with a Burton-Miller
// coupling) and regular sums (src/bem/host_device; device_integrals.cuh says why the results
// agree with the CPU's to rounding); with the quadratic read the entries come from
// folded_entries.cu.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "device_integrals.cuh"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/gpu_correction.hpp"
#include "fmbem/core/error.hpp"
#include "folded_entries.cuh"

namespace fmbem {

namespace bem_cuda {

std::vector<double> flatten(const std::vector<Vec3>& v) {
  std::vector<double> out(3 * v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[3 * i] = v[i].x;
    out[3 * i + 1] = v[i].y;
    out[3 * i + 2] = v[i].z;
  }
  return out;
}

DeviceGeometry::DeviceGeometry(const Discretization& disc, const GaussLegendre& angular) {
  const Mesh& mesh = disc.mesh();
  std::vector<std::int32_t> triangles(3 * mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e)
    for (int c = 0; c < 3; ++c) triangles[3 * e + c] = std::int32_t(mesh.triangles()[e][c]);
  vertices_ = Buffer<double>(flatten(mesh.vertices()), "vertices");
  triangles_ = Buffer<std::int32_t>(triangles, "triangles");
  centroids_ = Buffer<double>(flatten(mesh.centroids()), "centroids");
  normals_ = Buffer<double>(flatten(mesh.normals()), "normals");
  points_ = Buffer<Vec3>(disc.quadrature_points(), "quadrature points");
  point_weights_ = Buffer<double>(disc.quadrature_weights(), "quadrature weights");
  nodes_ = Buffer<double>(angular.nodes, "angular rule");
  weights_ = Buffer<double>(angular.weights, "angular rule");
  view_.angular = {nodes_.data(), weights_.data(), int(angular.size())};
  view_.vertices = vertices_.data();
  view_.triangles = triangles_.data();
  view_.centroids = centroids_.data();
  view_.normals = normals_.data();
  view_.points = points_.data();
  view_.point_weights = point_weights_.data();
  view_.points_per_element = int(disc.points_per_element());
  view_.coincident = disc.coincidence_radius();
}

}  // namespace bem_cuda

namespace {

using namespace bem_cuda;

struct EntryArgs {
  Geometry g;
  std::int64_t rows = 0, row_begin = 0, nonzeros = 0;
  const std::int64_t* row_start = nullptr;
  const std::int32_t* columns = nullptr;
  double k = 0.0;
  // kBurtonMiller: output o (of `outputs`, entry arrays output-major) is value_weight[o] (S, D)
  // + derivative_weight[o] (D', N) (LayerCoupling).
  int outputs = 1;
  Z value_weight[2] = {}, derivative_weight[2] = {};
  Z *single = nullptr, *dbl = nullptr, *self_single = nullptr, *self_double = nullptr;
};

// One thread per nonzero: its row by binary search in row_start, then accurate minus regular
// (the pass-2 loop of NearFieldCorrection's constructor; kBurtonMiller: coupling != 0;
// kScreened: the screened kernel, k holding kappa, S and D alone).
template <bool kBurtonMiller, bool kScreened = false>
__global__ void correction_entries(EntryArgs a) {
  const std::int64_t at = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (at >= a.nonzeros) return;
  const std::int64_t r = row_of(a.row_start, a.rows, at), i = a.row_begin + r;
  const std::int64_t j = a.columns[at];
  const Geometry& g = a.g;
  const Vec3 x = load(g.centroids, i), n_x = load(g.normals, i);
  const Vec3 va = g.corner(j, 0), vb = g.corner(j, 1), vc = g.corner(j, 2);
  static_assert(!(kBurtonMiller && kScreened), "the screened kernel: S and D alone");
  constexpr unsigned kSums = kBurtonMiller ? host_device::kLayers | host_device::kNormalDerivatives
                             : kScreened   ? host_device::kLayers | host_device::kScreened
                                           : host_device::kLayers;
  const host_device::RegularSums<Z> regular =
      host_device::regular_sums<Z, kSums>(a.k, g.rule(j), x, n_x);
  if constexpr (kBurtonMiller) {
    const BasicHypersingularIntegrals<Z> exact =
        host_device::hypersingular_integrals<Z>(a.k, va, vb, vc, x, n_x, g.angular);
    for (int o = 0; o < a.outputs; ++o) {
      const Z v = a.value_weight[o], w = a.derivative_weight[o];
      const Z exact_single = v * exact.single_layer + w * exact.adjoint_double_layer;
      const Z exact_double = v * exact.double_layer + w * exact.hypersingular;
      a.single[o * a.nonzeros + at] =
          exact_single - (v * regular.single_layer + w * regular.adjoint_double_layer);
      a.dbl[o * a.nonzeros + at] =
          exact_double - (v * regular.double_layer + w * regular.hypersingular);
      if (j == i) {
        a.self_single[o * a.rows + r] = exact_single;
        a.self_double[o * a.rows + r] = exact_double;
      }
    }
  } else {
    constexpr host_device::PanelKernel kKernel =
        kScreened ? host_device::PanelKernel::screened : host_device::PanelKernel::helmholtz;
    const BasicPanelIntegrals<Z> exact =
        host_device::panel_integrals<Z, kKernel>(a.k, va, vb, vc, x, g.angular);
    a.single[at] = exact.single_layer - regular.single_layer;
    a.dbl[at] = exact.double_layer - regular.double_layer;
    if (j == i) {
      a.self_single[r] = exact.single_layer;
      a.self_double[r] = exact.double_layer;
    }
  }
}

// Lanes per row of the SpMV: rows hold about 15 to 25 nonzeros (near factor 2.5).
constexpr int kLanesPerRow = 8;

// y[r] += sum over the row of D dd[j] + S sd[j]: kLanesPerRow lanes a row, summed by shuffles.
template <bool kDouble, bool kSingle>
__global__ void correction_spmv(std::int64_t rows, const std::int64_t* __restrict__ row_start,
                                const std::int32_t* __restrict__ columns,
                                const double2* __restrict__ single, const double2* __restrict__ dbl,
                                const double2* __restrict__ dd, const double2* __restrict__ sd,
                                double2* __restrict__ y) {
  const std::int64_t thread = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t r = thread / kLanesPerRow;
  const int lane = int(thread % kLanesPerRow);
  double re = 0.0, im = 0.0;
  if (r < rows) {
    for (std::int64_t at = row_start[r] + lane; at < row_start[r + 1]; at += kLanesPerRow) {
      const std::int32_t j = columns[at];
      if constexpr (kDouble) {
        const double2 m = dbl[at], v = dd[j];
        re += m.x * v.x - m.y * v.y;
        im += m.x * v.y + m.y * v.x;
      }
      if constexpr (kSingle) {
        const double2 m = single[at], v = sd[j];
        re += m.x * v.x - m.y * v.y;
        im += m.x * v.y + m.y * v.x;
      }
    }
  }
  for (int offset = kLanesPerRow / 2; offset > 0; offset /= 2) {
    re += __shfl_down_sync(0xffffffffu, re, offset, kLanesPerRow);
    im += __shfl_down_sync(0xffffffffu, im, offset, kLanesPerRow);
  }
  if (r < rows && lane == 0) {
    double2 out = y[r];
    out.x += re;
    out.y += im;
    y[r] = out;
  }
}

// Strength i is that of quadrature point at[i] (at null: point i); weights[i] is its weight,
// column[i] its density's entry (column null: its element's).
__global__ void point_strengths_kernel(std::int64_t points, int per_element,
                                       const std::int64_t* __restrict__ at,
                                       const std::int32_t* __restrict__ column,
                                       const double* __restrict__ weights,
                                       const double2* __restrict__ density,
                                       double2* __restrict__ strengths) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= points) return;
  const std::int64_t q = at ? at[i] : i;
  const double w = weights[i];
  const double2 d = density[column ? std::int64_t(column[i]) : q / per_element];
  strengths[i] = make_double2(w * d.x, w * d.y);
}

// ReconstructedPointStrengths on the device: one thread per point (at[i], or i where at is null),
// the sum over its element's stencil in the same order as the CPU's.
__global__ void reconstructed_strengths_kernel(std::int64_t points, int per_element,
                                               const std::int64_t* __restrict__ at,
                                               const std::int64_t* __restrict__ starts,
                                               const std::int32_t* __restrict__ columns,
                                               const double* __restrict__ values,
                                               const double2* __restrict__ density,
                                               double2* __restrict__ strengths) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= points) return;
  const std::int64_t q = at ? at[i] : i;
  const std::int64_t e = q / per_element, l = q % per_element;
  const std::int64_t begin = starts[e], length = starts[e + 1] - begin;
  const double* row = values + begin * per_element + l * length;
  double re = 0.0, im = 0.0;
  for (std::int64_t s = 0; s < length; ++s) {
    const double2 d = density[columns[begin + s]];
    re += row[s] * d.x;
    im += row[s] * d.y;
  }
  strengths[i] = make_double2(re, im);
}

}  // namespace

// The entries on a CUDA device: GpuNearFieldCorrection's implementation.
class CudaNearFieldCorrection final : public GpuNearFieldCorrection {
 public:
  CudaNearFieldCorrection(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                          std::span<const std::int64_t> row_start,
                          std::span<const std::int32_t> columns, const GaussLegendre& angular,
                          const LayerCoupling& coupling);
  // Entries formed elsewhere (on the host), uploaded; the self terms zero.
  CudaNearFieldCorrection(RowRange rows, std::span<const std::int64_t> row_start,
                          std::span<const std::int32_t> columns, std::span<const cplx> single,
                          std::span<const cplx> dbl, int outputs) {
    allocate(rows, row_start, columns, outputs);
    if (single.size() != single_.size() || dbl.size() != dbl_.size())
      throw Error("GPU near-field correction: entries of the wrong size to upload");
    if (!single.empty()) {
      check(cudaMemcpy(single_.data(), single.data(), single.size_bytes(), cudaMemcpyHostToDevice),
            "near-field entry upload");
      check(cudaMemcpy(dbl_.data(), dbl.data(), dbl.size_bytes(), cudaMemcpyHostToDevice),
            "near-field entry upload");
    }
    if (self_single_.size() > 0) {
      check(cudaMemset(self_single_.data(), 0, self_single_.size() * sizeof(Z)), "self terms");
      check(cudaMemset(self_double_.data(), 0, self_double_.size() * sizeof(Z)), "self terms");
    }
  }
  CudaNearFieldCorrection(const Discretization& disc, double k, RowRange rows,
                          const NearFieldPattern& folded, const NearFieldPattern& close,
                          const NearFieldPattern& refined, const GaussLegendre& angular,
                          const GaussLegendre& radial, const LayerCoupling& coupling,
                          const DensityReconstruction& reconstruction, std::int64_t chunk_pairs);
  void download_entries(std::span<cplx> single, std::span<cplx> dbl) const override;
  void download_self_terms(std::span<cplx> single, std::span<cplx> dbl) const override;
  void apply_device(const cplx* device_double_density, const cplx* device_single_density,
                    cplx* device_y) const override;
  std::size_t device_bytes() const override;
  void renumber_columns(std::span<const std::int32_t> columns,
                        std::span<const std::size_t> elements) override;
  void near_block(const Discretization& disc, double k, RowRange rows, cplx coupling,
                  const DensityReconstruction* reconstruction, const OperatorCoefficients& c,
                  std::span<const cplx> single_extra, cplx* device_block) const override;
  const std::int64_t* device_row_start() const override { return row_start_.data(); }
  const std::int32_t* device_columns() const override { return columns_.data(); }

 private:
  std::int64_t rows_ = 0;
  int outputs_ = 1;
  Buffer<std::int64_t> row_start_;
  Buffer<std::int32_t> columns_;
  Buffer<Z> single_, dbl_, self_single_, self_double_;
  // After renumber_columns: the element of each column entry (empty: entry j is element j).
  Buffer<std::int32_t> column_elements_;

  // The pattern uploaded and the entry arrays allocated (the self terms one per row), for each
  // output.
  void allocate(RowRange range, std::span<const std::int64_t> starts,
                std::span<const std::int32_t> cols, int outputs) {
    if (starts.size() != range.size() + 1 || std::size_t(starts.back()) != cols.size())
      throw Error("GPU near-field correction: CSR pattern of the wrong size");
    rows_ = std::int64_t(range.size());
    outputs_ = outputs;
    const std::size_t n = std::size_t(outputs);
    row_start_ = Buffer<std::int64_t>(starts.data(), starts.size(), "near-field rows");
    columns_ = Buffer<std::int32_t>(cols.data(), cols.size(), "near-field columns");
    single_ = Buffer<Z>(n * cols.size(), "near-field single-layer entries");
    dbl_ = Buffer<Z>(n * cols.size(), "near-field double-layer entries");
    self_single_ = Buffer<Z>(n * range.size(), "self terms");
    self_double_ = Buffer<Z>(n * range.size(), "self terms");
  }
};

CudaNearFieldCorrection::CudaNearFieldCorrection(const Discretization& disc, fmm::Wavenumber k,
                                                 RowRange rows,
                                                 std::span<const std::int64_t> row_start,
                                                 std::span<const std::int32_t> columns,
                                                 const GaussLegendre& angular,
                                                 const LayerCoupling& coupling) {
  allocate(rows, row_start, columns, coupling.outputs());
  const DeviceGeometry geometry(disc, angular);  // for this computation only
  EntryArgs a;
  a.g = geometry.view();
  a.rows = rows_;
  a.row_begin = std::int64_t(rows.begin);
  a.nonzeros = std::int64_t(columns.size());
  a.row_start = row_start_.data();
  a.columns = columns_.data();
  a.k = k.magnitude;
  a.outputs = coupling.outputs();
  for (int o = 0; o < a.outputs; ++o) {
    const cplx v = coupling.value_weight(o), w = coupling.derivative_weight(o);
    a.value_weight[o] = Z{v.real(), v.imag()};
    a.derivative_weight[o] = Z{w.real(), w.imag()};
  }
  a.single = single_.data();
  a.dbl = dbl_.data();
  a.self_single = self_single_.data();
  a.self_double = self_double_.data();
  // Every row has its self element, so every self term is written.
  if (a.nonzeros > 0) {
    constexpr int threads = 128;
    if (k.imaginary && coupling.normal_derivatives())
      throw Error("the screened kernel's near-field correction: S and D alone");
    if (coupling.normal_derivatives())
      correction_entries<true><<<blocks(a.nonzeros, threads), threads>>>(a);
    else if (k.imaginary)
      correction_entries<false, true><<<blocks(a.nonzeros, threads), threads>>>(a);
    else
      correction_entries<false><<<blocks(a.nonzeros, threads), threads>>>(a);
    check(cudaGetLastError(), "the near-field entry kernel");
  }
  // The geometry buffers are freed on return: wait for the kernel first.
  check(cudaDeviceSynchronize(), "the near-field entry kernel");
}

CudaNearFieldCorrection::CudaNearFieldCorrection(
    const Discretization& disc, double k, RowRange rows, const NearFieldPattern& folded,
    const NearFieldPattern& close, const NearFieldPattern& refined, const GaussLegendre& angular,
    const GaussLegendre& radial, const LayerCoupling& coupling,
    const DensityReconstruction& reconstruction, std::int64_t chunk_pairs) {
  allocate(rows, folded.row_start, folded.columns, coupling.outputs());
  // Every output's entries from one pass of the integrals.
  const std::int64_t nonzeros = std::int64_t(folded.columns.size());
  FoldedOutputs out;
  out.outputs = coupling.outputs();
  for (int o = 0; o < out.outputs; ++o) {
    out.single[o] = single_.data() + o * nonzeros;
    out.dbl[o] = dbl_.data() + o * nonzeros;
    out.self_single[o] = self_single_.data() + o * rows_;
    out.self_double[o] = self_double_.data() + o * rows_;
    const cplx v = coupling.value_weight(o), w = coupling.derivative_weight(o);
    out.value_weight[o] = Z{v.real(), v.imag()};
    out.derivative_weight[o] = Z{w.real(), w.imag()};
  }
  out.nonzeros = nonzeros;
  out.normal_derivatives = coupling.normal_derivatives();
  folded_entries(disc, k, rows, close, refined, row_start_.data(), columns_.data(), angular, radial,
                 reconstruction, chunk_pairs, out);
}

void CudaNearFieldCorrection::download_entries(std::span<cplx> single, std::span<cplx> dbl) const {
  if (single.size() != single_.size() || dbl.size() != dbl_.size())
    throw Error("GPU near-field correction: download of the wrong size");
  single_.download(reinterpret_cast<Z*>(single.data()), "near-field entry download");
  dbl_.download(reinterpret_cast<Z*>(dbl.data()), "near-field entry download");
}

void CudaNearFieldCorrection::download_self_terms(std::span<cplx> single,
                                                  std::span<cplx> dbl) const {
  if (single.size() != self_single_.size() || dbl.size() != self_double_.size())
    throw Error("GPU near-field correction: download of the wrong size");
  self_single_.download(reinterpret_cast<Z*>(single.data()), "self-term download");
  self_double_.download(reinterpret_cast<Z*>(dbl.data()), "self-term download");
}

void CudaNearFieldCorrection::apply_device(const cplx* device_double_density,
                                           const cplx* device_single_density,
                                           cplx* device_y) const {
  if (rows_ == 0 || (!device_double_density && !device_single_density)) return;
  constexpr int threads = 256;
  const unsigned grid = blocks(rows_ * kLanesPerRow, threads);
  const auto* dd = reinterpret_cast<const double2*>(device_double_density);
  const auto* sd = reinterpret_cast<const double2*>(device_single_density);
  auto* y = reinterpret_cast<double2*>(device_y);
  const std::size_t nonzeros = columns_.size();
  for (int o = 0; o < outputs_; ++o) {  // output o's entries into y's o-th block of rows
    const auto* s = reinterpret_cast<const double2*>(single_.data()) + o * nonzeros;
    const auto* db = reinterpret_cast<const double2*>(dbl_.data()) + o * nonzeros;
    double2* yo = y + o * rows_;
    if (dd && sd)
      correction_spmv<true, true>
          <<<grid, threads>>>(rows_, row_start_.data(), columns_.data(), s, db, dd, sd, yo);
    else if (dd)
      correction_spmv<true, false>
          <<<grid, threads>>>(rows_, row_start_.data(), columns_.data(), s, db, dd, sd, yo);
    else
      correction_spmv<false, true>
          <<<grid, threads>>>(rows_, row_start_.data(), columns_.data(), s, db, dd, sd, yo);
    check(cudaGetLastError(), "the near-field SpMV kernel");
  }
}

std::size_t CudaNearFieldCorrection::device_bytes() const {
  return row_start_.bytes() + columns_.bytes() + single_.bytes() + dbl_.bytes() +
         self_single_.bytes() + self_double_.bytes() + column_elements_.bytes();
}

void CudaNearFieldCorrection::renumber_columns(std::span<const std::int32_t> columns,
                                               std::span<const std::size_t> elements) {
  if (columns.size() != columns_.size())
    throw Error("GPU near-field correction: renumbered columns of another pattern");
  columns_ = Buffer<std::int32_t>(columns.data(), columns.size(), "near-field columns");
  const std::vector<std::int32_t> narrow(elements.begin(), elements.end());
  column_elements_ =
      Buffer<std::int32_t>(narrow.data(), narrow.size(), "near-field column elements");
}

void CudaNearFieldCorrection::near_block(const Discretization& disc, double k, RowRange rows,
                                         cplx coupling, const DensityReconstruction* reconstruction,
                                         const OperatorCoefficients& c,
                                         std::span<const cplx> single_extra,
                                         cplx* device_block) const {
  if (std::int64_t(rows.size()) != rows_)
    throw Error("GPU near block: rows other than the correction's");
  if (outputs_ != 1)
    throw Error("GPU near block: the layers give their normal derivatives apart (no one block)");
  NearBlockInputs in;
  in.row_start = row_start_.data();
  in.columns = columns_.data();
  in.column_elements = column_elements_.size() > 0 ? column_elements_.data() : nullptr;
  in.nonzeros = std::int64_t(columns_.size());
  in.single = single_.data();
  in.dbl = dbl_.data();
  in.single_extra = single_extra;
  in.identity = c.identity;
  in.double_layer = c.double_layer;
  in.single_layer = c.single_layer;
  if (c.per_element) {
    in.element_identity = c.per_element->identity;
    in.element_double = c.per_element->double_layer;
    in.element_single = c.per_element->single_layer;
  }
  near_block_entries(disc, k, rows, coupling, reconstruction, in,
                     reinterpret_cast<Z*>(device_block));
}

std::unique_ptr<GpuNearFieldCorrection> make_gpu_near_field_correction(
    const Discretization& disc, fmm::Wavenumber k, RowRange rows,
    std::span<const std::int64_t> row_start, std::span<const std::int32_t> columns,
    const GaussLegendre& angular, const LayerCoupling& coupling) {
  return std::make_unique<CudaNearFieldCorrection>(disc, k, rows, row_start, columns, angular,
                                                   coupling);
}

std::unique_ptr<GpuNearFieldCorrection> make_gpu_near_field_correction(
    const Discretization& disc, double k, RowRange rows, const NearFieldPattern& folded,
    const NearFieldPattern& close, const NearFieldPattern& refined, const GaussLegendre& angular,
    const GaussLegendre& radial, const LayerCoupling& coupling,
    const DensityReconstruction& reconstruction, std::int64_t chunk_pairs) {
  return std::make_unique<CudaNearFieldCorrection>(disc, k, rows, folded, close, refined, angular,
                                                   radial, coupling, reconstruction, chunk_pairs);
}

std::unique_ptr<GpuNearFieldCorrection> upload_near_field_correction(
    RowRange rows, std::span<const std::int64_t> row_start, std::span<const std::int32_t> columns,
    std::span<const cplx> single, std::span<const cplx> dbl, int outputs) {
  return std::make_unique<CudaNearFieldCorrection>(rows, row_start, columns, single, dbl, outputs);
}

struct GpuPointStrengths::Impl {
  // The constant read: per strength its point's weight.
  Buffer<double> weights;
  int per_element = 1;
  // The points whose strengths are formed (empty: every point) and, for the constant read, each
  // one's density entry (empty: its element).
  Buffer<std::int64_t> at;
  Buffer<std::int32_t> columns_of_points;
  // The reconstructed matrix (empty for the constant read).
  std::int64_t points = 0;
  Buffer<std::int64_t> starts;
  Buffer<std::int32_t> columns;
  Buffer<double> values;
};

namespace {

// Uploaded as they are (no host copy): the same bits, indices below 2^63.
Buffer<std::int64_t> upload_points(std::span<const std::size_t> points) {
  static_assert(sizeof(std::size_t) == sizeof(std::int64_t));
  return Buffer<std::int64_t>(reinterpret_cast<const std::int64_t*>(points.data()), points.size(),
                              "strength points");
}

}  // namespace

GpuPointStrengths::GpuPointStrengths(const Discretization& disc,
                                     std::span<const std::size_t> points,
                                     std::span<const std::int32_t> point_columns)
    : impl_(std::make_unique<Impl>()) {
  if (!point_columns.empty() && point_columns.size() != points.size())
    throw Error("GPU point strengths: a density entry per listed point expected");
  const std::span<const double> all = disc.quadrature_weights();
  if (points.empty()) {
    impl_->weights = Buffer<double>(all.data(), all.size(), "quadrature weights");
  } else {
    std::vector<double> weights(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) weights[i] = all[points[i]];
    impl_->weights = Buffer<double>(weights.data(), weights.size(), "quadrature weights");
    impl_->at = upload_points(points);
    if (!point_columns.empty())
      impl_->columns_of_points = Buffer<std::int32_t>(point_columns.data(), point_columns.size(),
                                                      "strength points' columns");
  }
  impl_->per_element = int(disc.points_per_element());
}

GpuPointStrengths::GpuPointStrengths(const ReconstructedPointStrengths& matrix,
                                     std::span<const std::size_t> points)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.per_element = int(matrix.points_per_element());
  d.points = std::int64_t(points.empty() ? matrix.points() : points.size());
  if (!points.empty()) d.at = upload_points(points);
  d.starts = Buffer<std::int64_t>(matrix.stencil_starts().data(), matrix.stencil_starts().size(),
                                  "reconstruction stencils");
  d.columns = Buffer<std::int32_t>(matrix.stencil_columns().data(), matrix.stencil_columns().size(),
                                   "reconstruction columns");
  d.values = Buffer<double>(matrix.values().data(), matrix.values().size(),
                            "reconstructed point strengths");
}

GpuPointStrengths::~GpuPointStrengths() = default;

std::size_t GpuPointStrengths::points() const {
  return impl_->points > 0 ? std::size_t(impl_->points) : impl_->weights.size();
}

void GpuPointStrengths::apply(const cplx* device_density, cplx* device_strengths) const {
  constexpr int threads = 256;
  if (impl_->points > 0) {
    const Impl& d = *impl_;
    reconstructed_strengths_kernel<<<blocks(d.points, threads), threads>>>(
        d.points, d.per_element, d.at.data(), d.starts.data(), d.columns.data(), d.values.data(),
        reinterpret_cast<const double2*>(device_density),
        reinterpret_cast<double2*>(device_strengths));
    check(cudaGetLastError(), "the reconstructed point-strengths kernel");
    return;
  }
  const std::int64_t n = std::int64_t(impl_->weights.size());
  if (n == 0) return;
  point_strengths_kernel<<<blocks(n, threads), threads>>>(
      n, impl_->per_element, impl_->at.data(),
      impl_->columns_of_points.size() > 0 ? impl_->columns_of_points.data() : nullptr,
      impl_->weights.data(), reinterpret_cast<const double2*>(device_density),
      reinterpret_cast<double2*>(device_strengths));
  check(cudaGetLastError(), "the point-strengths kernel");
}

namespace {

__global__ void scale_kernel(std::int64_t n, const double2* __restrict__ scale,
                             const double2* __restrict__ x, double2* __restrict__ out) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const double2 a = scale[j], b = x[j];
  out[j] = double2{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}

}  // namespace

void scale_on_device(std::size_t n, const cplx* device_scale, const cplx* device_x,
                     cplx* device_out) {
  if (n == 0) return;
  constexpr int threads = 256;
  scale_kernel<<<blocks(std::int64_t(n), threads), threads>>>(
      std::int64_t(n), reinterpret_cast<const double2*>(device_scale),
      reinterpret_cast<const double2*>(device_x), reinterpret_cast<double2*>(device_out));
  check(cudaGetLastError(), "the density-scaling kernel");
}

namespace {

// y[o rows + r] = sum over the images g of weight[g] all[(o images + g) rows + r].
__global__ void sum_images_kernel(std::int64_t rows, int images, int outputs, ImageWeights weights,
                                  const double2* __restrict__ all, double2* __restrict__ y) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= rows * outputs) return;
  const std::int64_t o = j / rows, r = j % rows;
  double2 sum{0.0, 0.0};
  for (int g = 0; g < images; ++g) {
    const double2 v = all[(o * images + g) * rows + r];
    sum.x += weights.weight[g] * v.x;
    sum.y += weights.weight[g] * v.y;
  }
  y[j] = sum;
}

}  // namespace

void sum_images_on_device(std::size_t rows, int images, int outputs, const ImageWeights& weights,
                          const cplx* device_all, cplx* device_y) {
  if (rows == 0) return;
  constexpr int threads = 256;
  sum_images_kernel<<<blocks(std::int64_t(rows) * outputs, threads), threads>>>(
      std::int64_t(rows), images, outputs, weights, reinterpret_cast<const double2*>(device_all),
      reinterpret_cast<double2*>(device_y));
  check(cudaGetLastError(), "the image-sum kernel");
}

void copy_to_device(std::span<const cplx> host, cplx* device) {
  if (!host.empty())
    check(cudaMemcpy(device, host.data(), host.size_bytes(), cudaMemcpyHostToDevice),
          "copy to the device");
}

void copy_to_host(const cplx* device, std::span<cplx> host) {
  if (!host.empty())
    check(cudaMemcpy(host.data(), device, host.size_bytes(), cudaMemcpyDeviceToHost),
          "copy to the host");
}

}  // namespace fmbem
