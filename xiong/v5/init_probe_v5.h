// Xiong v5's E2 probe: for each registered init_probe arm and seed, the model of the study's config
// at initialization (model.seed = seed) and init_probe.batches training batches of
// init_probe.batch_pairs sentence pairs (drawn with train.seed = seed), the norm of the
// batch-averaged gradient of every layer's FFN W1 and W2 in both stacks. Written to a CSV with the
// columns arm, seed, stack, weight, layer (1 = nearest the input), norm_of_mean.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "xiong/v5/registration_v5.h"

namespace normlab::xiong {

// extra_overrides follow the registration's (the --quick slice); the file is written atomically.
void run_init_probe(const RegistrationV5& reg, const std::vector<std::string>& extra_overrides,
                    const std::vector<int>& seeds, const std::filesystem::path& csv_path);

}  // namespace normlab::xiong
