#pragma once
// What the GPU tests share: they skip only where no GPU exists, and say why.
#include <gtest/gtest.h>

#include <string>

#include "fmbem/fmm/gpu_device.hpp"

// GTEST_SKIP returns from the test body, so this is a macro.
#define SKIP_WITHOUT_GPU()                                                                   \
  do {                                                                                       \
    std::string why_no_gpu;                                                                  \
    if (!::fmbem::fmm::gpu_available(&why_no_gpu)) GTEST_SKIP() << "no GPU: " << why_no_gpu; \
  } while (false)
