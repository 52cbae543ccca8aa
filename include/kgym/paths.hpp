#pragma once
// Where kgym's own files are: the Python worker package and the built-in examples.

#include <filesystem>

namespace kgym {

/// The kgym checkout the running binary belongs to: the parent of the folder holding the
/// executable when it contains python/kgym_worker (build/kgym -> .), else the source directory
/// the binary was configured from. Lets a binary built here run in a copied checkout elsewhere.
std::filesystem::path install_root();

}  // namespace kgym
