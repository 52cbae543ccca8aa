#pragma once
// The task generator: KernelBench-format reference problems made from (family, seed, options).
//
// A family is a plug-in (src/taskgen/families/<family>.cpp) that registers itself with
// KGYM_TASKGEN_FAMILY; the core (registry, seeded RNG, splits, decontamination, cost model) never
// names a family. A generated task is a kgym::Task whose `source` is a KernelBench module
// (`class Model(nn.Module)`, `get_inputs()`, `get_init_inputs()`, module-level size constants),
// plus metadata: family, op, seed, split, dtype, shapes, cost model, variant and policy profile.
// See docs/taskgen.md for splits, id grammar, size ranges and the export layout.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/candidate.hpp"
#include "kgym/evaluator.hpp"
#include "kgym/outcome.hpp"
#include "kgym/task.hpp"

namespace kgym::taskgen {

/// Curriculum variants (from the seed's gym). `full`: training sizes (largest tensor 1M..32M
/// elements). `small`: CPU-sized shapes (tens to a few thousand elements). `scaffold`: full
/// sizes, and the task carries a starter ModelNew with host setup and tile offsets written, the
/// inner computation left to the model. `epilogue`: for fused GEMM/conv families only; the GEMM or
/// convolution may stay a library call, the fused tail is the model's job.
enum class Variant { full, small, scaffold, epilogue };

/// Splits, fixed by seed ranges (docs/taskgen.md): transfer = [800000, 900000), heldout =
/// [900000, 1000000), train = every other seed. Transfer tasks use only each family's held-out
/// ops; heldout tasks are never served by `reset` unless asked for by name.
enum class Split { train, transfer, heldout };

inline constexpr std::uint64_t kTransferBegin = 800000;  ///< first seed of the transfer split
inline constexpr std::uint64_t kHeldoutBegin = 900000;   ///< first seed of the heldout split
inline constexpr std::uint64_t kHeldoutEnd = 1000000;    ///< one past the last heldout seed

/// Stable lower-case names ("full", "train", ...) and their parsers (std::nullopt if unknown).
std::string_view to_string(Variant v) noexcept;
std::string_view to_string(Split s) noexcept;
std::optional<Variant> variant_from_string(std::string_view name) noexcept;
std::optional<Split> split_from_string(std::string_view name) noexcept;

/// The split a seed belongs to.
Split split_of_seed(std::uint64_t seed) noexcept;

/// Policy profile a variant is judged under: `strict` (pure custom kernels) for full, small and
/// scaffold; `hybrid` (the named library calls allowed, custom code for the rest) for epilogue.
std::string_view policy_profile(Variant v) noexcept;

/// Deterministic pseudo-random numbers: SplitMix64 (Steele, Lea, Flood 2014; the reference
/// constants of Vigna's splitmix64.c). Every draw is defined here (no std:: distributions, whose
/// results differ between standard libraries), so a seed gives the same task on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept : state_(seed) {}
  /// Next raw 64-bit value.
  std::uint64_t next() noexcept;
  /// Uniform integer in [lo, hi] (inclusive); lo <= hi required (else Error(internal)).
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  /// Uniform double in [0, 1).
  double uniform() noexcept;
  /// Integer in [lo, hi], log-uniformly distributed (lo >= 1).
  std::int64_t log_uniform_int(std::int64_t lo, std::int64_t hi);
  /// True with probability p.
  bool chance(double p) noexcept { return uniform() < p; }
  /// One element of a non-empty list.
  template <class T>
  const T& choice(const std::vector<T>& items) {
    return items.at(static_cast<std::size_t>(uniform_int(0, static_cast<std::int64_t>(items.size()) - 1)));
  }
  /// A dimension in [lo, hi] that is not a power of two where the range allows one (odd shapes).
  std::int64_t odd_dim(std::int64_t lo, std::int64_t hi);

 private:
  std::uint64_t state_;
};

/// Draws `rank` dimensions (each >= min_dim, none a power of two where avoidable) whose product
/// is about `target` elements and never above `max_total`. Splits the log of the target by random
/// weights, so shapes range from square-ish to very skewed.
std::vector<std::int64_t> draw_shape(Rng& rng, std::int64_t target, int rank, std::int64_t min_dim,
                                     std::int64_t max_total);

