// crypto/errors.hpp — what a crypto operation can fail with.
#pragma once

#include <type_traits>

#include "core/result.hpp"

namespace posthorn::crypto {

enum class errc {
    bad_encoding = 1,  // base64 or PEM that does not parse
    auth_failed,       // a sealed value that was altered, or opened with another key/context
    key_file,          // the master key file cannot be read, written, or has the wrong size
    openssl,           // OpenSSL refused (key generation and the like)
};

const boost::system::error_category& error_category() noexcept;
inline error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace posthorn::crypto

template <>
struct boost::system::is_error_code_enum<posthorn::crypto::errc> : std::true_type {};
