// The episode journal (journal.hpp): episodes and turns of `kgym serve --store` in SQLite.
#include "kgym/journal.hpp"

#include <sqlite3.h>

#include <chrono>

#include "kgym/error.hpp"
#include "kgym/options.hpp"
#include "kgym/reward.hpp"

namespace kgym {
namespace {

using nlohmann::json;

long long epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Stmt {
  sqlite3_stmt* s = nullptr;
  sqlite3* db;
  const std::filesystem::path& file;
  Stmt(sqlite3* d, const char* sql, const std::filesystem::path& f) : db(d), file(f) {
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK)
      throw Error(ErrorKind::input, "episode journal " + file.string() + ": " + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s); }
  Stmt& text(int i, const std::string& v) {
    sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& integer(int i, long long v) {
    sqlite3_bind_int64(s, i, v);
    return *this;
  }
  void run() {
    if (sqlite3_step(s) != SQLITE_DONE) throw Error(ErrorKind::input, "episode journal " + file.string() + ": " + sqlite3_errmsg(db));
  }
  std::string column(int i) const {
    const auto* p = sqlite3_column_text(s, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
};

template <class T>
void read(const json& j, const char* key, T& out) {
  if (j.contains(key) && !j[key].is_null()) j[key].get_to(out);
}

}  // namespace

json episode_options_json(const EpisodeOptions& o) {
  json j = {{"max_turns", o.max_turns}, {"reward", std::string(o.reward.name())}, {"gamma", o.gamma}, {"return_kind", o.return_kind},
            {"max_code_bytes", o.max_code_bytes}, {"feedback_chars", o.feedback_chars},
            {"history_tokens", o.history_tokens},
            {"prompt", {{"backend", o.prompt.backend}, {"policy_profile", std::string(policy::to_string(o.prompt.policy_profile))},
                        {"precision", o.prompt.precision}, {"style", o.prompt.style}, {"max_turns", o.prompt.max_turns}}}};
  if (o.roofline_floor_ms) j["roofline_floor_ms"] = *o.roofline_floor_ms;
  return j;
}

EpisodeOptions episode_options_from_json(const json& j) {
  EpisodeOptions o;
  read(j, "max_turns", o.max_turns);
  if (j.contains("reward") && j["reward"].is_string()) o.reward = parse_reward(j["reward"].get<std::string>(), "the journal's reward");
  read(j, "gamma", o.gamma);
  read(j, "return_kind", o.return_kind);
  read(j, "max_code_bytes", o.max_code_bytes);
  read(j, "feedback_chars", o.feedback_chars);
  read(j, "history_tokens", o.history_tokens);
  if (j.contains("roofline_floor_ms") && j["roofline_floor_ms"].is_number()) o.roofline_floor_ms = j["roofline_floor_ms"].get<double>();
  if (j.contains("prompt")) {
    const json& p = j["prompt"];
    read(p, "backend", o.prompt.backend);
    if (p.contains("policy_profile") && p["policy_profile"].is_string())
      o.prompt.policy_profile = parse_profile(p["policy_profile"].get<std::string>(), "the journal's policy_profile");
    read(p, "precision", o.prompt.precision);
    read(p, "style", o.prompt.style);
    read(p, "max_turns", o.prompt.max_turns);
  }
  return o;
}

EpisodeJournal::EpisodeJournal(const std::filesystem::path& file) : file_(file) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  results_ = std::make_unique<ResultStore>(file, "serve");  // creates the verdicts table; Error(input) if unusable
  if (sqlite3_open(file.c_str(), &db_) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(ErrorKind::input, "cannot open the episode journal " + file.string() + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);
  exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
       "CREATE TABLE IF NOT EXISTS episodes(id TEXT PRIMARY KEY, task_id TEXT NOT NULL, options TEXT NOT NULL,"
       " opened_ms INTEGER, active_ms INTEGER, closed_ms INTEGER, close_reason TEXT);"
       "CREATE TABLE IF NOT EXISTS episode_turns(episode_id TEXT NOT NULL, turn INTEGER NOT NULL, code TEXT,"
       " verdict TEXT, PRIMARY KEY(episode_id, turn));");
}

EpisodeJournal::~EpisodeJournal() { sqlite3_close(db_); }

void EpisodeJournal::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error(ErrorKind::input, "episode journal " + file_.string() + ": " + msg + " (not a kgym store, or read-only?)");
  }
}

void EpisodeJournal::open(const std::string& id, const std::string& task_id, const EpisodeOptions& options) {
  std::lock_guard lock(mutex_);
  const long long now = epoch_ms();
  Stmt(db_, "INSERT OR REPLACE INTO episodes(id, task_id, options, opened_ms, active_ms, closed_ms, close_reason)"
            " VALUES(?, ?, ?, ?, ?, NULL, NULL)", file_)
      .text(1, id).text(2, task_id).text(3, episode_options_json(options).dump()).integer(4, now).integer(5, now).run();
  Stmt(db_, "DELETE FROM episode_turns WHERE episode_id = ?", file_).text(1, id).run();
}

void EpisodeJournal::add_turn(const std::string& id, int turn, const std::string& code, const Verdict& verdict) {
  {
    std::lock_guard lock(mutex_);
    exec("BEGIN");
    try {
      Stmt(db_, "INSERT OR REPLACE INTO episode_turns(episode_id, turn, code, verdict) VALUES(?, ?, ?, ?)", file_)
          .text(1, id).integer(2, turn).text(3, code)
          .text(4, json(verdict).dump(-1, ' ', false, json::error_handler_t::replace)).run();
      Stmt(db_, "UPDATE episodes SET active_ms = ? WHERE id = ?", file_).integer(1, epoch_ms()).text(2, id).run();
      exec("COMMIT");
    } catch (...) {
      exec("ROLLBACK");
      throw;
    }
  }
  results_->add(verdict);
}

void EpisodeJournal::close(const std::string& id, const std::string& reason) {
  std::lock_guard lock(mutex_);
  Stmt(db_, "UPDATE episodes SET closed_ms = ?, close_reason = ? WHERE id = ? AND closed_ms IS NULL", file_)
      .integer(1, epoch_ms()).text(2, reason).text(3, id).run();
}

std::vector<JournalEpisode> EpisodeJournal::open_episodes() const {
  std::lock_guard lock(mutex_);
  std::vector<JournalEpisode> out;
  {
    Stmt st(db_, "SELECT id, task_id, options FROM episodes WHERE closed_ms IS NULL ORDER BY opened_ms, id", file_);
    while (sqlite3_step(st.s) == SQLITE_ROW) {
      JournalEpisode e;
      e.id = st.column(0);
      e.task_id = st.column(1);
      e.options = episode_options_from_json(json::parse(st.column(2), nullptr, false));
      out.push_back(std::move(e));
    }
  }
  for (auto& e : out) {
    Stmt st(db_, "SELECT code, verdict FROM episode_turns WHERE episode_id = ? ORDER BY turn", file_);
    st.text(1, e.id);
    while (sqlite3_step(st.s) == SQLITE_ROW) {
      e.turns.push_back({st.column(0), json::parse(st.column(1)).get<Verdict>()});
    }
  }
  return out;
}

std::optional<std::string> EpisodeJournal::close_reason(const std::string& id) const {
  std::lock_guard lock(mutex_);
  Stmt st(db_, "SELECT close_reason FROM episodes WHERE id = ? AND closed_ms IS NOT NULL", file_);
  st.text(1, id);
  if (sqlite3_step(st.s) == SQLITE_ROW) return st.column(0);
  return std::nullopt;
}

}  // namespace kgym
