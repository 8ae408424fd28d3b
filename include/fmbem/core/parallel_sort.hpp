#pragma once
// Sorting on the OpenMP threads: libstdc++'s parallel mode (a multiway merge sort on the threads
// of omp_get_max_threads, plain std::sort below its size threshold or on one thread), std::sort
// elsewhere. For ranges whose equal elements are indistinguishable (a total order on the whole
// value), so the result is the same bits whatever the threads.
#if defined(__GLIBCXX__) && defined(_OPENMP)
#include <parallel/algorithm>
#else
#include <algorithm>
#endif

namespace fmbem {

template <class Iterator>
void parallel_sort(Iterator first, Iterator last) {
#if defined(__GLIBCXX__) && defined(_OPENMP)
  __gnu_parallel::sort(first, last);
#else
  std::sort(first, last);
#endif
}

}  // namespace fmbem