/// Element count range of a variant's largest tensor: full/scaffold/epilogue [1<<20, 32<<20],
/// small [min_small, 4096]. Families pass their own min_small (degenerate-task guard).
std::pair<std::int64_t, std::int64_t> element_range(std::string_view variant_name, std::int64_t min_small);

/// Shape and dtype of one tensor ("float32", "float16", "bfloat16", "int64").
struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string dtype = "float32";
  /// Number of elements (1 for a scalar).
  std::int64_t numel() const;
  /// Bytes of one element of `dtype` (Error(internal) for an unknown dtype).
  std::int64_t element_bytes() const;
};

/// Cost model of a task: the least data that must move between DRAM and the chip (every input,
/// parameter and output read or written once) and the arithmetic that must be done. The roofline
/// floor on a device is max(bytes / bandwidth, flops / peak).
struct Cost {
  double bytes = 0;  ///< bytes, compulsory DRAM traffic
  double flops = 0;  ///< floating-point operations (a fused multiply-add counts 2)
  /// Roofline floor in milliseconds for a device with `bandwidth_gbs` GB/s and `peak_tflops`.
  double floor_ms(double bandwidth_gbs, double peak_tflops) const;
};

/// What a family writes for one task: the parts of the reference module and of its honest
/// solution. The core renders them into KernelBench modules (render_reference / render_solution).
struct Design {
  std::string op;                ///< the operation chosen, e.g. "gelu", "matmul_tn"
  std::string summary;           ///< one line: what Model computes, with shapes
  /// Module-level size constants in order, e.g. {"batch_size", 1023}. Every shape in get_inputs /
  /// get_init_inputs is written in terms of these (so a harness may scale them).
  std::vector<std::pair<std::string, std::int64_t>> constants;
  std::string init_params;       ///< parameters of __init__ after self, e.g. "dim, eps"
  std::string init_body;         ///< body of Model.__init__ after super().__init__() (8-space indent)
  std::string forward_params;    ///< parameters of forward after self, e.g. "x, y"
  std::string forward_body;      ///< body of Model.forward (8-space indent)
  std::string inputs_body;       ///< body of get_inputs (4-space indent), ending in `return [...]`
  std::string init_inputs;       ///< the list get_init_inputs returns, e.g. "[1, 1e-5]"
  std::vector<TensorSpec> inputs;      ///< forward's tensor inputs, in order
  std::vector<TensorSpec> parameters;  ///< weights and buffers Model holds (for the cost model)
  TensorSpec output;                   ///< forward's result
  Cost cost;                     ///< filled by the family's flop count; bytes filled by the core
  /// Honest solution: bodies of ModelNew.__init__ (after super().__init__()) and forward, with
  /// the same __init__ parameters as Model; plain PyTorch written differently (CPU-runnable).
  std::string solution_init_body;
  std::string solution_forward_body;
  /// Scaffold variant: the starter ModelNew module (empty when the family has none).
  std::string scaffold;
  /// Epilogue variant: library calls the hybrid policy allows (e.g. "torch.nn.functional.linear").
  std::vector<std::string> library_calls;
};

/// What the core hands a family for one task.
struct DesignRequest {
  Rng& rng;             ///< seeded from (family, seed); the family's only source of randomness
  std::string op;       ///< the op the core drew for the split (one of Family::ops)
  Variant variant;
  std::string dtype;    ///< one of Family::dtypes
};

/// A registered operator family.
struct Family {
  std::string name;          ///< folder-safe name, e.g. "softmax"
  std::string description;   ///< one line
  int level = 1;             ///< KernelBench level it matches (1 single op, 2 fused)
  std::vector<std::string> ops;            ///< every op the family can make
  std::vector<std::string> transfer_ops;   ///< ops held out of `train` (served in transfer/heldout)
  std::vector<Variant> variants;           ///< supported variants (full and small always)
  std::vector<std::string> dtypes;         ///< supported dtypes, first is the default ("float32")
  std::function<Design(DesignRequest&)> design;  ///< writes one task; deterministic in its Rng
  /// Optional: whether an op exists in a variant (e.g. only some ops have a scaffold). The core
  /// draws only ops that pass; unset means every op exists in every supported variant.
  std::function<bool(std::string_view op, Variant variant)> has_variant;
};

