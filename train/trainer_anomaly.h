// Anomaly records (autograd/anomaly.h) as summary.json writes them under "anomaly":
//   {"phase": "forward" | "backward", "op": "linear", "scope": "blocks.1.attn.q",
//    "parameters": ["blocks.1.attn.q.weight", ...],
//    "inputs": [{"name"?, "dtype", "shape", "finite", "inf"?, "nan"?}, ...], "output": {...},
//    backward only: "gradient_of": input index (-1: the gradient arriving at the output), "gradient": {...}}
#pragma once
#include <nlohmann/json.hpp>

#include "autograd/anomaly.h"

namespace normlab {

nlohmann::json anomaly_json(const AnomalyRecord& record);

}  // namespace normlab
