// libFuzzer target for the signed tracking tokens (src/api/tracking.cpp), which anyone can
// put in a GET /t/o/<token> or /t/c/<token>: a token reads back as what was signed, and a
// token altered in one byte never reads as anything else (it is refused, or it is the same
// token written another way), so that no click redirects where we did not sign it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/tracking.hpp"

namespace {
constexpr std::string_view kSecret = "fuzz-tracking-secret-of-32-bytes";

bool same(const posthorn::api::TrackingToken& a, const posthorn::api::TrackingToken& b) {
    return a.kind == b.kind && a.email_id == b.email_id && a.url == b.url;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace posthorn::api;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    (void)read_tracking_token(kSecret, in);  // whatever comes in a URL
    if (size < 3) return 0;
    // The input as a token to sign: a kind, an email id (ours never hold a line feed) and,
    // for a click, a URL; then where to alter the token and how.
    TrackingToken t;
    t.kind = (data[0] & 1) ? 'c' : 'o';
    const std::size_t at = data[1];
    const auto flip = static_cast<char>(data[2] | 1);
    auto rest = in.substr(3);
    const auto cut = rest.find('\n');
    t.email_id = std::string(rest.substr(0, cut));
    if (t.kind == 'c' && cut != std::string_view::npos) t.url = std::string(rest.substr(cut + 1));
    const auto token = make_tracking_token(kSecret, t);
    auto back = read_tracking_token(kSecret, token);
    if (!back || !same(*back, t)) __builtin_trap();
    auto altered = token;
    altered[at % altered.size()] ^= flip;
    auto other = read_tracking_token(kSecret, altered);
    if (other && !same(*other, t)) __builtin_trap();
    if (read_tracking_token("another secret", token)) __builtin_trap();
    return 0;
}