/// The family registry. Families register once at start-up (KGYM_TASKGEN_FAMILY); lookups are
/// read-only afterwards and thread-safe.
class Registry {
 public:
  /// The process-wide registry with every built-in family registered.
  static const Registry& instance();
  /// Adds a family; Error(internal) on a duplicate name or a family without ops/design.
  void add(Family family);
  /// The family named `name`; Error(input) listing the known names when there is none.
  const Family& get(std::string_view name) const;
  /// All families, sorted by name.
  std::vector<const Family*> families() const;

 private:
  std::map<std::string, Family, std::less<>> families_;
};

/// Options of one generated task.
struct GenOptions {
  Variant variant = Variant::full;
  std::string dtype;  ///< empty: the family's default (float32); else one of Family::dtypes
};

/// A generated task and its metadata.
struct GeneratedTask {
  Task task;                   ///< id gen/<family>/<seed>[-<variant>][-<dtype>], KernelBench source
  std::string family, op, summary;
  std::uint64_t seed = 0;
  Split split = Split::train;
  Variant variant = Variant::full;
  std::string dtype;
  std::string policy_profile;  ///< "strict" or "hybrid"
  std::vector<std::pair<std::string, std::int64_t>> constants;
  std::vector<TensorSpec> inputs, parameters;
  TensorSpec output;
  Cost cost;
  std::string solution;        ///< honest ModelNew module (KernelBench candidate format)
  std::string scaffold;        ///< scaffold variant's starter module, else empty
  std::vector<std::string> library_calls;  ///< epilogue variant: library calls allowed
  /// Decontamination result when checked: the most similar benchmark problem and the Jaccard.
  std::optional<std::pair<std::string, double>> nearest_benchmark;
  bool dropped_from_train = false;  ///< train task above the Jaccard threshold
};

/// Metadata as JSON (everything except the sources unless `with_sources`).
nlohmann::json to_json(const GeneratedTask& t, bool with_sources = false);

/// Generates one task. Deterministic: the same (family, seed, options) always gives the same task.
/// Throws Error(input) for an unknown family, or a variant/dtype the family does not support
/// (naming the supported ones).
GeneratedTask generate(std::string_view family, std::uint64_t seed, const GenOptions& options = {});

/// The task an id names ("gen/softmax/42", "gen/conv2d/7-small", "gen/matmul/3-full-float16").
/// Throws Error(input) for an id that does not follow the grammar.
GeneratedTask generate_from_id(std::string_view id);

/// The id of (family, seed, options): gen/<family>/<seed>, then "-<variant>" unless full, then
/// "-<dtype>" unless it is the family's default.
std::string make_id(std::string_view family, std::uint64_t seed, const GenOptions& options,
                    std::string_view default_dtype);

/// Renders the reference module (class Model, size constants, get_inputs, get_init_inputs).
std::string render_reference(const Design& d, std::string_view header_doc);
/// Renders the honest solution module (class ModelNew with Model's __init__ signature). For a
/// float16/bfloat16 `dtype` the solution computes in float32 and rounds its result once.
std::string render_solution(const Design& d, std::string_view dtype, std::string_view header_doc);

/// Trivial answers for the degenerate-task audit, as ModelNew modules with the task's __init__
/// signature: "zeros", "constant" (ones), "input" (the first input's values reshaped/repeated to
/// the output shape) and "mean" (the first input's mean everywhere). Output shape and dtype are
/// the task's (at scale 1).
std::vector<std::pair<std::string, std::string>> trivial_candidates(const GeneratedTask& t);

// ---- decontamination ----------------------------------------------------------------------

/// Token set of Python source: identifiers, keywords, numbers and operators; comments and string
/// literals (docstrings included) are skipped, so only code is compared.
std::vector<std::string> code_tokens(std::string_view source);

/// |A n B| / |A u B| of two token sets (0 when both are empty).
double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b);

/// Token sets of every problem of a benchmark suite (KernelBench layout `DIR/level<N>/*.py` or
/// flat `DIR/*.py`), compared with generated references.
class Decontaminator {
 public:
  /// Loads the suite; Error(input) when the directory is missing or holds no .py problems.
  explicit Decontaminator(const std::filesystem::path& suite_dir, double threshold = 0.6);
  /// The most similar problem (its id as in kgym::load_suite, and the Jaccard).
  std::pair<std::string, double> nearest(std::string_view source) const;
  /// Fills t.nearest_benchmark; sets t.dropped_from_train for a train task above the threshold.
  void check(GeneratedTask& t) const;
  double threshold() const noexcept { return threshold_; }
  std::size_t size() const noexcept { return problems_.size(); }

