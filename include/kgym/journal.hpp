#pragma once
// The episode journal of `kgym serve --store FILE`: episodes and their turns written to SQLite as
// they happen, so that a restarted server resumes the open ones with their history
// (docs/deploy.md). Each turn's verdict also goes to the result store's `verdicts` table (run
// "serve", candidate id "<episode>/turn<N>"), so `kgym report`-style queries see them.
//
// Tables (created when missing, next to store.hpp's):
//   episodes(id TEXT PRIMARY KEY, task_id TEXT, options TEXT /* JSON */, opened_ms INT,
//            active_ms INT, closed_ms INT /* NULL while open */, close_reason TEXT)
//   episode_turns(episode_id TEXT, turn INT, code TEXT, verdict TEXT /* JSON */,
//                 PRIMARY KEY(episode_id, turn))

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kgym/episode.hpp"
#include "kgym/store.hpp"

struct sqlite3;

namespace kgym {

/// An open episode as the journal holds it: enough to rebuild it (Episode + its turns replayed).
struct JournalEpisode {
  std::string id, task_id;
  EpisodeOptions options;
  struct TurnRecord {
    std::string code;
    Verdict verdict;
  };
  std::vector<TurnRecord> turns;  ///< in turn order
};

/// Thread-safe. Every write is its own transaction (durable when the call returns, with
/// synchronous=NORMAL in WAL mode: survives the process being killed).
class EpisodeJournal {
 public:
  /// Opens (creating) the file. Error(input) naming it when SQLite cannot open it.
  explicit EpisodeJournal(const std::filesystem::path& file);
  ~EpisodeJournal();
  EpisodeJournal(const EpisodeJournal&) = delete;
  EpisodeJournal& operator=(const EpisodeJournal&) = delete;

  void open(const std::string& id, const std::string& task_id, const EpisodeOptions& options);
  void add_turn(const std::string& id, int turn, const std::string& code, const Verdict& verdict);
  /// Marks the episode closed with `reason` (e.g. "finalized", "idle for 600 s"); idempotent.
  void close(const std::string& id, const std::string& reason);
  /// Episodes not closed, oldest first, with their turns.
  std::vector<JournalEpisode> open_episodes() const;
  /// Why a closed episode was closed; nullopt for an unknown or open one.
  std::optional<std::string> close_reason(const std::string& id) const;

 private:
  void exec(const std::string& sql) const;
  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<ResultStore> results_;
  mutable std::mutex mutex_;
};

/// EpisodeOptions as JSON and back (every field; missing keys keep the defaults).
nlohmann::json episode_options_json(const EpisodeOptions& options);
EpisodeOptions episode_options_from_json(const nlohmann::json& j);

}  // namespace kgym
