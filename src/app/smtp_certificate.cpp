#include "app/smtp_certificate.hpp"

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "core/result.hpp"

namespace posthorn::app {
namespace {

void add_once(std::vector<std::string>& to, std::string name) {
    if (std::find(to.begin(), to.end(), name) == to.end()) to.push_back(std::move(name));
}

std::string joined(const crypto::SubjectNames& names) {
    std::string out;
    for (const auto& d : names.dns) out += (out.empty() ? "DNS:" : ", DNS:") + d;
    for (const auto& ip : names.ips) out += (out.empty() ? "IP:" : ", IP:") + ip;
    return out;
}

}  // namespace

crypto::SubjectNames self_signed_names(const Config& config) {
    crypto::SubjectNames names;
    add_once(names.dns, config.smtp.hostname);
    add_once(names.dns, "localhost");
    for (const auto* listen : {&config.smtp.submission_listen, &config.smtp.inbound_listen}) {
        error_code ec;
        const auto address = asio::ip::make_address(listen->host, ec);
        if (ec) continue;  // validated as an IP literal; nothing to name otherwise
        if (address.is_unspecified()) {
            add_once(names.ips, "127.0.0.1");
            add_once(names.ips, "::1");
        } else {
            add_once(names.ips, address.to_string());
        }
    }
    return names;
}

std::shared_ptr<crypto::ServerCertificate> smtp_certificate(const Config& config) {
    if (!config.smtp.tls_cert.empty()) {
        auto tls = crypto::ServerCertificate::load(config.smtp.tls_cert, config.smtp.tls_key);
        log::info("SMTP TLS certificate {}: {}", config.smtp.tls_cert, tls->describe());
        return tls;
    }
    const auto names = self_signed_names(config);
    const auto pair = crypto::ensure_self_signed(config.server.data_dir, names);
    if (pair.made == "new")
        log::info("SMTP TLS: made a self-signed certificate for {}", joined(names));
    else if (!pair.made.empty())
        log::warn(
            "SMTP TLS: made the self-signed certificate again, for {}: the earlier one had {}; "
            "clients that trusted the earlier file need the new one",
            joined(names), pair.made);
    auto tls = crypto::ServerCertificate::load(pair.cert_path, pair.key_path);
    log::info("SMTP TLS certificate {} (self-signed; clients may trust it as their CA): {}",
              pair.cert_path, tls->describe());
    return tls;
}

asio::awaitable<void> reload_on_signal(asio::signal_set& hup,
                                       std::shared_ptr<crypto::ServerCertificate> tls) {
    for (;;) {
        auto [ec, sig] = co_await hup.async_wait(use_nothrow_awaitable);
        if (ec) co_return;
        if (auto why = tls->reload(); !why.empty())
            log::error("signal {}: keeping the SMTP TLS certificate in use: {}", sig, why);
        else
            log::info("signal {}: SMTP TLS certificate {} reloaded: {}", sig, tls->cert_path(),
                      tls->describe());
    }
}

}  // namespace posthorn::app
