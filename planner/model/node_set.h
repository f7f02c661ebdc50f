// A fixed-size bit set over node (or state) indices; the antichain construction does many
// subset and intersection tests on predecessor sets, which bit sets make cheap.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace harness::planner {

class NodeSet {
 public:
  NodeSet() = default;
  explicit NodeSet(int size) : words_((size + 63) / 64, 0) {}

  void insert(int i) { words_[i >> 6] |= std::uint64_t{1} << (i & 63); }
  bool contains(int i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void unite(const NodeSet& other) {
    for (std::size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }
  bool intersects(const NodeSet& other) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      if (words_[w] & other.words_[w]) return true;
    }
    return false;
  }
  // Indices in ascending order.
  std::vector<int> members() const {
    std::vector<int> out;
    for (std::size_t w = 0; w < words_.size(); ++w) {
      std::uint64_t bits = words_[w];
      while (bits) {
        out.push_back(static_cast<int>(w * 64 + std::countr_zero(bits)));
        bits &= bits - 1;
      }
    }
    return out;
  }
  bool operator==(const NodeSet& other) const = default;

 private:
  std::vector<std::uint64_t> words_;
};

}  // namespace harness::planner
