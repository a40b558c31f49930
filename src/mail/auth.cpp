// mail/auth.cpp — SPF through libspf2 with a DNS layer of ours, DKIM through libopendkim
// with a key lookup of ours, DMARC through libopendmarc given the record we fetched. No
// library asks DNS on its own (they would ask /etc/resolv.conf's servers on port 53).
#include "mail/auth.hpp"

// The C headers want the system's types first (they leave them to their users), and
// opendkim's declares C99's _Bool, which C++ spells bool.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

// NOLINTNEXTLINE(readability-identifier-naming,bugprone-reserved-identifier,cppcoreguidelines-macro-usage)
#define _Bool bool
#include <opendkim/dkim.h>
#undef _Bool

#include <opendmarc/dmarc.h>

extern "C" {  // libspf2's headers do not say it themselves
#include <spf2/spf.h>
#include <spf2/spf_dns.h>
}

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>

#include "core/text.hpp"

// Exported by libopendmarc but not declared in its header: the organizational domain of a
// name by the public suffix list read at init (RFC 7489 §3.2).
extern "C" int opendmarc_get_tld(u_char* domain, u_char* tld, size_t tld_len);

namespace posthorn::mail {

namespace {

constexpr const char* kPublicSuffixList = "/usr/share/publicsuffix/public_suffix_list.dat";

// Counts every DNS question of one check against AuthLimits::max_dns_lookups: past it, each
// answer is a failure (a temperror), so a hostile sender's records cannot make us ask
// without end.
class Budget {
  public:
    Budget(AuthLookup& dns, int max) : dns_(dns), left_(max) {}
    bool take() {
        if (left_-- > 0) return true;
        failed_ = true;
        return false;
    }
    AuthLookup& dns() { return dns_; }
    // Asks through the budget; remembers a failure (a temperror, not a permerror, follows).
    AuthLookup::Status txt(const std::string& name, std::vector<std::string>& out) {
        if (!take()) return AuthLookup::Status::failed;
        return note(dns_.txt(name, out));
    }
    AuthLookup::Status note(AuthLookup::Status s) {
        if (s == AuthLookup::Status::failed) failed_ = true;
        return s;
    }
    bool failed() const { return failed_; }
    void clear_failed() { failed_ = false; }

