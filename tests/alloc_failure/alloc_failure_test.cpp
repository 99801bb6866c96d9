// Running out of memory where the C++ runtime allocates (a free list's slot, a shared_ptr's control
// block): this executable replaces the global operator new so that a test can make every
// allocation fail for a moment. Freeing memory must then still work without throwing (it runs in
// destructors, where a throw is std::terminate: the SIGABRT of issue 12).
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "core/cpu/cpu_allocator.h"
#include "core/tensor.h"

namespace {
bool g_fail_new = false;  // set only by FailingNew, on the test's thread
}

void* operator new(std::size_t bytes) {
  if (g_fail_new) throw std::bad_alloc();
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace normlab {
namespace {

// While alive, every operator new throws std::bad_alloc.
struct FailingNew {
  FailingNew() { g_fail_new = true; }
  ~FailingNew() { g_fail_new = false; }
};

TEST(AllocFailure, ReleasingABlockNeedsNoMemory) {
  HostBlockCache cache(size_t{1} << 20);
  void* p = cache.allocate(4096);  // a size the cache has no free list for yet
  {
    FailingNew failing;
    EXPECT_NO_THROW(cache.release(p, 4096));  // the free list cannot grow: the block goes back to the system
  }
  EXPECT_EQ(cache.in_use_bytes(), 0u);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  void* q = cache.allocate(4096);  // and the cache still works
  cache.release(q, 4096);
  EXPECT_EQ(cache.cached_bytes(), 4096u);
}

TEST(AllocFailure, DestroyingATensorWhenMemoryIsExhaustedDoesNotTerminate) {
  // A size of its own, so that its free list does not exist yet when the tensor is destroyed.
  auto t = std::make_unique<Tensor>(Tensor::zeros({3, 1000, 7}));
  {
    FailingNew failing;
    t.reset();  // ~Storage -> deallocate: std::terminate (SIGABRT) if it throws
  }
  EXPECT_EQ(t, nullptr);
}

}  // namespace
}  // namespace normlab
