// Gate 2's link check (evaluation.hpp, link_check): what the candidate's built shared objects
// import, by the loader's names.
#include <algorithm>

#include "evaluation.hpp"
#include "kgym/policy.hpp"

namespace kgym::runner {

// Gate 2's link check (policy::check_linked_symbols): the symbols each shared object the
// candidate built imports, by the loader's names. Run once the candidate has loaded (its
// extensions are built and mapped then; a rejection ends the verdict before any case) and
// again before the verdict (an extension built or loaded in a call). Triton's cache is not
// among the folders: Triton builds its launchers there itself, and they load libcuda by dlopen.
void link_check(Evaluation& ev) {
  Measurements& m = ev.m;
  Worker& c = *ev.cw;
  const policy::Profile link_profile = ev.eo.policy_profile;
  const policy::Rule* dynamic_rule = policy::find_rule("dynamic_code");
  std::optional<policy::Severity> dynamic_severity;
  if (dynamic_rule) dynamic_severity = dynamic_rule->in(link_profile);
  if (!m.load.ok || !c.alive()) return;
  LinkRecord rec = m.link.value_or(LinkRecord{});
  rec.checked = true;
  rec.folder = (ev.build_dir / "torch_extensions").string();
  std::string note;
  // The C routines torch's own libraries export (MKL, oneDNN, ...), read from the torch the
  // candidate's process mapped: any of them imported is library compute (policy::torch_c_exports).
  const std::set<std::string>* torch_exports = nullptr;
  if (const auto dir = mapped_object_dir(c.pid(), "libtorch_cpu.so")) {
    std::string why;
    torch_exports = policy::torch_c_exports(dir->string(), &why);
    if (!torch_exports) note = "torch's exports could not be read (" + why + "); the symbol rules stand alone";
  }
  for (const auto& o : candidate_objects({ev.build_dir / "torch_extensions", ev.spec.workdir}, c.pid(), &note)) {
    const std::string name = o.path.filename().string();
    if (!ev.link_checked.insert(o.path.string() + (o.replaced ? " replaced" : "")).second) continue;
    rec.extensions.push_back(name + (o.loaded ? " (loaded)" : ""));
    const auto& severity = dynamic_severity;
    if (o.replaced) {
      if (severity)
        rec.findings.push_back({"dynamic_code", std::string(policy::to_string(*severity)),
                                "the shared object " + name + " was deleted or replaced after the candidate's process "
                                "loaded it, so what ran cannot be checked: leave built extensions in place"});
      continue;
    }
    std::string error;
    const auto symbols = policy::undefined_symbols(o.path.string(), &error);
    if (!symbols) {
      if (error.rfind("nm could not run", 0) == 0) {
        rec.note = error;  // no binutils here: the source scan stands alone
      } else if (severity) {
        rec.findings.push_back({"dynamic_code", std::string(policy::to_string(*severity)),
                                "the shared object " + name + " cannot be read as a shared library (" + error.substr(0, 200) +
                                    "): build extensions with load_inline"});
      }
      continue;
    }
    for (const policy::Finding& f : policy::check_linked_symbols(*symbols, name, link_profile, torch_exports))
      rec.findings.push_back({f.rule_id, std::string(policy::to_string(f.severity)), f.message});
    if (const auto needed = policy::needed_libraries(o.path.string()))  // nm read it: readelf does too
      for (const policy::Finding& f : policy::check_needed_libraries(*needed, name, link_profile))
        rec.findings.push_back({f.rule_id, std::string(policy::to_string(f.severity)), f.message});
  }
  if (!note.empty()) rec.note = note;
  m.link = std::move(rec);
}

bool link_rejected(const Evaluation& ev) {
  return ev.m.link && std::any_of(ev.m.link->findings.begin(), ev.m.link->findings.end(),
                                  [](const LinkFinding& f) { return f.severity == "reject"; });
}

}  // namespace kgym::runner
