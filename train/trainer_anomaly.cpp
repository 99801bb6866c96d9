#include "train/trainer_anomaly.h"

#include <string>

namespace normlab {

namespace {
nlohmann::json tensor_json(const AnomalyTensor& t) {
  nlohmann::json j = {{"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}, {"finite", t.finite}};
  if (!t.name.empty()) j["name"] = t.name;
  if (!t.finite) {
    j["inf"] = t.inf_count;
    j["nan"] = t.nan_count;
  }
  return j;
}
}  // namespace

nlohmann::json anomaly_json(const AnomalyRecord& record) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const AnomalyTensor& t : record.inputs) inputs.push_back(tensor_json(t));
  nlohmann::json j = {{"phase", record.phase},           {"op", record.op},
                      {"scope", record.scope},           {"parameters", record.parameters},
                      {"inputs", inputs},                {"output", tensor_json(record.output)}};
  if (record.phase == "backward") {
    j["gradient_of"] = record.gradient_of;
    j["gradient"] = tensor_json(record.gradient);
  }
  return j;
}

}  // namespace normlab
