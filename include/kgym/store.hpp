#pragma once
// The SQLite result store: one file per run (RUN/results.sqlite) or a shared database holding
// many runs (the `run` column). Uses the SQLite C library (Debian libsqlite3-dev), linked
// statically so build/kgym runs where no libsqlite3.so is installed.
//
// Schema (created when missing):
//   manifest(run TEXT, key TEXT, value TEXT /* JSON */, PRIMARY KEY(run, key))
//   verdicts(run TEXT, task_id TEXT, candidate_id TEXT, sample INT, turn INT, outcome TEXT,
//            correct INT, speedup_eager REAL, speedup_compile REAL, runtime_ms REAL,
//            ref_runtime_ms REAL, compile_runtime_ms REAL, reward REAL, verdict TEXT /* JSON */,
//            PRIMARY KEY(run, task_id, candidate_id))

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/verdict.hpp"

struct sqlite3;

namespace kgym {

class ResultStore {
 public:
  /// Opens (creating) the database file for run name `run`. Error(input) naming the file when
  /// SQLite cannot open it or it is not a kgym store.
  ResultStore(const std::filesystem::path& file, std::string run);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  /// Writes each top-level key of `manifest` as one row (replacing the run's old value).
  void write_manifest(const nlohmann::json& manifest);
  /// The run's manifest (an object; empty when none was written).
  nlohmann::json manifest() const;
  /// Inserts or replaces the verdict of (run, task, candidate). Thread-safe.
  void add(const Verdict& verdict);
  /// The run's verdicts in insertion order.
  std::vector<Verdict> verdicts() const;
  /// Names of all runs in the database.
  std::vector<std::string> runs() const;

 private:
  void exec(const std::string& sql) const;
  sqlite3* db_ = nullptr;
  std::string run_;
  std::filesystem::path file_;
  mutable std::mutex mutex_;
};

}  // namespace kgym
