// RAII for c-ares handles (CONVENTIONS §7), and the one mapping of ARES_* status codes onto
// dns::errc. The only header that includes <ares.h>.
#pragma once

#include <ares.h>

#include "core/c_ptr.hpp"
#include "dns/errors.hpp"

namespace posthorn::dns::detail {

using AresChannel = CPtr<ares_channeldata, ares_destroy>;
using AresTxt = CPtr<ares_txt_ext, ares_free_data>;
using AresMx = CPtr<ares_mx_reply, ares_free_data>;

// ARES_SUCCESS is not an error: it maps to the empty error_code.
error_code from_ares_status(int status) noexcept;

}  // namespace posthorn::dns::detail
