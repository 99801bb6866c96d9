// train.threads = 0 uses the cores the load leaves idle, never fewer than 1 (issue 36 item 8).
#include <gtest/gtest.h>

#include "core/backend.h"

namespace normlab {

TEST(ThreadCount, DefaultIsTheIdleCoresAtLeastOne) {
  EXPECT_EQ(default_thread_count(2, 0.0), 2);   // an idle machine: all cores
  EXPECT_EQ(default_thread_count(2, 1.2), 1);   // one core busy elsewhere
  EXPECT_EQ(default_thread_count(2, 3.0), 1);   // overloaded: still one thread
  EXPECT_EQ(default_thread_count(16, 4.6), 11); // the load rounded to whole cores
  EXPECT_EQ(default_thread_count(4, -1.0), 4);  // an unreadable load counts as none
}

}  // namespace normlab
