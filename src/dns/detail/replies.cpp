#include "dns/detail/replies.hpp"

#include <algorithm>
#include <cstring>

#include "dns/detail/ares.hpp"
#include "dns/detail/names.hpp"
#include "dns/detail/wire.hpp"

namespace posthorn::dns::detail {
namespace {

using Addresses = std::vector<boost::asio::ip::address>;

// c-ares takes lengths as int; a DNS message never exceeds 65535 octets.
bool too_long(Answer answer) { return answer.size() > 65535; }

}  // namespace

Result<std::vector<std::string>> txt_reply(int status, Answer answer) {
    if (status != ARES_SUCCESS) return from_ares_status(status);
    if (too_long(answer)) return make_error_code(errc::bad_response);
    ares_txt_ext* raw = nullptr;
    status = ares_parse_txt_reply_ext(answer.data(), static_cast<int>(answer.size()), &raw);
    AresTxt list{raw};
    if (status != ARES_SUCCESS) return from_ares_status(status);
    // One RR may hold several character-strings (each at most 255 octets); c-ares lists
    // them all, flagging the first of each RR. RFC 7208 §3.3: join them without spaces.
    std::vector<std::string> records;
    for (const ares_txt_ext* t = list.get(); t != nullptr; t = t->next) {
        if (t->record_start || records.empty()) records.emplace_back();
        records.back().append(reinterpret_cast<const char*>(t->txt), t->length);
    }
    if (records.empty()) return make_error_code(errc::no_data);
    return records;
}

Result<std::vector<MxRecord>> mx_reply(int status, Answer answer) {
    if (status != ARES_SUCCESS) return from_ares_status(status);
    if (too_long(answer)) return make_error_code(errc::bad_response);
    ares_mx_reply* raw = nullptr;
    status = ares_parse_mx_reply(answer.data(), static_cast<int>(answer.size()), &raw);
    AresMx list{raw};
    if (status != ARES_SUCCESS) return from_ares_status(status);
    std::vector<MxRecord> records;
    for (const ares_mx_reply* m = list.get(); m != nullptr; m = m->next) {
        // c-ares writes the root (RFC 7505 null MX ".") as "", and other names without the
        // trailing dot; canonical_name covers both, and folds case.
        records.push_back(MxRecord{m->priority, canonical_name(m->host ? m->host : "")});
    }
    if (records.empty()) return make_error_code(errc::no_data);
    sort_mx(records);
    return records;
}

Result<std::vector<std::string>> cname_reply(int status, Answer answer, std::string_view qname) {
    if (status != ARES_SUCCESS) return from_ares_status(status);
    return parse_cname_answer(answer, qname);
}

Result<Addresses> a_reply(int status, Answer answer) {
    if (status != ARES_SUCCESS) return from_ares_status(status);
    if (too_long(answer)) return make_error_code(errc::bad_response);
    // An A RR takes at least 16 octets (a 2-octet compressed owner, 10 of fixed fields and
    // 4 of address), so this many slots can hold every address the message can carry.
    std::vector<ares_addrttl> slots(answer.size() / 16 + 1);
    int count = static_cast<int>(slots.size());
    status = ares_parse_a_reply(answer.data(), static_cast<int>(answer.size()), nullptr,
                                slots.data(), &count);
    if (status != ARES_SUCCESS) return from_ares_status(status);
    Addresses out;
    for (int i = 0; i < count; ++i) {
        boost::asio::ip::address_v4::bytes_type bytes;
        std::memcpy(bytes.data(), &slots[static_cast<std::size_t>(i)].ipaddr, bytes.size());
        out.emplace_back(boost::asio::ip::address_v4{bytes});
    }
    // A CNAME without an address at its end parses as success with nothing in it.
    if (out.empty()) return make_error_code(errc::no_data);
    return out;
}

Result<Addresses> aaaa_reply(int status, Answer answer) {
    if (status != ARES_SUCCESS) return from_ares_status(status);
    if (too_long(answer)) return make_error_code(errc::bad_response);
    std::vector<ares_addr6ttl> slots(answer.size() / 28 + 1);  // 2 + 10 + 16 octets per RR
    int count = static_cast<int>(slots.size());
    status = ares_parse_aaaa_reply(answer.data(), static_cast<int>(answer.size()), nullptr,
                                   slots.data(), &count);
    if (status != ARES_SUCCESS) return from_ares_status(status);
    Addresses out;
    for (int i = 0; i < count; ++i) {
        boost::asio::ip::address_v6::bytes_type bytes;
        std::memcpy(bytes.data(), &slots[static_cast<std::size_t>(i)].ip6addr, bytes.size());
        out.emplace_back(boost::asio::ip::address_v6{bytes});
    }
    if (out.empty()) return make_error_code(errc::no_data);
    return out;
}

Result<Addresses> merge_addresses(Result<Addresses> v4, Result<Addresses> v6) {
    if (v4 || v6) {
        Addresses out;
        if (v4) out = std::move(*v4);
        if (v6) out.insert(out.end(), v6->begin(), v6->end());
        return out;
    }
    const bool v4_missing = is_not_found(v4.error());
    const bool v6_missing = is_not_found(v6.error());
    if (v4_missing && v6_missing) {
        if (v4.error() == errc::nxdomain || v6.error() == errc::nxdomain) {
            return make_error_code(errc::nxdomain);
        }
        return make_error_code(errc::no_data);
    }
    // A real failure wins over "not found": we could not find out.
    return v4_missing ? v6.error() : v4.error();
}

void sort_mx(std::vector<MxRecord>& records) {
    std::stable_sort(records.begin(), records.end(), [](const MxRecord& a, const MxRecord& b) {
        return a.preference < b.preference;
    });
}

}  // namespace posthorn::dns::detail
