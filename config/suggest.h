// "Did you mean ...?" for misspelt config keys, sections and enum values.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace normlab {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring characters each cost 1 ("psot" -> "post" is 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is close enough to be a plausible typo
// (distance <= max(2, |word| / 3) and smaller than |word|), else "".
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" using nearest_name, or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace normlab
