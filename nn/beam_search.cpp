#include "nn/beam_search.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace normlab {

namespace {

struct Candidate {
  double log_prob;
  size_t parent;  // index into the live hypotheses
  int32_t token;
};

void check_rows(const std::vector<std::vector<double>>& rows, size_t live, int32_t eos) {
  NL_CHECK(rows.size() == live, "beam_search", "the scorer returned {} rows for {} prefixes", rows.size(), live);
  for (const auto& row : rows) {
    NL_CHECK(row.size() == rows.front().size(), "beam_search",
             "the scorer returned rows of {} and {} log-probabilities", rows.front().size(), row.size());
    NL_CHECK(static_cast<size_t>(eos) < row.size(), "beam_search", "eos {} is outside the scorer's {} tokens", eos,
             row.size());
  }
}

// The best `count` extensions of the live hypotheses, best first (ties: earlier parent, lower token).
std::vector<Candidate> best_extensions(const std::vector<Hypothesis>& live,
                                       const std::vector<std::vector<double>>& rows, size_t count) {
  std::vector<Candidate> all;
  for (size_t i = 0; i < live.size(); ++i)
    for (size_t v = 0; v < rows[i].size(); ++v)
      all.push_back({live[i].log_prob + rows[i][v], i, static_cast<int32_t>(v)});
  count = std::min(count, all.size());
  const auto better = [](const Candidate& a, const Candidate& b) {
    if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
    return a.parent != b.parent ? a.parent < b.parent : a.token < b.token;
  };
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count), all.end(), better);
  all.resize(count);
  return all;
}

Hypothesis extend(const Hypothesis& parent, const Candidate& c) {
  Hypothesis h{parent.tokens, c.log_prob, 0.0};
  h.tokens.push_back(c.token);
  return h;
}

}  // namespace

std::vector<Hypothesis> beam_search(const NextTokenScorer& scorer, const BeamOptions& options) {
  NL_CHECK(options.beam_size >= 1, "beam_search", "beam_size must be >= 1, got {}", options.beam_size);
  NL_CHECK(options.max_length >= 1, "beam_search", "max_length must be >= 1, got {}", options.max_length);
  NL_CHECK(options.eos >= 0, "beam_search", "eos must be a token id >= 0, got {}", options.eos);
  const auto k = static_cast<size_t>(options.beam_size);
  std::vector<Hypothesis> live{Hypothesis{}}, finished;
  for (int64_t step = 1; step <= options.max_length && !live.empty() && finished.size() < k; ++step) {
    std::vector<std::vector<int32_t>> prefixes;
    for (const Hypothesis& h : live) prefixes.push_back(h.tokens);
    const std::vector<std::vector<double>> rows = scorer(prefixes);
    check_rows(rows, live.size(), options.eos);
    if (step == options.max_length) {  // out of length: every live hypothesis ends here
      for (size_t i = 0; i < live.size(); ++i)
        finished.push_back(extend(live[i], {live[i].log_prob + rows[i][static_cast<size_t>(options.eos)], i,
                                            options.eos}));
      break;
    }
    std::vector<Hypothesis> next;
    const std::vector<Candidate> candidates = best_extensions(live, rows, 2 * k);
    for (const Candidate& c : candidates) {
      if (next.size() == k) break;
      if (c.token != options.eos) next.push_back(extend(live[c.parent], c));
      else if (finished.size() < k) finished.push_back(extend(live[c.parent], c));
    }
    live = std::move(next);
  }
  for (Hypothesis& h : finished)
    h.score = h.log_prob / std::pow(static_cast<double>(h.tokens.size()), options.length_penalty);
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (finished.size() > k) finished.resize(k);
  return finished;
}

}  // namespace normlab
