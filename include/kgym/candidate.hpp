#pragma once
// Candidates: code that claims to compute a task's function faster (a `ModelNew` module).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/task.hpp"

namespace kgym {

/// One submitted solution for one task.
struct Candidate {
  std::string id;       ///< unique within a run, e.g. "19_ReLU" or "h100_level1.jsonl:9"
  std::string task_id;  ///< the task it targets, e.g. "L1/19_ReLU"
  std::string code;     ///< the candidate's source (for kernelbench_module: Python defining `ModelNew`); empty means no candidate
  /// The candidate's format (format.hpp): how gate 1 reads `code` and how the worker loads it.
  std::string format = "kernelbench_module";
  /// A reference carried with the candidate (CUDA-L1's `ref_code`): when set, this is the
  /// task's reference for this candidate instead of the suite's file.
  std::optional<std::string> ref_code;
  nlohmann::json extra = nlohmann::json::object();  ///< other fields of the row (claimed speedups)

  /// True when there is nothing to judge: empty/whitespace code or the literal "None".
  bool empty() const;
};

/// `code` without a leading UTF-8 byte-order mark: Python reads such a file as it is, but the
/// source compiled from a string is refused ("invalid non-printable character U+FEFF"), so an
/// honest candidate saved by an editor that writes one was build_failed (red team rt26).
std::string without_bom(std::string code);

/// A candidate paired with the task it is judged against.
struct Evaluation {
  Task task;
  Candidate candidate;
};

/// Loads candidates and pairs them with tasks.
///  - DIR: `<stem>.py`, `level<N>/<stem>.py` or `<stem>/<any name>.py` files (the last form holds
///    several candidates for one task); each is matched to the suite task with that stem. Files with no matching task are an Error(input) naming them.
///  - FILE.jsonl: one object per line, either kgym's `{"task_id", "code", "candidate_id"?, "format"?}`
///    ("format": a registered candidate format, format.hpp; default kernelbench_module) or
///    CUDA-L1's `{"level_id", "task_id": <number>, "custom_code", "ref_code"}`; a CUDA-L1 row's
///    task id is the suite's "L<level>/<number>_..." when a suite is given, else "L<level>/<number>".
///  - FILE.py: that one candidate, for the task named by its stem (DIR/19_ReLU.py) or else by its
///    folder (DIR/19_ReLU/honest.py), else the one task `task_patterns` select (mine.py with
///    --tasks L1/19); its id is what a folder of candidates would give it.
///    A task that `task_patterns` leaves out is an Error(usage).
/// `suite` may be null only for JSONL rows that carry their own reference (`ref_code`).
/// Only evaluations whose task matches `task_patterns` (see select_tasks) are returned.
/// Throws Error(input) for an unreadable path, a malformed line (naming file and line number),
/// or a row whose task is unknown.
std::vector<Evaluation> load_evaluations(const std::filesystem::path& candidates, const Suite* suite,
                                         const std::vector<std::string>& task_patterns);

}  // namespace kgym
