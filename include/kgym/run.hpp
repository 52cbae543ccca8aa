#pragma once
// Run directories: everything one evaluation study produced, re-judgeable and re-reportable
// offline on another machine.
//
// Layout of RUN/ (every file optional except what the step that made it writes):
//   manifest.json       tool, tasks, sampling budget, phase durations, provenance (merged by each step)
//   generations.jsonl   one raw model completion per (task, sample, turn)          [kgym generate]
//   candidates.jsonl    one kgym candidate row per (task, sample, turn)            [kgym generate]
//   verdicts.jsonl      one verdict per candidate                                   [kgym eval]
//   results.sqlite      the manifest and the verdicts in SQLite (store.hpp)          [kgym eval]

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/verdict.hpp"

namespace kgym::run {

inline constexpr const char* kManifest = "manifest.json";
inline constexpr const char* kCandidates = "candidates.jsonl";
inline constexpr const char* kGenerations = "generations.jsonl";
inline constexpr const char* kVerdicts = "verdicts.jsonl";
inline constexpr const char* kResults = "results.sqlite";

/// True when `path` is a directory holding a manifest.json or candidates.jsonl.
bool is_run_dir(const std::filesystem::path& path);

/// The manifest of a run (an empty object when it has none). Error(input) when it is not JSON.
nlohmann::json read_manifest(const std::filesystem::path& run_dir);

/// Merges `patch` into the run's manifest (JSON merge patch, RFC 7386) and writes it atomically
/// (temporary file + rename). Creates the directory. Error(input) when it cannot be written.
void update_manifest(const std::filesystem::path& run_dir, const nlohmann::json& patch);

/// Verdicts of a run: RUN/verdicts.jsonl (or RUN/results.sqlite when there is no JSONL), a
/// verdicts .jsonl file, or a .sqlite store. Lines that do not parse (a torn last line) are
/// skipped with a warning on stderr; a later line for the same (task, candidate) replaces an
/// earlier one (a resumed run). Error(input) when nothing readable is there.
std::vector<Verdict> load_verdicts(const std::filesystem::path& path);

/// Where a candidate sits in a study: its sample index and its turn (0-based).
struct Attempt {
  int sample = 0;
  int turn = 0;
  bool explicit_id = false;  ///< parsed from the id (else the caller numbers samples in order)
};

/// The candidate id kgym generate gives: "<task id>@s<sample>t<turn>".
std::string make_candidate_id(const std::string& task_id, int sample, int turn);

/// Parses "...@s<sample>t<turn>" ids; other ids give {0, 0, explicit_id=false}.
Attempt parse_candidate_id(const std::string& candidate_id);

/// Current UTC time as ISO 8601 ("2026-11-29T19:30:00Z").
std::string utc_now();

}  // namespace kgym::run
