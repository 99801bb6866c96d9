// The config keys explained, from the one table of keys (config_key_docs(), config/config.h):
//   normlab config --explain [KEY|SECTION]   explain_config: every key, one section, or one key
//   normlab config --markdown                config_markdown: docs/config.md, a table per section
// A test compares docs/config.md with config_markdown(), so the file cannot drift from the code.
#pragma once
#include <string>

#include "config/run_config.h"

namespace normlab {

// The keys that `what` names ("" = all; a section "train"; a key "train.steps", or "steps" alone
// when one section has it, every section's when several do), each as
//   train.checkpoint_every = 0   (integer, 0 to 2^53)
//       checkpoint every N steps; 0 = only at the end (...)
// With `resolved` (a config file's values), each line shows that value and the default beside it.
// Throws "[config] unknown key or section 'x' (did you mean 'y'?)".
std::string explain_config(const std::string& what, const RunConfig* resolved = nullptr);

// docs/config.md: a heading and a table (key, type, default, allowed, description) per section.
std::string config_markdown();

}  // namespace normlab
