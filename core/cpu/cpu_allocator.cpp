#include "core/cpu/cpu_allocator.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"

namespace normlab {

static size_t rounded(size_t bytes) { return (bytes + 63) / 64 * 64; }

void* HostBlockCache::allocate(size_t bytes) {
  const size_t size = rounded(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ += size;
    peak_ = std::max(peak_, in_use_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_ -= size;
      return p;
    }
  }
  void* p = std::aligned_alloc(64, size);
  NL_CHECK(p != nullptr, "cpu.allocate", "out of memory allocating {} bytes", bytes);
  return p;
}

void HostBlockCache::release(void* ptr, size_t bytes) {
  if (!ptr) return;
  const size_t size = rounded(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= size;
    if (cached_ + size <= limit_) {
      free_[size].push_back(ptr);
      cached_ += size;
      return;
    }
  }
  std::free(ptr);
}

size_t HostBlockCache::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, blocks] : free_)
    for (void* p : blocks) std::free(p);
  free_.clear();
  const size_t freed = cached_;
  cached_ = 0;
  return freed;
}

}  // namespace normlab
