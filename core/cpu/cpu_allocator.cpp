#include "core/cpu/cpu_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "core/bytes.h"
#include "core/error.h"

namespace normlab {

static size_t rounded(size_t bytes) { return (bytes + 63) / 64 * 64; }

void* HostBlockCache::allocate(size_t bytes) {
  if (bytes > (size_t{1} << 62))  // also keeps rounded() from wrapping around
    throw OutOfMemory(fmt::format("[cpu.allocate] {} bytes is more than any host holds", bytes));
  const size_t size = rounded(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_ -= size;
      count_in_use(size);
      return p;
    }
  }
  void* p = std::aligned_alloc(64, size);
  if (p == nullptr && trim() > 0) p = std::aligned_alloc(64, size);  // cached blocks of other sizes
  if (p == nullptr)
    throw OutOfMemory(fmt::format("[cpu.allocate] the system refused {} (tensors hold {})",
                                  format_bytes(static_cast<double>(size)),
                                  format_bytes(static_cast<double>(in_use_bytes()))));
  std::lock_guard<std::mutex> lock(mutex_);
  count_in_use(size);
  return p;
}

void HostBlockCache::count_in_use(size_t size) {
  in_use_ += size;
  peak_ = std::max(peak_, in_use_);
}

// Keeping the block needs a free-list slot, which may need memory: when there is none, the block
// goes back to the system instead (this runs in destructors, and must not throw).
void HostBlockCache::release(void* ptr, size_t bytes) noexcept {
  if (!ptr) return;
  const size_t size = rounded(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= size;
    if (cached_ + size <= limit_) {
      try {
        free_[size].push_back(ptr);
        cached_ += size;
        return;
      } catch (const std::bad_alloc&) {
      }
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
