// What a record needs to say which build ran it, on which CPU and when: the git commit CMake saw
// when it configured the build (core/CMakeLists.txt; "unknown" outside a git checkout), the file
// holding this code and its CRC-32, the CPU's model name and the time in UTC.
#pragma once
#include <string>

namespace normlab {

// The commit checked out when the build was configured (a later commit built without configuring
// again still says the earlier one: the binary's CRC-32 is the exact identity).
const char* build_commit();
// The executable or shared library that holds normlab's code (the normlab CLI, a test, the Python
// module), as the dynamic loader names it; /proc/self/exe where it names none.
std::string code_file();
// The "model name" of /proc/cpuinfo's first processor ("" where there is none).
std::string cpu_model_name();
// The first "model name" and "flags" lines of /proc/cpuinfo, one per line (what kernel choices
// depend on).
std::string cpu_identity();
// Now, as "2026-12-05T23:59:36Z".
std::string utc_now();

}  // namespace normlab
