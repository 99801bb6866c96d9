#include "data/sword_modules.h"

#include <markupfiltmgr.h>
#include <swmgr.h>
#include <swmodule.h>
#include <versekey.h>

#include <array>
#include <memory>
#include <set>

#include "core/error.h"
#include "data/osis_text.h"

namespace normlab {

namespace {

constexpr const char* kOp = "bible";

sword::SWModule& module_named(sword::SWMgr& manager, const std::string& name) {
  sword::SWModule* module = manager.getModule(name.c_str());
  if (module == nullptr) {
    const std::string package = sword_package_of(name);
    fail(kOp, "the SWORD module {} is not installed{}", name,
         package.empty() ? std::string(" (no Debian package is known for it)")
                         : " (apt-get install " + package + ")");
  }
  return *module;
}

std::string config_entry(sword::SWModule& module, const char* key) {
  const char* value = module.getConfigEntry(key);
  return value == nullptr ? "" : value;
}

SwordModuleInfo info_of(sword::SWModule& module, const std::string& role) {
  const std::string name = module.getName();
  return {name, role, sword_package_of(name), config_entry(module, "Version"), config_entry(module, "Versification"),
          config_entry(module, "Lang")};
}

// The raw OSIS entry of `module` at the verse `key` names, as plain text; `taken` holds the
// module's own references read so far: a reference read again yields no verse.
void read_mapped(sword::SWModule& module, const sword::VerseKey& key, const std::string& ref,
                 std::set<std::string>& taken, std::vector<VerseText>& out) {
  module.setKey(key);
  if (module.popError() != 0) return;
  const std::string own_ref = static_cast<sword::VerseKey*>(module.getKey())->getOSISRef();
  if (!taken.insert(own_ref).second) return;
  const std::string raw = module.getRawEntry();
  out.push_back({ref, osis_to_plain(raw, std::string(module.getName()) + " " + own_ref)});
}

}  // namespace

std::string sword_package_of(const std::string& module) {
  static const std::array<std::pair<const char*, const char*>, 3> kPackages = {
      {{"spaRV1909eb", "sword-text-sparv"}, {"engWEB2015eb", "sword-text-web"}, {"engKJV2006eb", "sword-text-kjv"}}};
  for (const auto& [name, package] : kPackages)
    if (module == name) return package;
  return "";
}

BibleTexts read_sword_bibles(const std::string& source, const std::string& target, const std::string& second) {
  // No render filters: getRawEntry() is the module's OSIS, which osis_to_plain strips itself.
  sword::SWMgr manager(new sword::MarkupFilterMgr(sword::FMT_PLAIN));
  sword::SWModule& src = module_named(manager, source);
  sword::SWModule& tgt = module_named(manager, target);
  sword::SWModule& sec = module_named(manager, second);
  BibleTexts texts;
  texts.modules = {info_of(src, "source"), info_of(tgt, "target"), info_of(sec, "second reference")};
  std::set<std::string> target_taken, second_taken;
  for (src.setPosition(sword::TOP); src.popError() == 0; src.increment()) {
    const auto& key = *static_cast<const sword::VerseKey*>(src.getKey());
    const std::string ref = key.getOSISRef();
    texts.source.push_back({ref, osis_to_plain(std::string(src.getRawEntry()), source + " " + ref)});
    read_mapped(tgt, key, ref, target_taken, texts.target);
    read_mapped(sec, key, ref, second_taken, texts.second);
  }
  return texts;
}

}  // namespace normlab
