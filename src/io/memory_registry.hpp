#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fmbem/core/error.hpp"

namespace fmbem::io::detail {

// What a program holds in memory under a name, read by a "memory:NAME" spec as a file would be
// (the surfaces and field points of the Python module). Lookups copy: a reader keeps its copy
// after the holder lets go. Thread-safe.
template <typename Value>
class MemoryRegistry {
 public:
  // `what` names the kind of thing in messages ("surface", "field point set").
  void insert(const std::string& name, Value value, const std::string& what) {
    if (name.empty() || name.find_first_of(" \t\n\r") != std::string::npos)
      throw Error("a " + what + " held in memory needs a name without blanks (got '" + name + "')");
    const std::lock_guard lock(mutex_);
    if (!values_.emplace(name, std::move(value)).second)
      throw Error("a " + what + " named '" + name + "' is held in memory already");
  }
  void erase(const std::string& name) {
    const std::lock_guard lock(mutex_);
    values_.erase(name);
  }
  std::optional<Value> find(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    const auto found = values_.find(name);
    if (found == values_.end()) return std::nullopt;
    return found->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace fmbem::io::detail
