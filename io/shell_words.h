// Command lines a user can paste into a POSIX shell: the one quoting helper (the trainer's resume
// hint, the sweep's logged commands, gnuplot's invocation use it).
#pragma once
#include <string>
#include <vector>

namespace normlab {

// `text` as one shell word: unchanged when it has only characters no shell treats specially
// ([A-Za-z0-9_./-+=:,@%]), else in single quotes (a ' becomes '\''); "" becomes ''.
std::string shell_quote(const std::string& text);
// Each word shell-quoted, joined by spaces.
std::string shell_command(const std::vector<std::string>& argv);
// The running executable's absolute path (/proc/self/exe resolved, without the " (deleted)" the
// kernel adds when a rebuild replaced the file); "normlab" when it cannot be read.
std::string own_executable_path();

}  // namespace normlab
