#include "kgym/store.hpp"

#include <sqlite3.h>

#include "kgym/error.hpp"
#include "kgym/run.hpp"

namespace kgym {

namespace {

/// A prepared statement, finalized on scope exit.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  Stmt(sqlite3* db, const char* sql, const std::filesystem::path& file) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
      throw Error(ErrorKind::input, "SQLite store " + file.string() + ": " + sqlite3_errmsg(db) +
                                        " (is it a kgym results database?)");
  }
  ~Stmt() { sqlite3_finalize(s); }
  void text(int i, const std::string& v) { sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void real(int i, const std::optional<double>& v) {
    if (v) sqlite3_bind_double(s, i, *v);
    else sqlite3_bind_null(s, i);
  }
};

}  // namespace

ResultStore::ResultStore(const std::filesystem::path& file, std::string run) : run_(std::move(run)), file_(file) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  if (sqlite3_open(file.c_str(), &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(ErrorKind::input, "cannot open SQLite store " + file.string() + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    exec("PRAGMA synchronous=NORMAL;");
    exec("CREATE TABLE IF NOT EXISTS manifest(run TEXT NOT NULL, key TEXT NOT NULL, value TEXT,"
         " PRIMARY KEY(run, key));"
         "CREATE TABLE IF NOT EXISTS verdicts(run TEXT NOT NULL, task_id TEXT NOT NULL,"
         " candidate_id TEXT NOT NULL, sample INTEGER, turn INTEGER, outcome TEXT, correct INTEGER,"
         " speedup_eager REAL, speedup_compile REAL, runtime_ms REAL, ref_runtime_ms REAL,"
         " compile_runtime_ms REAL, reward REAL, verdict TEXT,"
         " PRIMARY KEY(run, task_id, candidate_id));");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

ResultStore::~ResultStore() { sqlite3_close(db_); }

void ResultStore::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error(ErrorKind::input, "SQLite store " + file_.string() + ": " + msg +
                                      " (not a kgym results database, or read-only?)");
  }
}

void ResultStore::write_manifest(const nlohmann::json& manifest) {
  std::lock_guard lock(mutex_);
  Stmt st(db_, "INSERT OR REPLACE INTO manifest(run, key, value) VALUES(?, ?, ?)", file_);
  exec("BEGIN");
  for (auto it = manifest.begin(); it != manifest.end(); ++it) {
    sqlite3_reset(st.s);
    st.text(1, run_);
    st.text(2, it.key());
    st.text(3, it.value().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (sqlite3_step(st.s) != SQLITE_DONE) {
      exec("ROLLBACK");
      throw Error(ErrorKind::input, "SQLite store " + file_.string() + ": " + sqlite3_errmsg(db_));
    }
  }
  exec("COMMIT");
}

nlohmann::json ResultStore::manifest() const {
  std::lock_guard lock(mutex_);
  Stmt st(db_, "SELECT key, value FROM manifest WHERE run = ?", file_);
  st.text(1, run_);
  nlohmann::json out = nlohmann::json::object();
  while (sqlite3_step(st.s) == SQLITE_ROW) {
    std::string key = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0));
    const auto* value = sqlite3_column_text(st.s, 1);
    out[key] = value ? nlohmann::json::parse(reinterpret_cast<const char*>(value), nullptr, false) : nullptr;
  }
  return out;
}

void ResultStore::add(const Verdict& v) {
  std::lock_guard lock(mutex_);
  Stmt st(db_,
          "INSERT OR REPLACE INTO verdicts(run, task_id, candidate_id, sample, turn, outcome, correct,"
          " speedup_eager, speedup_compile, runtime_ms, ref_runtime_ms, compile_runtime_ms, reward, verdict)"
          " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
          file_);
  const run::Attempt at = run::parse_candidate_id(v.candidate_id);
  st.text(1, run_);
  st.text(2, v.task_id);
  st.text(3, v.candidate_id);
  sqlite3_bind_int(st.s, 4, at.sample);
  sqlite3_bind_int(st.s, 5, at.turn);
  st.text(6, std::string(to_string(v.outcome)));
  sqlite3_bind_int(st.s, 7, v.correct ? 1 : 0);
  st.real(8, v.speedup_eager);
  st.real(9, v.speedup_compile);
  st.real(10, v.runtime_ms);
  st.real(11, v.ref_runtime_ms);
  st.real(12, v.compile_runtime_ms);
  sqlite3_bind_double(st.s, 13, v.reward);
  st.text(14, nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (sqlite3_step(st.s) != SQLITE_DONE)
    throw Error(ErrorKind::input, "SQLite store " + file_.string() + ": cannot write a verdict: " + sqlite3_errmsg(db_));
}

std::vector<Verdict> ResultStore::verdicts() const {
  std::lock_guard lock(mutex_);
  Stmt st(db_, "SELECT verdict FROM verdicts WHERE run = ? ORDER BY rowid", file_);
  st.text(1, run_);
  std::vector<Verdict> out;
  while (sqlite3_step(st.s) == SQLITE_ROW) {
    const auto* text = sqlite3_column_text(st.s, 0);
    if (!text) continue;
    out.push_back(nlohmann::json::parse(reinterpret_cast<const char*>(text)).get<Verdict>());
  }
  return out;
}

std::vector<std::string> ResultStore::runs() const {
  std::lock_guard lock(mutex_);
  Stmt st(db_, "SELECT DISTINCT run FROM verdicts UNION SELECT DISTINCT run FROM manifest", file_);
  std::vector<std::string> out;
  while (sqlite3_step(st.s) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0)));
  return out;
}

}  // namespace kgym
