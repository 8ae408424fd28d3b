#include <dlfcn.h>

#include <mutex>
#include <string>

#include "cublas_loader.cuh"
#include "fmbem/core/error.hpp"

namespace fmbem::fmm::cuda {

namespace {

template <class F>
void load(void* library, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(library, name));
  if (!f) throw Error(std::string("cuBLAS: the library has no ") + name);
}

Cublas open_cublas() {
  void* library = nullptr;
  std::string tried;
  for (const char* name : {"libcublas.so.13", "libcublas.so"}) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library) break;
    const char* message = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (message ? message : name);
  }
  if (!library)
    throw Error(
        "the gemm scheme and the leaf-block preconditioner on the GPU need cuBLAS, which "
        "could not be loaded (" +
        tried + "): add the CUDA toolkit's library folder to LD_LIBRARY_PATH");
  Cublas c;
  load(library, "cublasCreate_v2", c.create);
  load(library, "cublasDestroy_v2", c.destroy);
  load(library, "cublasSetStream_v2", c.set_stream);
  load(library, "cublasZgemm_v2", c.zgemm);
  load(library, "cublasZgemmBatched", c.zgemm_batched);
  load(library, "cublasZgetrfBatched", c.zgetrf_batched);
  load(library, "cublasZgetriBatched", c.zgetri_batched);
  load(library, "cublasGetStatusString", c.status_string);
  return c;  // the library stays open for the life of the process
}

}  // namespace

const Cublas& cublas() {
  static std::once_flag once;
  static Cublas library;
  static std::string failure;
  std::call_once(once, [] {
    try {
      library = open_cublas();
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(failure);
  return library;
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    throw Error(std::string("GPU out of memory in cuBLAS (") + what + ")");
  throw Error(std::string("cuBLAS error in ") + what + ": " + cublas().status_string(status));
}

CublasHandle::CublasHandle() {
  check_cublas(cublas().create(&handle_), "cublasCreate");
  check_cublas(cublas().set_stream(handle_, nullptr), "cublasSetStream");
}

CublasHandle::~CublasHandle() {
  if (handle_) cublas().destroy(handle_);
}

}  // namespace fmbem::fmm::cuda
