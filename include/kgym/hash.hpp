#pragma once
// Content hashes (SHA-256 via OpenSSL), for build-cache keys and provenance.

#include <string>
#include <string_view>

namespace kgym {

/// Lower-case hex SHA-256 of `data` (64 characters).
std::string sha256_hex(std::string_view data);

}  // namespace kgym
