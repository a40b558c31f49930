#include "api/inbound_auth.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "core/block_on.hpp"
#include "core/blocking.hpp"
#include "dns/errors.hpp"

namespace posthorn::api {

namespace json = boost::json;

namespace {

using Status = mail::AuthLookup::Status;

// Each question is one coroutine of the resolver, run to its end on this (blocking-pool)
// thread; the resolver's own timeouts and tries bound each, the deadline bounds them all.
class ResolverLookup final : public mail::AuthLookup {
  public:
    ResolverLookup(dns::Resolver& r, std::chrono::steady_clock::time_point deadline)
        : resolver_(r), deadline_(deadline) {}

    Status txt(const std::string& name, std::vector<std::string>& out) override {
        if (late()) return Status::failed;
        auto aw = resolver_.txt(name);
        return take(block_on(std::move(aw)), out);
    }
    Status mx(const std::string& name, std::vector<std::string>& hosts) override {
        if (late()) return Status::failed;
        auto aw = resolver_.mx(name);
        auto r = block_on(std::move(aw));
        if (!r) return status(r.error());
        for (const auto& m : *r)
            if (!m.host.empty()) hosts.push_back(m.host);
        return Status::ok;
    }
    Status addresses(const std::string& name, std::vector<std::string>& ips) override {
        if (late()) return Status::failed;
        auto aw = resolver_.addresses(name);
        auto r = block_on(std::move(aw));
        if (!r) return status(r.error());
        for (const auto& a : *r) ips.push_back(a.to_string());
        return Status::ok;
    }

  private:
    bool late() const { return std::chrono::steady_clock::now() >= deadline_; }
    static Status status(const error_code& ec) {
        return dns::is_not_found(ec) ? Status::not_found : Status::failed;
    }
    static Status take(Result<std::vector<std::string>> r, std::vector<std::string>& out) {
        if (!r) return status(r.error());
        out = std::move(*r);
        return Status::ok;
    }
    dns::Resolver& resolver_;
    std::chrono::steady_clock::time_point deadline_;
};

}  // namespace

std::string authentication_json(const mail::AuthResults& r) {
    auto or_null = [](const std::string& s) { return s.empty() ? json::value() : json::value(s); };
    json::array dkim;
    for (const auto& d : r.dkim)
        dkim.push_back(
            json::object{{"result", d.result}, {"domain", d.domain}, {"selector", d.selector}});
    const json::object out{{"spf", json::object{{"result", r.spf.result},
                                                {"domain", or_null(r.spf.domain)},
                                                {"scope", r.spf.scope}}},
                           {"dkim", std::move(dkim)},
                           {"dmarc", json::object{{"result", r.dmarc.result},
                                                  {"domain", or_null(r.dmarc.domain)},
                                                  {"policy", or_null(r.dmarc.policy)},
                                                  {"spf_aligned", r.dmarc.spf_aligned},
                                                  {"dkim_aligned", r.dmarc.dkim_aligned}}}};
    return json::serialize(out);
}

asio::awaitable<std::string> authenticate_inbound(dns::Resolver& resolver,
                                                  asio::any_io_executor pool, mail::AuthInput input,
                                                  std::chrono::milliseconds budget) {
    auto work = [&resolver, input = std::move(input), budget] {
        ResolverLookup lookup(resolver, std::chrono::steady_clock::now() + budget);
        return authentication_json(mail::check_authentication(input, lookup));
    };
    co_return co_await core::run_blocking(std::move(pool), std::move(work));
}

}  // namespace posthorn::api
