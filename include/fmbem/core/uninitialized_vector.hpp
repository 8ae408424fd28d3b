#pragma once
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace fmbem {

// An allocator whose value-less construction leaves a trivial element uninitialised: resize (and
// the size constructor) of a vector of hundreds of megabytes then touches no page, so that the
// threads which write the elements first fault their pages in (in parallel), instead of one
// thread zeroing them all before.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  static_assert(std::is_trivially_default_constructible_v<T>);
  using value_type = T;
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A vector whose resize leaves new elements uninitialised: every element must be written before
// it is read.
template <class T>
using UninitializedVector = std::vector<T, UninitializedAllocator<T>>;

}  // namespace fmbem