 private:
  double threshold_;
  std::vector<std::pair<std::string, std::vector<std::string>>> problems_;
};

/// Result of decontaminating a set of tasks.
struct DecontaminationReport {
  std::size_t checked = 0, train = 0, dropped = 0;
  /// One entry per dropped task: id, nearest problem and similarity.
  std::vector<std::tuple<std::string, std::string, double>> reasons;
  nlohmann::json to_json() const;
};

/// Checks every task; returns how many train tasks were dropped and why.
DecontaminationReport decontaminate(std::vector<GeneratedTask>& tasks, const Decontaminator& d);

// ---- sets and the default suite -------------------------------------------------------------

/// Tasks for `count` consecutive seeds from `first_seed` for each named family (all when empty).
std::vector<GeneratedTask> generate_range(const std::vector<std::string>& families,
                                          std::uint64_t first_seed, std::uint64_t count,
                                          const GenOptions& options = {});

/// The built-in default suite: for each family, small-variant tasks (heldout seeds from 900000 up,
/// the first seeds that give distinct ops, up to 3 per family), each with its honest solution.
/// Runs in seconds per task on a CPU. Deterministic.
std::vector<GeneratedTask> default_suite();

/// The default suite paired with its honest solutions, ready for Engine::evaluate: candidate id
/// "<task id>#solution", task_id the task's id. This is what `kgym eval` runs without --suite.
std::vector<Evaluation> default_suite_evaluations();

/// Writes each task as a KernelBench module: layout "family" is DIR/<family>/<id-stem>.py (stem =
/// the id's last part, e.g. "42-small"), "flat" is DIR/<family>_<id-stem>.py (loadable with
/// kgym::load_suite). With `with_solutions`, the honest ModelNew goes next to it as
/// <name>.solution.py (family layout) or into DIR/solutions/<same name>.py (flat layout).
/// Returns the written reference paths. Error(input) when DIR cannot be created or written.
std::vector<std::filesystem::path> export_tasks(const std::vector<GeneratedTask>& tasks,
                                                const std::filesystem::path& dir,
                                                std::string_view layout, bool with_solutions);

// ---- degenerate-task audit (through the Evaluator interface) -------------------------------

/// One trivial answer (or the honest solution) judged on a task.
struct AuditCheck {
  std::string candidate;        ///< "zeros", "constant", "input", "mean" or "solution"
  Outcome outcome = Outcome::runtime_error;
  bool correct = false;         ///< passed every correctness case
  std::string message;          ///< the verdict's headline
};

/// The audit of one task: degenerate when a trivial answer is correct; `solution_ok` says whether
/// the honest solution was correct.
struct AuditResult {
  std::string task_id;
  bool degenerate = false;
  bool solution_ok = false;
  std::vector<AuditCheck> checks;
  nlohmann::json to_json() const;
};

/// Judges the trivial answers (trivial_candidates) and the honest solution of `t` with `engine`
/// (any Evaluator; `kgym tasks audit` passes the real engine) (correctness only: timing and the policy gate are forced off). Throws Error(worker) only when the
/// engine's trusted side fails; a candidate's failure is an outcome.
AuditResult audit_task(Evaluator& engine, const GeneratedTask& t, EvalOptions options = {});

/// Audits every task and removes the degenerate ones (rejected at generation); returns the audit
/// of every task, in order.
std::vector<AuditResult> reject_degenerate(Evaluator& engine, std::vector<GeneratedTask>& tasks,
                                           const EvalOptions& options = {});

}  // namespace kgym::taskgen

/// Registers a family from its plug-in file. Use once per file:
///   KGYM_TASKGEN_FAMILY(softmax) { Family f; ...; return f; }
/// The build collects src/taskgen/families/*.cpp and generates the call list (no family is named
/// in core code); the registration function is `kgym_taskgen_family_<name>`.
#define KGYM_TASKGEN_FAMILY(name) ::kgym::taskgen::Family kgym_taskgen_family_##name()
