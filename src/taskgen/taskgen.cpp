// Task generator core: seeded RNG, splits, registry, rendering of KernelBench modules, ids.
#include "kgym/taskgen.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "kgym/error.hpp"

namespace kgym::taskgen {

void register_builtin_families(Registry& registry);  // generated from families/*.cpp by CMake

// ---- names ----------------------------------------------------------------------------------

std::string_view to_string(Variant v) noexcept {
  switch (v) {
    case Variant::full: return "full";
    case Variant::small: return "small";
    case Variant::scaffold: return "scaffold";
    case Variant::epilogue: return "epilogue";
  }
  return "unknown";
}

std::string_view to_string(Split s) noexcept {
  switch (s) {
    case Split::train: return "train";
    case Split::transfer: return "transfer";
    case Split::heldout: return "heldout";
  }
  return "unknown";
}

std::optional<Variant> variant_from_string(std::string_view name) noexcept {
  for (Variant v : {Variant::full, Variant::small, Variant::scaffold, Variant::epilogue})
    if (to_string(v) == name) return v;
  return std::nullopt;
}

std::optional<Split> split_from_string(std::string_view name) noexcept {
  for (Split s : {Split::train, Split::transfer, Split::heldout})
    if (to_string(s) == name) return s;
  return std::nullopt;
}

Split split_of_seed(std::uint64_t seed) noexcept {
  if (seed >= kTransferBegin && seed < kHeldoutBegin) return Split::transfer;
  if (seed >= kHeldoutBegin && seed < kHeldoutEnd) return Split::heldout;
  return Split::train;
}

std::string_view policy_profile(Variant v) noexcept {
  return v == Variant::epilogue ? "hybrid" : "strict";
}

// ---- RNG ------------------------------------------------------------------------------------

std::uint64_t Rng::next() noexcept {
  // splitmix64, https://prng.di.unimi.it/splitmix64.c
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  if (lo > hi) throw Error(ErrorKind::internal, "Rng::uniform_int: empty range");
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(next());  // full 64-bit range
  // Rejection sampling: unbiased and defined the same everywhere.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;
  std::uint64_t x;
  do x = next();
  while (x >= limit);
  return lo + static_cast<std::int64_t>(x % span);
}

double Rng::uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::int64_t Rng::log_uniform_int(std::int64_t lo, std::int64_t hi) {
  if (lo < 1 || lo > hi) throw Error(ErrorKind::internal, "Rng::log_uniform_int: bad range");
  const double a = std::log(static_cast<double>(lo)), b = std::log(static_cast<double>(hi) + 1.0);
  auto v = static_cast<std::int64_t>(std::floor(std::exp(a + (b - a) * uniform())));
  return std::clamp(v, lo, hi);
}

static bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::int64_t Rng::odd_dim(std::int64_t lo, std::int64_t hi) {
  std::int64_t v = uniform_int(lo, hi);
  if (!is_pow2(v) || v <= 2) return v;
  // Move off the power of two by a small odd step, staying in range.
  std::int64_t step = 1 + 2 * uniform_int(0, 2);
  if (v + step <= hi) return v + step;
  if (v - step >= lo && v - step > 0) return v - step;
  return v;
}

std::vector<std::int64_t> draw_shape(Rng& rng, std::int64_t target, int rank, std::int64_t min_dim,
                                     std::int64_t max_total) {
  if (rank < 1) throw Error(ErrorKind::internal, "draw_shape: rank < 1");
  target = std::max<std::int64_t>(target, 1);
  std::vector<double> w(rank);
  double sum = 0;
  for (auto& x : w) sum += (x = 0.25 + rng.uniform());
  const double log_target = std::log(static_cast<double>(target));
  std::vector<std::int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    auto d = static_cast<std::int64_t>(std::llround(std::exp(log_target * w[i] / sum)));
    d = std::max(d, min_dim);
    if (is_pow2(d) && d > 2) d += (rng.chance(0.5) ? 1 : -1);  // odd, non-power-of-two shapes
    dims[i] = std::max(d, min_dim);
  }
  // Respect the cap by shrinking the largest dim.
  auto total = [&] {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  };
  while (total() > max_total) {
    auto it = std::max_element(dims.begin(), dims.end());
    if (*it <= min_dim) break;
    *it = std::max(min_dim, *it * 9 / 10);
  }
  return dims;
}

