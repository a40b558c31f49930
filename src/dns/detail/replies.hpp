// Turns what c-ares hands a query callback (a status and the raw answer) into our answers.
// Separate from the channel so that each parser can be tested on hand-built messages.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/address.hpp>

#include "core/result.hpp"
#include "dns/resolver.hpp"

namespace posthorn::dns::detail {

using Answer = std::span<const std::uint8_t>;

Result<std::vector<std::string>> txt_reply(int status, Answer answer);
Result<std::vector<MxRecord>> mx_reply(int status, Answer answer);
Result<std::vector<std::string>> cname_reply(int status, Answer answer, std::string_view qname);
Result<std::vector<boost::asio::ip::address>> a_reply(int status, Answer answer);
Result<std::vector<boost::asio::ip::address>> aaaa_reply(int status, Answer answer);

// The answer of Resolver::addresses from its two queries (see there for the rules).
Result<std::vector<boost::asio::ip::address>> merge_addresses(
    Result<std::vector<boost::asio::ip::address>> v4,
    Result<std::vector<boost::asio::ip::address>> v6);

// Stable sort by preference (RFC 5321 §5.1: lower first; ties are the caller's to shuffle).
void sort_mx(std::vector<MxRecord>& records);

}  // namespace posthorn::dns::detail
