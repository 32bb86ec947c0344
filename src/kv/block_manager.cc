#include "kv/block_manager.h"

#include <numeric>

#include "core/check.h"

namespace spillway {

BlockManager::BlockManager(std::int32_t num_blocks, std::int32_t block_size)
    : block_size_(block_size), owner_(static_cast<std::size_t>(num_blocks), kFree) {
  SPILLWAY_CHECK(num_blocks > 0 && block_size > 0);
  free_.resize(static_cast<std::size_t>(num_blocks));
  // Lowest ids on top of the stack, so allocation order is easy to read in tests.
  std::iota(free_.rbegin(), free_.rend(), 0);
}

std::int32_t BlockManager::GrowthNeeded(const std::vector<std::int32_t>& table,
                                        std::int64_t tokens) const {
  const std::int32_t need = BlocksFor(tokens) - static_cast<std::int32_t>(table.size());
  return need > 0 ? need : 0;
}

bool BlockManager::Grow(RequestId owner, std::vector<std::int32_t>& table, std::int64_t tokens) {
  SPILLWAY_CHECK(owner != kFree);
  const std::int32_t need = GrowthNeeded(table, tokens);
  if (need > num_free()) {
    return false;
  }
  for (std::int32_t i = 0; i < need; ++i) {
    const std::int32_t block = free_.back();
    free_.pop_back();
    SPILLWAY_CHECK(owner_[static_cast<std::size_t>(block)] == kFree);
    owner_[static_cast<std::size_t>(block)] = owner;
    table.push_back(block);
  }
  return true;
}

void BlockManager::Release(RequestId owner, std::vector<std::int32_t>& table) {
  for (const std::int32_t block : table) {
    SPILLWAY_CHECK(owner_[static_cast<std::size_t>(block)] == owner);
    owner_[static_cast<std::size_t>(block)] = kFree;
    free_.push_back(block);
  }
  table.clear();
}

bool BlockManager::Owns(RequestId owner, const std::vector<std::int32_t>& table) const {
  for (const std::int32_t block : table) {
    if (block < 0 || block >= num_total() || owner_[static_cast<std::size_t>(block)] != owner) {
      return false;
    }
  }
  return true;
}

bool BlockManager::CheckInvariants(std::string* error) const {
  std::vector<char> on_free_list(owner_.size(), 0);
  for (const std::int32_t block : free_) {
    if (block < 0 || block >= num_total()) {
      *error = "free list holds out-of-range block " + std::to_string(block);
      return false;
    }
    if (on_free_list[static_cast<std::size_t>(block)]++ != 0) {
      *error = "block " + std::to_string(block) + " is on the free list twice";
      return false;
    }
    if (owner_[static_cast<std::size_t>(block)] != kFree) {
      *error = "block " + std::to_string(block) + " is free and owned";
      return false;
    }
  }
  std::int32_t owned = 0;
  for (const RequestId o : owner_) {
    owned += (o != kFree) ? 1 : 0;
  }
  if (owned + num_free() != num_total()) {
    *error = "free (" + std::to_string(num_free()) + ") + allocated (" + std::to_string(owned) +
             ") != total (" + std::to_string(num_total()) + ")";
    return false;
  }
  return true;
}

}  // namespace spillway
