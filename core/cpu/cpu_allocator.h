// A caching allocator for host memory. A training step allocates the same set of buffer sizes
// every time; freeing them to the system and asking again costs an mmap/munmap pair and fresh
// page faults (the kernel zeroing every page) for each large buffer, every step. Freed blocks are
// kept in exact-size free lists (sizes rounded up to 64 bytes) and handed out again, so after the
// first step a step allocates nothing from the system. The cache holds at most `limit` bytes;
// blocks freed beyond that go back to the system.
#pragma once
#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace normlab {

class HostBlockCache {
 public:
  explicit HostBlockCache(size_t limit_bytes) : limit_(limit_bytes) {}
  ~HostBlockCache() { trim(); }
  void* allocate(size_t bytes);  // throws OutOfMemory when the system refuses (after a trim)
  void release(void* ptr, size_t bytes) noexcept;
  size_t trim();  // frees every cached block; returns the bytes freed
  size_t cached_bytes() const { return cached_; }
  size_t in_use_bytes() const { return in_use_; }    // handed out and not yet released
  size_t peak_in_use_bytes() const { return peak_; }
  void reset_peak() { peak_ = in_use_; }

 private:
  void count_in_use(size_t size);  // with mutex_ held
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // rounded size -> blocks
  size_t cached_ = 0;
  size_t in_use_ = 0, peak_ = 0;
  size_t limit_;
};

}  // namespace normlab
