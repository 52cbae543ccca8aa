#include "kgym/paths.hpp"

#include <system_error>

namespace kgym {

std::filesystem::path install_root() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
      if (fs::exists(dir / "python" / "kgym_worker" / "zygote.py", ec)) return dir;
  }
  return fs::path(KGYM_SOURCE_DIR);
}

}  // namespace kgym
