// A table of rows that grows at run time: the norm table (nn/norm_kinds.cpp) and the placement
// table (nn/placement.cpp). The built-in rows come first, in their enum's order; a row registered
// while the process runs takes the next id. Rows never move (a deque keeps references), a lock
// guards the growth, and a name registered twice means its latest row.
#pragma once
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/named_enum.h"

namespace normlab {

// Row has a std::string `name` and an id member `IdField` of enum type Id.
template <typename Row, typename Id, Id Row::*IdField>
class RuntimeTable {
 public:
  explicit RuntimeTable(std::deque<Row> builtin) : rows_(std::move(builtin)), builtin_(rows_.size()) {}

  std::vector<const Row*> rows() const {
    const std::lock_guard lock(mutex_);
    std::vector<const Row*> out;
    for (const Row& r : rows_) out.push_back(&r);
    return out;
  }

  // The row of `id`, or nullptr when no row has it.
  const Row* at(Id id) const {
    const std::lock_guard lock(mutex_);
    const auto index = static_cast<size_t>(id);
    return index < rows_.size() ? &rows_[index] : nullptr;
  }

  std::optional<Id> find(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    for (auto r = rows_.rbegin(); r != rows_.rend(); ++r)
      if (r->name == name) return (*r).*IdField;
    return std::nullopt;
  }

  // Each name with its latest row: the values a config may name.
  std::vector<NamedValue<Id>> names() const {
    std::vector<NamedValue<Id>> out;
    for (const Row* r : rows())
      if (find(r->name) == r->*IdField) out.push_back({r->*IdField, r->name});
    return out;
  }

  // Appends `row` under the next id. Throws "[op] '<name>' is a built-in <what>; choose another name".
  Id add(Row row, const char* op, const char* what) {
    const std::lock_guard lock(mutex_);
    for (size_t i = 0; i < builtin_; ++i)
      NL_CHECK(rows_[i].name != row.name, op, "'{}' is a built-in {}; choose another name", row.name, what);
    row.*IdField = static_cast<Id>(rows_.size());
    rows_.push_back(std::move(row));
    return rows_.back().*IdField;
  }

 private:
  mutable std::mutex mutex_;
  std::deque<Row> rows_;
  size_t builtin_;
};

}  // namespace normlab