  private:
    AuthLookup& dns_;
    int left_;
    bool failed_ = false;
};

// ---- SPF ----

void spf_quiet(const char*, int, const char*) {}

SPF_dns_rr_t* spf_answer(SPF_dns_server_t* server, const char* domain, ns_type type,
                         SPF_dns_stat_t status) {
    return SPF_dns_rr_new_init(server, domain, type, 0, status);
}

bool spf_add(SPF_dns_rr_t* rr, const void* data, std::size_t len) {
    const int i = rr->num_rr;
    if (SPF_dns_rr_buf_realloc(rr, i, len) != SPF_E_SUCCESS) return false;
    std::memcpy(rr->rr[i], data, len);
    rr->num_rr = i + 1;
    return true;
}

SPF_dns_stat_t spf_status(AuthLookup::Status s) {
    switch (s) {
        case AuthLookup::Status::ok:
            return NETDB_SUCCESS;
        case AuthLookup::Status::not_found:
            return HOST_NOT_FOUND;
        case AuthLookup::Status::failed:
            break;
    }
    return TRY_AGAIN;
}

SPF_dns_rr_t* spf_lookup(SPF_dns_server_t* server, const char* domain, ns_type type, int) {
    auto& budget = *static_cast<Budget*>(server->hook);
    std::string name = domain ? domain : "";
    while (!name.empty() && name.back() == '.') name.pop_back();
    if (name.empty()) return spf_answer(server, domain, type, HOST_NOT_FOUND);
    // RFC 7208 §4.4: no record of type SPF (99) is asked for; PTR is not asked either
    // (the "ptr" mechanism, which §5.5 says not to use, then never matches).
    if (type != ns_t_txt && type != ns_t_mx && type != ns_t_a && type != ns_t_aaaa)
        return spf_answer(server, domain, type, NO_DATA);
    if (!budget.take()) return spf_answer(server, domain, type, TRY_AGAIN);
    std::vector<std::string> values;
    AuthLookup::Status s = AuthLookup::Status::failed;
    if (type == ns_t_txt) s = budget.dns().txt(name, values);
    if (type == ns_t_mx) s = budget.dns().mx(name, values);
    if (type == ns_t_a || type == ns_t_aaaa) s = budget.dns().addresses(name, values);
    budget.note(s);
    SPF_dns_rr_t* rr = spf_answer(server, domain, type, spf_status(s));
    if (!rr || s != AuthLookup::Status::ok) return rr;
    for (const auto& v : values) {
        if (type == ns_t_a) {
            in_addr a{};
            if (inet_pton(AF_INET, v.c_str(), &a) == 1) spf_add(rr, &a, sizeof a);
        } else if (type == ns_t_aaaa) {
            in6_addr a{};
            if (inet_pton(AF_INET6, v.c_str(), &a) == 1) spf_add(rr, &a, sizeof a);
        } else {
            spf_add(rr, v.c_str(), v.size() + 1);
        }
    }
    // Only addresses of the other family: no record of the type asked for.
    if (rr->num_rr == 0) rr->herrno = NO_DATA;
    return rr;
}

std::string spf_result_name(SPF_result_t r) {
    switch (r) {
        case SPF_RESULT_PASS:
            return "pass";
        case SPF_RESULT_FAIL:
            return "fail";
        case SPF_RESULT_SOFTFAIL:
            return "softfail";
        case SPF_RESULT_NEUTRAL:
            return "neutral";
        case SPF_RESULT_NONE:
            return "none";
        case SPF_RESULT_TEMPERROR:
            return "temperror";
        case SPF_RESULT_PERMERROR:
            return "permerror";
        case SPF_RESULT_INVALID:
            break;
    }
    return "permerror";
}

// An IPv4-mapped IPv6 address (a dual-stack listener's view of an IPv4 client) as IPv4.
std::string plain_ip(const std::string& ip) {
    constexpr std::string_view kMapped = "::ffff:";
    if (ip.size() > kMapped.size() && core::ascii_iequals(ip.substr(0, kMapped.size()), kMapped) &&
        ip.find('.') != std::string::npos)
        return ip.substr(kMapped.size());
    return ip;
}

SpfOutcome check_spf(const AuthInput& in, Budget& budget, const AuthLimits& limits) {
    SpfOutcome out;
    const auto at = in.mail_from.rfind('@');
    if (!in.mail_from.empty() && at != std::string::npos) {
        out.domain = core::ascii_lower(in.mail_from.substr(at + 1));
        out.scope = "mailfrom";
    } else {
        out.domain = core::ascii_lower(in.helo);
        out.scope = "helo";
    }
    if (out.domain.empty() || out.domain.front() == '[') {  // no domain to ask about
        out.result = "none";
        return out;
    }
    static std::once_flag quiet;
    std::call_once(quiet, [] {
        SPF_warning_handler = spf_quiet;
        SPF_info_handler = spf_quiet;
        SPF_debug_handler = spf_quiet;
    });
    SPF_dns_server_t layer{};
    layer.lookup = spf_lookup;
    layer.name = "posthorn";
    layer.hook = &budget;
    std::unique_ptr<SPF_server_t, decltype(&SPF_server_free)> server(SPF_server_new_dns(&layer, 0),
                                                                     SPF_server_free);
    if (!server) {
        out.result = "temperror";
        return out;
    }
    SPF_server_set_max_dns_mech(server.get(), limits.max_dns_mechanisms);
    SPF_server_set_max_dns_mx(server.get(), limits.max_dns_mechanisms);
    SPF_server_set_max_dns_ptr(server.get(), limits.max_dns_mechanisms);
    std::unique_ptr<SPF_request_t, decltype(&SPF_request_free)> req(SPF_request_new(server.get()),
                                                                    SPF_request_free);
    const auto ip = plain_ip(in.client_ip);
    const bool v4 = ip.find(':') == std::string::npos;
    if (!req || (v4 ? SPF_request_set_ipv4_str(req.get(), ip.c_str())
                    : SPF_request_set_ipv6_str(req.get(), ip.c_str())) != SPF_E_SUCCESS) {
        out.result = "permerror";
        return out;
    }
    if (!in.helo.empty()) SPF_request_set_helo_dom(req.get(), in.helo.c_str());
    const std::string sender = out.scope == "mailfrom" ? in.mail_from : "postmaster@" + out.domain;
    if (SPF_request_set_env_from(req.get(), sender.c_str()) != 0) {
        out.result = "permerror";
        return out;
    }
    // What SPF_request_query_mailfrom does, without its first step: it answers "pass" to
    // any loopback client without looking at the record ("localhost gets a free ride"),
    // which RFC 7208 does not say (and the client of a local relay or a test is one).
    budget.clear_failed();
    std::unique_ptr<SPF_response_t, decltype(&SPF_response_free)> response(
        SPF_response_new(req.get()), SPF_response_free);
    const char* domain = req->use_helo ? req->helo_dom : req->env_from_dp;
    if (!response || !domain) {
        out.result = "permerror";
        return out;
    }
    req->cur_dom = domain;
    SPF_record_t* record = nullptr;
    const auto err = SPF_server_get_record(server.get(), req.get(), response.get(), &record);
    if (err == SPF_E_SUCCESS && record) {
        response->spf_record_exp = record;  // for the exp= modifier, as the library does
        SPF_record_interpret(record, req.get(), response.get(), 0);
        response->spf_record_exp = nullptr;
        SPF_record_free(record);
        out.result = spf_result_name(SPF_response_result(response.get()));
    } else {
        if (record) SPF_record_free(record);
        // No record is "none"; a record that does not compile (reported among the
        // response's errors, next to "not SPF") is a permerror.
        bool broken = err != SPF_E_NOT_SPF;
        for (int i = 0; i < SPF_response_messages(response.get()); ++i) {
            SPF_error_t* e = SPF_response_message(response.get(), i);
            if (e && SPF_error_errorp(e) && SPF_error_code(e) != SPF_E_NOT_SPF) broken = true;
        }
        out.result = broken ? "permerror" : "none";
    }
    // libspf2 reads a DNS failure (TRY_AGAIN) as a permerror (or "no record"); RFC 7208
    // §2.6.6 calls a transient DNS error a temperror.
    if ((out.result == "permerror" || out.result == "none") && budget.failed())
        out.result = "temperror";
    return out;
}

// ---- DKIM ----

struct DkimContext {
    Budget* budget = nullptr;
    std::size_t max_signatures = 0;
    // The keys whose look-up failed ("selector._domainkey.domain"): their signatures are
    // a temperror. (The lookup answers the library "not found" then: an answer of "try
    // again" makes it drop every signature.)
    std::vector<std::string> failed_keys;
};

DKIM_CBSTAT dkim_key_lookup(DKIM* dkim, DKIM_SIGINFO* sig, u_char* buf, size_t buflen) {
    auto* ctx = static_cast<DkimContext*>(dkim_get_user_context(dkim));
    const auto* selector = reinterpret_cast<const char*>(dkim_sig_getselector(sig));
    const auto* domain = reinterpret_cast<const char*>(dkim_sig_getdomain(sig));
    if (!ctx || !selector || !domain) return DKIM_CBSTAT_ERROR;
    std::vector<std::string> txt;
    const std::string name = std::string(selector) + "._domainkey." + domain;
    const auto s = ctx->budget->txt(name, txt);
    if (s == AuthLookup::Status::failed) {
        ctx->failed_keys.push_back(core::ascii_lower(name));
        return DKIM_CBSTAT_NOTFOUND;
    }
    if (s == AuthLookup::Status::not_found || txt.empty()) return DKIM_CBSTAT_NOTFOUND;
    const auto& key = txt.front();
    if (key.size() + 1 > buflen) return DKIM_CBSTAT_ERROR;
    std::memcpy(buf, key.c_str(), key.size() + 1);
    return DKIM_CBSTAT_CONTINUE;
}

// Signatures past the limit are ignored (neither fetched nor verified, not reported).
DKIM_CBSTAT dkim_prescreen(DKIM* dkim, DKIM_SIGINFO** sigs, int nsigs) {
    const auto* ctx = static_cast<DkimContext*>(dkim_get_user_context(dkim));
    for (int i = 0; i < nsigs; ++i)
        if (!ctx || static_cast<std::size_t>(i) >= ctx->max_signatures) dkim_sig_ignore(sigs[i]);
    return DKIM_CBSTAT_CONTINUE;
}

DKIM_LIB* dkim_library() {
    static DKIM_LIB* lib = [] {
        DKIM_LIB* l = dkim_init(nullptr, nullptr);
        if (l) {
            dkim_set_key_lookup(l, dkim_key_lookup);
            dkim_set_prescreen(l, dkim_prescreen);
        }
        return l;
    }();
    return lib;
}

std::string dkim_result_name(DKIM_SIGINFO* sig) {
    const unsigned flags = dkim_sig_getflags(sig);
    if ((flags & DKIM_SIGFLAG_PASSED) != 0 && dkim_sig_getbh(sig) == DKIM_SIGBH_MATCH)
        return "pass";
    switch (dkim_sig_geterror(sig)) {
        case DKIM_SIGERROR_KEYFAIL:
            return "temperror";
        case DKIM_SIGERROR_OK:
        case DKIM_SIGERROR_BADSIG:
        case DKIM_SIGERROR_EXPIRED:
        case DKIM_SIGERROR_FUTURE:
        case DKIM_SIGERROR_KEYREVOKED:
            return "fail";
        default:
            break;
    }
    // Processed and its body hash does not match, or its hash over the headers does not.
    if ((flags & DKIM_SIGFLAG_PROCESSED) != 0 && dkim_sig_getbh(sig) == DKIM_SIGBH_MISMATCH)
        return "fail";
    return "permerror";  // a key or signature that cannot be used (no key, bad syntax ...)
}

std::vector<DkimOutcome> check_dkim(const AuthInput& in, Budget& budget, const AuthLimits& limits) {
    std::vector<DkimOutcome> out;
    DKIM_LIB* lib = dkim_library();
    if (!lib) return out;
    DKIM_STAT status = DKIM_STAT_OK;
    std::unique_ptr<DKIM, decltype(&dkim_free)> dkim(
        dkim_verify(lib, reinterpret_cast<const unsigned char*>("inbound"), nullptr, &status),
        dkim_free);
    if (!dkim) return out;
    DkimContext ctx{.budget = &budget, .max_signatures = limits.max_dkim_signatures};
    dkim_set_user_context(dkim.get(), &ctx);
    std::string message(in.message);  // the library wants a writable buffer
    status = dkim_chunk(dkim.get(), reinterpret_cast<u_char*>(message.data()), message.size());
    if (status == DKIM_STAT_OK) status = dkim_chunk(dkim.get(), nullptr, 0);
    if (status == DKIM_STAT_OK) dkim_eom(dkim.get(), nullptr);
    DKIM_SIGINFO** sigs = nullptr;
    int nsigs = 0;
    if (dkim_getsiglist(dkim.get(), &sigs, &nsigs) != DKIM_STAT_OK) return out;
    for (int i = 0; i < nsigs; ++i) {
        DKIM_SIGINFO* sig = sigs[i];
        if ((dkim_sig_getflags(sig) & DKIM_SIGFLAG_IGNORE) != 0) continue;
        const auto* d = reinterpret_cast<const char*>(dkim_sig_getdomain(sig));
        const auto* s = reinterpret_cast<const char*>(dkim_sig_getselector(sig));
        DkimOutcome o{.result = dkim_result_name(sig),
                      .domain = d ? core::ascii_lower(d) : "",
                      .selector = s ? s : ""};
        const auto key = core::ascii_lower(o.selector + "._domainkey." + o.domain);
        if (o.result != "pass" &&
            std::find(ctx.failed_keys.begin(), ctx.failed_keys.end(), key) != ctx.failed_keys.end())
            o.result = "temperror";
        out.push_back(std::move(o));
    }
    return out;
}

// ---- DMARC ----

std::mutex dmarc_mutex;  // the library's public suffix table and its init are shared

bool dmarc_library() {
    static const bool ok = [] {
        OPENDMARC_LIB_T lib{};
        lib.tld_type = OPENDMARC_TLD_TYPE_MOZILLA;
        std::strncpy(reinterpret_cast<char*>(lib.tld_source_file), kPublicSuffixList,
                     sizeof lib.tld_source_file - 1);
        return opendmarc_policy_library_init(&lib) == DMARC_PARSE_OKAY;
    }();
    return ok;
}

std::string dmarc_policy_name(int p) {
    switch (p) {
        case DMARC_RECORD_P_NONE:
            return "none";
        case DMARC_RECORD_P_QUARANTINE:
            return "quarantine";
        case DMARC_RECORD_P_REJECT:
            return "reject";
        default:
            break;
    }
    return "";
}

// The DMARC record of a name: one TXT starting "v=DMARC1" (RFC 7489 §6.6.3: several, or
// none, is no record). ok with "" when there is none.
AuthLookup::Status dmarc_record(Budget& budget, const std::string& domain, std::string& record) {
    record.clear();
    std::vector<std::string> txt;
    const auto s = budget.txt("_dmarc." + domain, txt);
    if (s == AuthLookup::Status::failed) return s;
    int found = 0;
    for (const auto& t : txt) {
        auto v = t;
        v.erase(0, v.find_first_not_of(" \t"));
        if (v.size() >= 8 && core::ascii_iequals(v.substr(0, 8), "v=DMARC1")) {
            record = v;
            ++found;
        }
    }
    if (found != 1) record.clear();
    return AuthLookup::Status::ok;
}

DmarcOutcome check_dmarc(const AuthInput& in, const SpfOutcome& spf,
                         const std::vector<DkimOutcome>& dkim, Budget& budget) {
    DmarcOutcome out;
    out.domain = core::ascii_lower(in.from_domain);
    if (out.domain.empty()) {
        out.result = "none";
        return out;
    }
    std::string record;
    if (dmarc_record(budget, out.domain, record) == AuthLookup::Status::failed) {
        out.result = "temperror";
        return out;
    }
    std::lock_guard lock(dmarc_mutex);
    if (!dmarc_library()) {
        out.result = "temperror";
        return out;
    }
    std::string org = out.domain;
    std::array<u_char, 512> tld{};
    std::string from = out.domain;
    if (opendmarc_get_tld(reinterpret_cast<u_char*>(from.data()), tld.data(), tld.size() - 1) == 0)
        org = reinterpret_cast<const char*>(tld.data());
    if (record.empty() && org != out.domain &&
        dmarc_record(budget, org, record) == AuthLookup::Status::failed) {
        out.result = "temperror";
        return out;
    }
    if (record.empty()) {
        out.result = "none";
        return out;
    }
    const auto ip = plain_ip(in.client_ip);
    std::string ip_buf = ip;
    std::unique_ptr<DMARC_POLICY_T, decltype(&opendmarc_policy_connect_shutdown)> pctx(
        opendmarc_policy_connect_init(reinterpret_cast<u_char*>(ip_buf.data()),
                                      ip.find(':') == std::string::npos
                                          ? DMARC_POLICY_IP_TYPE_IPV4
                                          : DMARC_POLICY_IP_TYPE_IPV6),
        opendmarc_policy_connect_shutdown);
    if (!pctx) {
        out.result = "temperror";
        return out;
    }
    auto uc = [](std::string& s) { return reinterpret_cast<u_char*>(s.data()); };
    std::string from_buf = out.domain;
    opendmarc_policy_store_from_domain(pctx.get(), uc(from_buf));
    std::string spf_domain = spf.domain;
    const int spf_outcome = spf.result == "pass" ? DMARC_POLICY_SPF_OUTCOME_PASS
                            : spf.result == "fail" || spf.result == "softfail"
                                ? DMARC_POLICY_SPF_OUTCOME_FAIL
                            : spf.result == "temperror" ? DMARC_POLICY_SPF_OUTCOME_TMPFAIL
                                                        : DMARC_POLICY_SPF_OUTCOME_NONE;
    if (!spf_domain.empty())
        opendmarc_policy_store_spf(
            pctx.get(), uc(spf_domain), spf_outcome,
            spf.scope == "helo" ? DMARC_POLICY_SPF_ORIGIN_HELO : DMARC_POLICY_SPF_ORIGIN_MAILFROM,
            nullptr);
    for (const auto& sig : dkim) {
        std::string d = sig.domain, s = sig.selector;
        const int r = sig.result == "pass"        ? DMARC_POLICY_DKIM_OUTCOME_PASS
                      : sig.result == "temperror" ? DMARC_POLICY_DKIM_OUTCOME_TMPFAIL
                                                  : DMARC_POLICY_DKIM_OUTCOME_FAIL;
        if (!d.empty()) opendmarc_policy_store_dkim(pctx.get(), uc(d), uc(s), r, nullptr);
    }
    std::string org_buf = org;
    const auto parsed = opendmarc_policy_store_dmarc(pctx.get(), uc(record), uc(from_buf),
                                                     org != out.domain ? uc(org_buf) : nullptr);
    if (parsed != DMARC_PARSE_OKAY) {
        out.result = "permerror";
        return out;
    }
    int p = 0;
    opendmarc_policy_fetch_p(pctx.get(), &p);
    out.policy = dmarc_policy_name(p);
    const auto verdict = opendmarc_get_policy_to_enforce(pctx.get());
    int dkim_aligned = 0, spf_aligned = 0;
    opendmarc_policy_fetch_alignment(pctx.get(), &dkim_aligned, &spf_aligned);
    out.dkim_aligned = dkim_aligned == DMARC_POLICY_DKIM_ALIGNMENT_PASS;
    out.spf_aligned = spf_aligned == DMARC_POLICY_SPF_ALIGNMENT_PASS;
    if (verdict == DMARC_POLICY_PASS || out.dkim_aligned || out.spf_aligned)
        out.result = "pass";
    else if (verdict == DMARC_POLICY_ABSENT)
        out.result = "none";
    else
        out.result = "fail";
    return out;
}

}  // namespace

AuthResults check_authentication(const AuthInput& in, AuthLookup& dns, const AuthLimits& limits) {
    Budget budget(dns, limits.max_dns_lookups);
    AuthResults r;
    r.spf = check_spf(in, budget, limits);
    r.dkim = check_dkim(in, budget, limits);
    r.dmarc = check_dmarc(in, r.spf, r.dkim, budget);
    return r;
}

}  // namespace posthorn::mail
