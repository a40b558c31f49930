// core/result.hpp — the error vocabulary shared by every module.
//
// Peer input, I/O and the database never throw: they return Result<T>, a value or a
// boost::system::error_code. Each module owns an errc enum with its own category (see
// store/errors.hpp for an example). Exceptions are for start-up and config only.
#pragma once

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

namespace posthorn {

using error_code = boost::system::error_code;
template <class T>
using Result = boost::system::result<T, error_code>;

}  // namespace posthorn