std::pair<std::int64_t, std::int64_t> element_range(std::string_view variant_name, std::int64_t min_small) {
  if (variant_name == "small") return {std::max<std::int64_t>(1, min_small), 4096};
  return {std::int64_t{1} << 20, std::int64_t{32} << 20};
}

// ---- specs and cost -------------------------------------------------------------------------

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

std::int64_t TensorSpec::element_bytes() const {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype == "float64" || dtype == "int64") return 8;
  if (dtype == "bool" || dtype == "int8" || dtype == "uint8") return 1;
  throw Error(ErrorKind::internal, "TensorSpec: unknown dtype '" + dtype + "'");
}

double Cost::floor_ms(double bandwidth_gbs, double peak_tflops) const {
  const double mem_s = bandwidth_gbs > 0 ? bytes / (bandwidth_gbs * 1e9) : 0;
  const double math_s = peak_tflops > 0 ? flops / (peak_tflops * 1e12) : 0;
  return std::max(mem_s, math_s) * 1e3;
}

// ---- registry -------------------------------------------------------------------------------

const Registry& Registry::instance() {
  static const Registry registry = [] {
    Registry r;
    register_builtin_families(r);
    return r;
  }();
  return registry;
}

void Registry::add(Family family) {
  if (family.name.empty() || family.ops.empty() || !family.design || family.dtypes.empty())
    throw Error(ErrorKind::internal, "taskgen: family '" + family.name + "' lacks a name, ops, dtypes or design");
  for (const auto& op : family.transfer_ops)
    if (std::find(family.ops.begin(), family.ops.end(), op) == family.ops.end())
      throw Error(ErrorKind::internal, "taskgen: family '" + family.name + "' transfer op '" + op + "' is not an op");
  std::string name = family.name;
  if (!families_.emplace(name, std::move(family)).second)
    throw Error(ErrorKind::internal, "taskgen: family '" + name + "' registered twice");
}

const Family& Registry::get(std::string_view name) const {
  auto it = families_.find(name);
  if (it == families_.end()) {
    std::string known;
    for (const auto& [n, f] : families_) known += (known.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::input, "unknown task family '" + std::string(name) + "'; known families: " + known);
  }
  return it->second;
}

std::vector<const Family*> Registry::families() const {
  std::vector<const Family*> out;
  for (const auto& [n, f] : families_) out.push_back(&f);
  return out;
}

// ---- rendering ------------------------------------------------------------------------------

static const char* kImports =
    "import math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";

static std::string docstring(std::string_view text) {
  return "\"\"\"" + std::string(text) + "\n\"\"\"\n";
}

std::string render_reference(const Design& d, std::string_view header_doc) {
  std::ostringstream o;
  o << docstring(header_doc) << kImports << "\n";
  for (const auto& [name, value] : d.constants) o << name << " = " << value << "\n";
  o << "\n\nclass Model(nn.Module):\n"
    << "    \"\"\"" << d.summary << "\"\"\"\n\n"
    << "    def __init__(self" << (d.init_params.empty() ? "" : ", " + d.init_params) << "):\n"
    << "        super().__init__()\n"
    << d.init_body << "\n"
    << "    def forward(self, " << d.forward_params << "):\n"
    << d.forward_body << "\n\n"
    << "def get_inputs():\n" << d.inputs_body << "\n\n\n"
    << "def get_init_inputs():\n    return " << d.init_inputs << "\n";
  return o.str();
}

