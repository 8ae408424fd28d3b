#pragma once
#include <cstddef>
#include <memory>
#include <span>

#include "fmbem/core/vec3.hpp"

// The device side of the distributed FMM's multipole exchange when the expansions live on the
// GPU (no CUDA types here: the kernels live in src/fmm/cuda/gpu_multipole_packing.cu).
// Only the exchanged cells cross to the host: the send cells' multipoles are gathered on the
// device into one contiguous buffer and copied once into pinned host memory, and the received
// partials are copied once to the device and added to their cells. The cell lists come in the
// packed order of the exchange (LocallyEssentialTree::packed_send_cells and
// packed_receive_cells, which MultipoleExchange's buffers follow) and are uploaded once.
namespace fmbem::fmm {

class GpuMultipolePacking {
 public:
  // Cells are indices into the device multipole arrays given to gather and add_received (p^2
  // coefficients a cell, order p); a cell may repeat in receive_cells (several peers' partials).
  // Throws fmbem::Error without a usable GPU, for p < 1 or a negative cell.
  GpuMultipolePacking(std::span<const int> send_cells, std::span<const int> receive_cells,
                      int order);
  ~GpuMultipolePacking();
  GpuMultipolePacking(const GpuMultipolePacking&) = delete;
  GpuMultipolePacking& operator=(const GpuMultipolePacking&) = delete;

  // Pinned host buffers, send_cells and receive_cells times p^2 coefficients, packed cell by cell.
  std::span<cplx> send_buffer();
  std::span<cplx> receive_buffer();

  // send_buffer() = the send cells' multipoles. Enqueued on the CUDA default stream after the
  // work before it there, and waited for.
  void gather(const cplx* device_multipoles);
  // Adds receive_buffer() to the receive cells' multipoles: a cell's partials in their order in
  // receive_cells, after what the cell holds (the sum MultipoleExchange::end forms on the host).
  // Enqueued on the default stream; receive_buffer() may be refilled once it has run (after the
  // next gather, which waits for the stream).
  void add_received(cplx* device_multipoles);

  std::size_t device_bytes() const;
  std::size_t host_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fmbem::fmm
