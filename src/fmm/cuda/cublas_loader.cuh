#pragma once
// cuBLAS, opened at run time: programs that never use the gemm scheme (or the leaf-block
// preconditioner on the GPU, src/solver/cuda/gpu_block_inverse.cu) do not need the library
// (540 MB with cublasLt), and the device bundles stay small. The toolkit's libcublas.so.13 is
// found through the loader's usual search path.
#include <cublas_v2.h>

namespace fmbem::fmm::cuda {

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasZgemm_v2) zgemm = nullptr;
  decltype(&cublasZgemmBatched) zgemm_batched = nullptr;
  decltype(&cublasZgetrfBatched) zgetrf_batched = nullptr;
  decltype(&cublasZgetriBatched) zgetri_batched = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The library's entry points, loaded once; throws fmbem::Error when it cannot be opened.
const Cublas& cublas();

// Throws fmbem::Error "cuBLAS error in <what>: <status>".
void check_cublas(cublasStatus_t status, const char* what);

// A handle on the default stream, destroyed with the object.
class CublasHandle {
 public:
  CublasHandle();
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace fmbem::fmm::cuda