std::string render_solution(const Design& d, std::string_view dtype, std::string_view header_doc) {
  std::ostringstream o;
  o << docstring(header_doc) << kImports << "\n\n"
    << "class ModelNew(nn.Module):\n"
    << "    def __init__(self" << (d.init_params.empty() ? "" : ", " + d.init_params) << "):\n"
    << "        super().__init__()\n"
    << d.solution_init_body << "\n"
    << "    def forward(self, " << d.forward_params << "):\n";
  if (dtype == "float16" || dtype == "bfloat16") {
    // Honest half-precision solutions compute in float32 and round once at the end.
    o << "        args = [a.float() if torch.is_tensor(a) and a.is_floating_point() else a for a in ("
      << d.forward_params << ",)]\n"
      << "        return self._forward_float32(*args).to(torch." << dtype << ")\n\n"
      << "    def _forward_float32(self, " << d.forward_params << "):\n";
  }
  o << d.solution_forward_body;
  return o.str();
}

// ---- ids and generation ---------------------------------------------------------------------

std::string make_id(std::string_view family, std::uint64_t seed, const GenOptions& options,
                    std::string_view default_dtype) {
  std::string id = "gen/" + std::string(family) + "/" + std::to_string(seed);
  if (options.variant != Variant::full) id += "-" + std::string(to_string(options.variant));
  if (!options.dtype.empty() && options.dtype != default_dtype) id += "-" + options.dtype;
  return id;
}

static std::uint64_t family_hash(std::string_view name) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a 64
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return h;
}

static bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

GeneratedTask generate(std::string_view family_name, std::uint64_t seed, const GenOptions& options) {
  const Family& family = Registry::instance().get(family_name);
  if (std::find(family.variants.begin(), family.variants.end(), options.variant) == family.variants.end()) {
    std::string names;
    for (Variant v : family.variants) names += (names.empty() ? "" : ", ") + std::string(to_string(v));
    throw Error(ErrorKind::input, "family '" + family.name + "' has no " + std::string(to_string(options.variant)) +
                                      " variant; supported: " + names);
  }
  const std::string dtype = options.dtype.empty() ? family.dtypes.front() : options.dtype;
  if (!contains(family.dtypes, dtype))
    throw Error(ErrorKind::input, "family '" + family.name + "' does not support dtype '" + dtype +
                                      "'; supported: " + [&] {
                                        std::string s;
                                        for (const auto& t : family.dtypes) s += (s.empty() ? "" : ", ") + t;
                                        return s;
                                      }());

  const Split split = split_of_seed(seed);
  // The op: train draws from ops not held out; transfer from the held-out ones; heldout from all.
  std::vector<std::string> pool;
  for (const auto& op : family.ops) {
    if (family.has_variant && !family.has_variant(op, options.variant)) continue;
    const bool held = contains(family.transfer_ops, op);
    if (split == Split::heldout || (split == Split::train && !held) ||
        (split == Split::transfer && (held || family.transfer_ops.empty())))
      pool.push_back(op);
  }
  if (pool.empty())  // the split's ops lack this variant: fall back to every op that has it
    for (const auto& op : family.ops)
      if (!family.has_variant || family.has_variant(op, options.variant)) pool.push_back(op);

  // Seeded from (family, seed) only: the variant and dtype change the draw of sizes, not the op.
  Rng rng(family_hash(family.name) ^ (seed * 0x9e3779b97f4a7c15ULL));
  std::string op = rng.choice(pool);
  Rng design_rng(rng.next() ^ family_hash(to_string(options.variant)) ^ family_hash(dtype));
  DesignRequest request{design_rng, op, options.variant, dtype};
  Design d = family.design(request);
  d.op = op;

  GeneratedTask t;
  t.family = family.name;
  t.op = op;
  t.summary = d.summary;
  t.seed = seed;
  t.split = split;
  t.variant = options.variant;
  t.dtype = dtype;
  t.policy_profile = std::string(policy_profile(options.variant));
  t.constants = d.constants;
  t.inputs = d.inputs;
  t.parameters = d.parameters;
  t.output = d.output;
  t.cost = d.cost;
  double bytes = static_cast<double>(d.output.numel() * d.output.element_bytes());
  for (const auto& s : d.inputs) bytes += static_cast<double>(s.numel() * s.element_bytes());
  for (const auto& s : d.parameters) bytes += static_cast<double>(s.numel() * s.element_bytes());
  t.cost.bytes = bytes;
  t.library_calls = d.library_calls;
  t.scaffold = d.scaffold;

  GenOptions normalized = options;
  normalized.dtype = dtype;
  t.task.id = make_id(family.name, seed, normalized, family.dtypes.front());
  t.task.origin = "taskgen:" + family.name + ":" + std::to_string(seed) + ":" +
                  std::string(to_string(options.variant)) + ":" + dtype;
  t.task.level = family.level;
  const std::string header = t.task.id + ": " + d.summary + "\nGenerated by kgym taskgen (family " + family.name +
                             ", op " + op + ", seed " + std::to_string(seed) + ", split " +
                             std::string(to_string(split)) + ", variant " + std::string(to_string(options.variant)) +
                             ", policy " + t.policy_profile + ").";
  t.task.source = render_reference(d, header);
  t.solution = render_solution(d, dtype, "Honest reference solution for " + t.task.id + " (" + op +
                                      "): plain PyTorch, written from the formula.");
  return t;
}

