#pragma once
// Tasks: KernelBench-format reference problems (a Python module defining `Model`,
// `get_inputs()` and `get_init_inputs()`), loaded from a suite directory.

#include <filesystem>
#include <string>
#include <vector>

namespace kgym {

/// One reference problem.
struct Task {
  std::string id;      ///< e.g. "L1/19_ReLU" (KernelBench level 1, file 19_ReLU.py) or "gen/relu/42"
  std::string source;  ///< the reference module's Python source (KernelBench format)
  std::string origin;  ///< where it came from: a file path, or "<jsonl path>:<line>"
  int level = 0;       ///< KernelBench level (1..3), 0 when not from a leveled suite
};

/// The file stem a task id names: the part after its last '/' ("L1/19_ReLU" -> "19_ReLU", a
/// flat suite's "19_ReLU" -> itself). Candidate files are named by it.
std::string task_stem(const std::string& id);

/// A set of tasks loaded from one directory.
struct Suite {
  std::filesystem::path root;
  std::vector<Task> tasks;  ///< sorted by level, then by the number that starts the file name

  /// The task with this id, or nullptr.
  const Task* find(std::string_view id) const noexcept;
};

/// Loads a suite. Layouts: `DIR/level<N>/<stem>.py` (KernelBench; ids "L<N>/<stem>") or a flat
/// `DIR/<stem>.py` (ids "<stem>"). Files that do not define `Model`, `get_inputs` and
/// `get_init_inputs` are skipped. Throws Error(input) if DIR is missing, unreadable or empty.
Suite load_suite(const std::filesystem::path& dir);

/// Selects tasks by patterns: an exact id ("L1/19_ReLU"), a glob over ids ("L1/1*_*", "*ReLU*"),
/// a level ("L1", "level1"), a bare KernelBench number within a level ("L1/19"), or a problem's
/// file name without its level ("19_ReLU": every level's task of that name).
/// An empty pattern list selects all. Throws Error(input) naming a pattern that matches nothing.
std::vector<Task> select_tasks(const Suite& suite, const std::vector<std::string>& patterns);

/// True when `id` matches one pattern in the sense of select_tasks.
bool task_matches(const Task& task, std::string_view pattern);

/// The one task of `tasks` that `id` names: its exact id ("L1/19_ReLU"), else the one task a
/// short form of select_tasks names ("L1/19", "19_ReLU"; no globs). nullptr when none or several
/// do; `matched`, when given, receives how many did (0 for an exact id). Used where one task is
/// meant: a .jsonl row's task_id, the server's /reset task_id.
const Task* resolve_task(const std::vector<Task>& tasks, std::string_view id, int* matched = nullptr);

/// Whether a task's source holds a size constant of 65536 or more (KernelBench's full-size
/// level-1 inputs: several GB each, minutes per verdict on a CPU): a module-level assignment
/// whose value (an integer, or a product of integers) reaches it; names holding "seed" are not
/// sizes. eval and serve note such tasks on the CPU when --scale is 1.
bool has_full_size_inputs(const Task& task);

/// Reads a whole file; throws Error(input) naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace kgym
