#include "fmbem/bem/corrected_layer_potentials.hpp"

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_device.hpp"

namespace fmbem {

struct CorrectedLayerPotentials::DeviceBuffers {
  DeviceBuffers(std::size_t columns, std::size_t rows)
      : double_density(columns), single_density(columns), y(rows) {}
  fmm::DeviceArray double_density, single_density, y;
};

CorrectedLayerPotentials::CorrectedLayerPotentials(const Discretization& disc, double k,
                                                   RowRange rows,
                                                   const NearFieldOptions& near_options,
                                                   cplx coupling)
    : disc_(&disc),
      rows_(rows),
      coupling_(coupling),
      near_(disc, k, rows, near_options, coupling) {}

CorrectedLayerPotentials::~CorrectedLayerPotentials() = default;

void CorrectedLayerPotentials::apply(std::span<const cplx> double_density,
                                     std::span<const cplx> single_density,
                                     std::span<cplx> y) const {
  const std::size_t n = disc_->size();
  if ((!double_density.empty() && double_density.size() != n) ||
      (!single_density.empty() && single_density.size() != n) || y.size() != rows_.size())
    throw Error("layer potentials: density or result of the wrong size");
  if (!resident_on_device()) {
    regular_sum(double_density, single_density, y);
    near_.add_to(double_density, single_density, y);
    return;
  }
  if (!device_) device_ = std::make_unique<DeviceBuffers>(n, rows_.size());
  const cplx* dd = nullptr;
  const cplx* sd = nullptr;
  if (!double_density.empty()) {
    device_->double_density.upload(double_density.data());
    dd = device_->double_density.data();
  }
  if (!single_density.empty()) {
    device_->single_density.upload(single_density.data());
    sd = device_->single_density.data();
  }
  regular_sum_device(dd, sd, device_->y.data());
  near_.apply_device(dd, sd, device_->y.data());
  if (!y.empty()) device_->y.download(y.data());
}

void CorrectedLayerPotentials::regular_sum_device(const cplx*, const cplx*, cplx*) const {
  throw Error("layer potentials: this backend has no regular sum on the GPU");
}

}  // namespace fmbem