GeneratedTask generate_from_id(std::string_view id) {
  auto bad = [&] {
    return Error(ErrorKind::input, "'" + std::string(id) +
                                       "' is not a generated task id; expected gen/<family>/<seed>[-<variant>][-<dtype>]");
  };
  if (id.substr(0, 4) != "gen/") throw bad();
  auto rest = id.substr(4);
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) throw bad();
  std::string family(rest.substr(0, slash));
  std::string tail(rest.substr(slash + 1));
  std::vector<std::string> parts;
  std::stringstream ss(tail);
  for (std::string p; std::getline(ss, p, '-');) parts.push_back(p);
  if (parts.empty() || parts[0].empty() || parts[0].find_first_not_of("0123456789") != std::string::npos ||
      parts[0].size() > 19)
    throw bad();
  GenOptions options;
  std::uint64_t seed = std::stoull(parts[0]);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (auto v = variant_from_string(parts[i]); v && i == 1) options.variant = *v;
    else if (options.dtype.empty() && !parts[i].empty()) options.dtype = parts[i];
    else throw bad();
  }
  GeneratedTask t = generate(family, seed, options);
  if (t.task.id != id) throw bad();  // e.g. "-full" or the default dtype spelled out
  return t;
}

// ---- JSON -----------------------------------------------------------------------------------

static nlohmann::json spec_json(const TensorSpec& s) {
  return {{"name", s.name}, {"shape", s.shape}, {"dtype", s.dtype}};
}

nlohmann::json to_json(const GeneratedTask& t, bool with_sources) {
  nlohmann::json j = {{"id", t.task.id},
                      {"family", t.family},
                      {"op", t.op},
                      {"summary", t.summary},
                      {"seed", t.seed},
                      {"split", to_string(t.split)},
                      {"variant", to_string(t.variant)},
                      {"policy_profile", t.policy_profile},
                      {"dtype", t.dtype},
                      {"level", t.task.level},
                      {"origin", t.task.origin}};
  nlohmann::json constants = nlohmann::json::object();
  for (const auto& [n, v] : t.constants) constants[n] = v;
  j["constants"] = constants;
  j["inputs"] = nlohmann::json::array();
  for (const auto& s : t.inputs) j["inputs"].push_back(spec_json(s));
  j["parameters"] = nlohmann::json::array();
  for (const auto& s : t.parameters) j["parameters"].push_back(spec_json(s));
  j["output"] = spec_json(t.output);
  j["cost"] = {{"bytes", t.cost.bytes}, {"flops", t.cost.flops}};
  if (!t.library_calls.empty()) j["library_calls"] = t.library_calls;
  if (t.nearest_benchmark)
    j["decontamination"] = {{"nearest", t.nearest_benchmark->first},
                            {"jaccard", t.nearest_benchmark->second},
                            {"dropped_from_train", t.dropped_from_train}};
  if (with_sources) {
    j["source"] = t.task.source;
    j["solution"] = t.solution;
    if (!t.scaffold.empty()) j["scaffold"] = t.scaffold;
  }
  return j;
}

}  // namespace kgym::taskgen
