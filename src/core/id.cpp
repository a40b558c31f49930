#include "core/id.hpp"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "core/panic.hpp"
#include "core/text.hpp"

namespace posthorn {
namespace {
constexpr std::string_view kAlphabet = "0123456789abcdefghjkmnpqrstvwxyz";  // Crockford
constexpr std::size_t kIdChars = 26;

using Raw = std::array<unsigned char, 16>;  // 48 bits of milliseconds, 80 random

void put_time(Raw& raw, std::uint64_t ms) {
    for (int i = 0; i < 6; ++i) raw[i] = static_cast<unsigned char>(ms >> (8 * (5 - i)));
}

std::string encode(std::string_view prefix, const Raw& raw) {
    std::string out(prefix);
    out.reserve(prefix.size() + kIdChars);
    // 26 chars * 5 bits = 130 bits: two leading zero bits, then the 128.
    append_base32(out, raw.data(), raw.size(), 2);
    return out;
}

}  // namespace

namespace {

void from_kernel(unsigned char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            PH_PANIC("getrandom failed");
        }
        p += got;
        n -= static_cast<std::size_t>(got);
    }
}

}  // namespace

// Small draws (ids, tokens, nonces: one or more per request) come from a buffer per thread
// filled 256 bytes at a time, not from a system call each; a byte handed out is wiped from
// the buffer. Large ones (keys) go to the kernel directly.
void random_bytes(void* out, std::size_t n) {
    constexpr std::size_t kBuffer = 256, kSmall = 64;
    auto* p = static_cast<unsigned char*>(out);
    if (n > kSmall) return from_kernel(p, n);
    thread_local std::array<unsigned char, kBuffer> buffer{};
    thread_local std::size_t used = kBuffer;
    if (kBuffer - used < n) {
        from_kernel(buffer.data(), kBuffer);
        used = 0;
    }
    std::memcpy(p, buffer.data() + used, n);
    std::memset(buffer.data() + used, 0, n);
    used += n;
}

std::string new_id(std::string_view prefix, UnixMs now) {
    // 128 bits: 48 of time, 80 of randomness, written 5 bits at a time from the top.
    // Monotonic within the process (as ULID specifies): in the same millisecond, or if the
    // clock steps back, the random part of the last id is incremented instead of drawn anew,
    // so that ids made one after another also sort one after another.
    Raw raw{};
    {
        static std::mutex mutex;
        static std::uint64_t last_ms = 0;
        static std::array<unsigned char, 10> last_random{};
        std::lock_guard lock(mutex);
        const auto t = static_cast<std::uint64_t>(now);
        if (t > last_ms) {
            last_ms = t;
            random_bytes(last_random.data(), last_random.size());
        } else {
            for (auto it = last_random.rbegin(); it != last_random.rend(); ++it)
                if (++*it != 0) break;
        }
        put_time(raw, last_ms);
        std::copy(last_random.begin(), last_random.end(), raw.begin() + 6);
    }
    return encode(prefix, raw);
}

std::string first_id_at(std::string_view prefix, UnixMs t) {
    // An id holds 48 bits of time: before 1970 is the first id, after 10889 the last time.
    constexpr UnixMs kLast = (UnixMs{1} << 48) - 1;
    Raw raw{};
    put_time(raw, static_cast<std::uint64_t>(std::clamp<UnixMs>(t, 0, kLast)));
    return encode(prefix, raw);
}

UnixMs id_time(std::string_view id, std::string_view prefix) noexcept {
    // 10 characters: the 2 leading zero bits and the 48 of time.
    std::uint64_t ms = 0;
    for (char c : id.substr(prefix.size(), 10))
        ms = (ms << 5) | static_cast<std::uint64_t>(kAlphabet.find(c));
    return static_cast<UnixMs>(ms);
}

void append_base32(std::string& out, const unsigned char* bytes, std::size_t n,
                   unsigned leading_zero_bits) {
    // Written in place, not a push_back a character (ids are made several times a request).
    const std::size_t at = out.size();
    out.resize(at + (leading_zero_bits + 8 * n) / 5);
    char* p = out.data() + at;
    unsigned acc = 0;
    unsigned bits = leading_zero_bits;
    for (std::size_t i = 0; i < n; ++i) {
        acc = (acc << 8) | bytes[i];
        bits += 8;
        while (bits >= 5) {
            *p++ = kAlphabet[(acc >> (bits - 5)) & 31u];
            bits -= 5;
        }
        acc &= (1u << bits) - 1u;
    }
}

bool is_base32(std::string_view s) noexcept {
    static constexpr core::ByteSet kBase32(kAlphabet);
    for (char c : s)
        if (!kBase32.has(c)) return false;
    return true;
}

bool is_id(std::string_view id, std::string_view prefix) noexcept {
    return id.size() == prefix.size() + kIdChars && id.substr(0, prefix.size()) == prefix &&
           is_base32(id.substr(prefix.size()));
}

}  // namespace posthorn
