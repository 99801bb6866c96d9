// Files of segments, one per line, as sacreBLEU's command line reads hypotheses and references:
// the text must be valid UTF-8, lines end at '\n' (a final '\n' is optional, so "a\nb" and "a\nb\n"
// both hold two segments and an empty file none), and nothing else is removed: a '\r' or other
// trailing whitespace stays in the segment (sacreBLEU right-strips each line, which changes no
// score: BLEU right-strips every segment itself and chrF removes all whitespace).
#pragma once
#include <string>
#include <vector>

namespace normlab {

// The segments of the file at `path`. Throws "[<op>] <path>: cannot open file" when it cannot be
// read (or is a directory) and "[<op>] <path>:<line>: not valid UTF-8 (bad byte 0xNN at byte B of the line)"
// naming the first invalid line.
std::vector<std::string> read_segment_file(const std::string& path, const char* op);

// The same from text already read; `name` stands for the path in errors.
std::vector<std::string> split_segments(const std::string& text, const std::string& name, const char* op);

}  // namespace normlab
