#pragma once
// MSH files written byte by byte, for tests that need a layout Gmsh does not write
// (big-endian binary, odd spacing, mixed element types) and for the fuzz test's seeds.

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fmbem/mesh/mesh.hpp"

namespace fmbem::io::samples {

// One element: its Gmsh type, its node tags (node i of the surface has tag i + 1) and its
// physical tag (MSH 2 only; 0: none).
struct Element {
  int type;
  std::vector<long long> nodes;
  int physical = 0;
};

// A $PhysicalNames entry.
struct PhysicalName {
  int dimension, tag;
  std::string name;
};

struct MeshData {
  std::vector<Vec3> nodes;
  std::vector<Element> elements;    // element i has tag i + 1
  std::vector<PhysicalName> names;  // MSH 2 only
};

inline MeshData from_surface(const Surface& surface) {
  MeshData data{surface.vertices, {}};
  for (const Triangle& t : surface.triangles)
    data.elements.push_back({2, {t[0] + 1, t[1] + 1, t[2] + 1}});
  return data;
}

inline int dimension(int type) {
  return type == 15 ? 0 : type == 1 ? 1 : type == 2 || type == 3 ? 2 : 3;
}

class Bytes {
 public:
  explicit Bytes(bool big_endian)
      : swap_(big_endian != (std::endian::native == std::endian::big)) {}
  template <typename T>
  void put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof raw);
    if (swap_)
      for (std::size_t i = 0; i < sizeof raw / 2; ++i) std::swap(raw[i], raw[sizeof raw - 1 - i]);
    text.append(raw, sizeof raw);
  }
  void line(const std::string& l) { text += l + "\n"; }
  std::string text;

 private:
  bool swap_;
};

inline std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// MSH 2.2, ASCII or binary (little- or big-endian). Tags: the element's physical, entity 1.
inline std::string msh22(const MeshData& mesh, bool binary, bool big_endian = false) {
  Bytes out(big_endian);
  out.line("$MeshFormat");
  out.line(binary ? "2.2 1 8" : "2.2 0 8");
  if (binary) {
    out.put<std::int32_t>(1);
    out.line("");
  }
  out.line("$EndMeshFormat");
  if (!mesh.names.empty()) {
    out.line("$PhysicalNames");
    out.line(std::to_string(mesh.names.size()));
    for (const PhysicalName& n : mesh.names)
      out.line(std::to_string(n.dimension) + " " + std::to_string(n.tag) + " \"" + n.name + "\"");
    out.line("$EndPhysicalNames");
  }
  out.line("$Nodes");
  out.line(std::to_string(mesh.nodes.size()));
  for (std::size_t i = 0; i < mesh.nodes.size(); ++i) {
    const Vec3& p = mesh.nodes[i];
    if (binary) {
      out.put<std::int32_t>(static_cast<std::int32_t>(i + 1));
      for (double x : {p.x, p.y, p.z}) out.put<double>(x);
    } else {
      std::string l = std::to_string(i + 1);
      for (double x : {p.x, p.y, p.z}) {
        l += ' ';
        l += number(x);
      }
      out.line(l);
    }
  }
  if (binary) out.line("");
  out.line("$EndNodes");
  out.line("$Elements");
  out.line(std::to_string(mesh.elements.size()));
  for (std::size_t e = 0; e < mesh.elements.size(); ++e) {
    const Element& element = mesh.elements[e];
    if (binary) {  // one block per element: simple and valid
      for (std::int32_t v : {element.type, 1, 2}) out.put<std::int32_t>(v);
      for (std::int32_t v : {static_cast<std::int32_t>(e + 1), element.physical, 1})
        out.put<std::int32_t>(v);
      for (long long n : element.nodes) out.put<std::int32_t>(static_cast<std::int32_t>(n));
    } else {
      std::string l = std::to_string(e + 1);
      l += ' ';
      l += std::to_string(element.type);
      l += " 2 " + std::to_string(element.physical) + " 1";
      for (long long n : element.nodes) {
        l += ' ';
        l += std::to_string(n);
      }
      out.line(l);
    }
  }
  if (binary) out.line("");
  out.line("$EndElements");
  return out.text;
}

// MSH 4.1 without $Entities (Gmsh makes discrete entities): one node block on the
// surface entity (2, 1), one element block per element, on entity (dim, 1).
inline std::string msh41(const MeshData& mesh, bool binary, bool big_endian = false) {
  Bytes out(big_endian);
  const auto size = [&](std::uint64_t v, std::string& l) {
    if (binary) return out.put<std::uint64_t>(v);
    if (!l.empty()) l += ' ';
    l += std::to_string(v);
  };
  const auto integer = [&](std::int32_t v, std::string& l) {
    if (binary) return out.put<std::int32_t>(v);
    if (!l.empty()) l += ' ';
    l += std::to_string(v);
  };
  const auto end_line = [&](std::string& l) {
    if (!binary) out.line(l);
    l.clear();
  };
  out.line("$MeshFormat");
  out.line(binary ? "4.1 1 8" : "4.1 0 8");
  if (binary) {
    out.put<std::int32_t>(1);
    out.line("");
  }
  out.line("$EndMeshFormat");
  out.line("$Nodes");
  std::string l;
  const std::uint64_t n = mesh.nodes.size();
  size(1, l), size(n, l), size(1, l), size(n, l), end_line(l);
  integer(2, l), integer(1, l), integer(0, l), size(n, l), end_line(l);
  for (std::uint64_t i = 1; i <= n; ++i) size(i, l), end_line(l);
  for (const Vec3& p : mesh.nodes) {
    if (binary)
      for (double x : {p.x, p.y, p.z}) out.put<double>(x);
    else
      out.line(number(p.x) + ' ' + number(p.y) + ' ' + number(p.z));
  }
  if (binary) out.line("");
  out.line("$EndNodes");
  out.line("$Elements");
  const std::uint64_t m = mesh.elements.size();
  size(m, l), size(m, l), size(1, l), size(m, l), end_line(l);
  for (std::uint64_t e = 0; e < m; ++e) {
    const Element& element = mesh.elements[e];
    integer(dimension(element.type), l), integer(1, l), integer(element.type, l), size(1, l);
    end_line(l);
    size(e + 1, l);
    for (long long node : element.nodes) size(static_cast<std::uint64_t>(node), l);
    end_line(l);
  }
  if (binary) out.line("");
  out.line("$EndElements");
  return out.text;
}

}  // namespace fmbem::io::samples
