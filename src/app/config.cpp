#include "app/config.hpp"

#include <unistd.h>

#include <toml++/toml.h>
#include <boost/asio/ip/address.hpp>
#include <boost/url/parse.hpp>

#include <array>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <span>
#include <variant>

#include "core/client_limits.hpp"
#include "core/log.hpp"

namespace posthorn::app {
namespace {

using Value = std::variant<std::string, bool, std::int64_t, std::vector<std::int64_t>,
                           std::vector<std::string>>;
enum class Kind { string, boolean, integer, int_list, string_list };

[[noreturn]] void fail(const std::string& key, const std::string& why) {
    throw ConfigError(key + ": " + why);
}

bool valid_hostname(std::string_view h) {
    if (h.empty() || h.size() > 253) return false;
    std::size_t label = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
        const char c = h[i];
        if (c == '.') {
            if (label == 0 || h[i - 1] == '-') return false;
            label = 0;
            continue;
        }
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
        if (label == 0 && c == '-') return false;
        if (++label > 63) return false;
    }
    return label > 0 && h.back() != '-';
}

bool valid_ip(std::string_view s) {
    boost::system::error_code ec;
    (void)boost::asio::ip::make_address(std::string(s), ec);
    return !ec;
}

std::optional<std::int64_t> to_int(std::string_view s) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split_commas(std::string_view s) {
    std::vector<std::string_view> out;
    while (!s.empty()) {
        const auto comma = s.find(',');
        auto part = trim(s.substr(0, comma));
        if (!part.empty()) out.push_back(part);
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 1);
    }
    return out;
}

const char* kind_name(Kind k) {
    switch (k) {
        case Kind::string:
            return "a string";
        case Kind::boolean:
            return "true or false";
        case Kind::integer:
            return "an integer";
        case Kind::int_list:
            return "a list of integers";
        case Kind::string_list:
            return "a list of strings";
    }
    return "?";
}

// ---- typed setters, each validating its value ----

const std::string& str(const Value& v) { return std::get<std::string>(v); }

int int_in(const std::string& key, const Value& v, std::int64_t lo, std::int64_t hi) {
    const auto n = std::get<std::int64_t>(v);
    if (n < lo || n > hi)
        fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    return static_cast<int>(n);
}

std::vector<int> schedule(const std::string& key, const Value& v) {
    const auto& list = std::get<std::vector<std::int64_t>>(v);
    if (list.empty()) fail(key, "must list at least one delay");
    std::vector<int> out;
    for (auto n : list) {
        if (n < 1 || n > 30 * 86400) fail(key, "delays must be 1 to 2592000 seconds");
        out.push_back(static_cast<int>(n));
    }
    return out;
}

HostPort listen_address(const std::string& key, const Value& v) {
    auto hp = parse_host_port(str(v));
    if (!hp) fail(key, "'" + str(v) + "' is not a listen address (ip:port, [ipv6]:port)");
    if (hp->host == "localhost") hp->host = "127.0.0.1";
    if (!valid_ip(hp->host)) fail(key, "'" + hp->host + "' is not an IP address");
    return *hp;
}

std::string hostname(const std::string& key, const Value& v) {
    if (!valid_hostname(str(v))) fail(key, "'" + str(v) + "' is not a host name");
    return str(v);
}

// A list of networks (CIDR) or addresses, each checked.
std::vector<std::string> networks(const std::string& key, const Value& v) {
    const auto& nets = std::get<std::vector<std::string>>(v);
    for (const auto& n : nets)
        if (!core::parse_network(n))
            fail(key, "'" + n + "' is not a network (10.0.0.0/8, 2001:db8::/32) or an address");
    return nets;
}

struct Spec {
    const char* section;
    const char* key;
    Kind kind;
    void (*apply)(Config&, const std::string& name, const Value&);
};

// Every key of DESIGN §1; the defaults live in the Config struct.
const Spec kSpecs[] = {
    {"server", "data_dir", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         if (str(v).empty()) fail(k, "must not be empty");
         c.server.data_dir = str(v);
     }},
    {"server", "public_url", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         auto u = boost::urls::parse_absolute_uri(str(v));
         if (!u || (u->scheme() != "http" && u->scheme() != "https") || u->host().empty())
             fail(k, "'" + str(v) + "' is not an http(s) URL");
         c.server.public_url = str(v);
     }},
    {"server", "network_threads", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.server.network_threads = int_in(k, v, 0, 256);
     }},
    {"server", "node_id", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         const auto& s = str(v);
         // It names this node's leases in a store that several nodes share.
         if (s.empty() || s.size() > 200) fail(k, "must have 1 to 200 characters");
         for (const char ch : s)
             if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f)
                 fail(k, "must not contain spaces or control characters");
         c.server.node_id = s;
     }},
    {"server", "master_key_file", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         if (str(v).empty()) fail(k, "must not be empty");
         c.server.master_key_file = str(v);
     }},
    {"http", "listen", Kind::string,
     [](Config& c, const std::string& k, const Value& v) { c.http.listen = listen_address(k, v); }},
    {"server", "trusted_networks", Kind::string_list,
     [](Config& c, const std::string& k, const Value& v) {
         c.server.trusted_networks = networks(k, v);
     }},
    {"http", "max_connections", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.http.max_connections = int_in(k, v, 1, 1000000);
     }},
    {"http", "max_connections_per_client", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.http.max_connections_per_client = int_in(k, v, 0, 1000000);
     }},
    {"http", "connection_rate_per_client", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.http.connection_rate_per_client = int_in(k, v, 0, 100'000'000);
     }},
    {"http", "busy_idle_timeout_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.http.busy_idle_timeout_s = int_in(k, v, 1, 3600);
     }},
    {"http", "proxy_protocol", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.http.proxy_protocol = std::get<bool>(v);
     }},
    {"smtp", "submission_listen", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.submission_listen = listen_address(k, v);
     }},
    {"smtp", "inbound_listen", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.inbound_listen = listen_address(k, v);
     }},
    {"smtp", "hostname", Kind::string,
     [](Config& c, const std::string& k, const Value& v) { c.smtp.hostname = hostname(k, v); }},
    {"smtp", "tls_cert", Kind::string,
     [](Config& c, const std::string&, const Value& v) { c.smtp.tls_cert = str(v); }},
    {"smtp", "tls_key", Kind::string,
     [](Config& c, const std::string&, const Value& v) { c.smtp.tls_key = str(v); }},
    {"smtp", "allow_auth_without_tls", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.smtp.allow_auth_without_tls = std::get<bool>(v);
     }},
    {"smtp", "max_connections", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.max_connections = int_in(k, v, 1, 1000000);
     }},
    {"smtp", "max_connections_per_client", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.max_connections_per_client = int_in(k, v, 0, 1000000);
     }},
    {"smtp", "connection_rate_per_client", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.connection_rate_per_client = int_in(k, v, 0, 100'000'000);
     }},
    {"smtp", "busy_idle_timeout_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.busy_idle_timeout_s = int_in(k, v, 1, 3600);
     }},
    {"smtp", "submission_proxy_protocol", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.smtp.submission_proxy_protocol = std::get<bool>(v);
     }},
    {"smtp", "inbound_proxy_protocol", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.smtp.inbound_proxy_protocol = std::get<bool>(v);
     }},
    {"smtp", "auth_max_failures", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.auth_max_failures = int_in(k, v, 1, 1000000);
     }},
    {"smtp", "auth_lockout_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.smtp.auth_lockout_s = int_in(k, v, 1, 86400);
     }},
    {"database", "url", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         const auto& s = str(v);
         if (!s.empty() && s.rfind("sqlite://", 0) != 0 && s.rfind("postgresql://", 0) != 0 &&
             s.rfind("postgres://", 0) != 0)
             fail(k, "'" + s + "' must start with sqlite:// or postgresql://");
         if (s == "sqlite://") fail(k, "sqlite:// needs a file path");
         c.database.url = s;
     }},
    {"dns", "servers", Kind::string_list,
     [](Config& c, const std::string& k, const Value& v) {
         c.dns.servers.clear();
         for (const auto& s : std::get<std::vector<std::string>>(v)) {
             auto hp = parse_host_port(s, 53);
             if (!hp || !valid_ip(hp->host))
                 fail(k, "'" + s + "' is not a DNS server address (ip or ip:port)");
             c.dns.servers.push_back(*hp);
         }
     }},
    {"dns", "dkim_zone", Kind::string,
     [](Config& c, const std::string& k, const Value& v) { c.dns.dkim_zone = hostname(k, v); }},
    {"dns", "spf_include", Kind::string,
     [](Config& c, const std::string& k, const Value& v) { c.dns.spf_include = hostname(k, v); }},
    {"dns", "inbound_mx", Kind::string,
     [](Config& c, const std::string& k, const Value& v) { c.dns.inbound_mx = hostname(k, v); }},
    {"dns", "pending_recheck_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.dns.pending_recheck_s = int_in(k, v, 1, 86400);
     }},
    {"dns", "verified_recheck_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.dns.verified_recheck_s = int_in(k, v, 1, 30 * 86400);
     }},
    {"delivery", "mx_port", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.delivery.mx_port = int_in(k, v, 1, 65535);
     }},
    {"delivery", "allow_private_targets", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.delivery.allow_private_targets = std::get<bool>(v);
     }},
    {"delivery", "relay", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         if (str(v).empty()) {
             c.delivery.relay.reset();
             return;
         }
         auto hp = parse_host_port(str(v));
         if (!hp || (!valid_ip(hp->host) && !valid_hostname(hp->host)))
             fail(k, "'" + str(v) + "' is not host:port");
         c.delivery.relay = *hp;
     }},
    {"delivery", "tls", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         if (str(v) == "off")
             c.delivery.tls = TlsMode::off;
         else if (str(v) == "opportunistic")
             c.delivery.tls = TlsMode::opportunistic;
         else if (str(v) == "required")
             c.delivery.tls = TlsMode::required;
         else if (str(v) == "verify")
             c.delivery.tls = TlsMode::verify;
         else
             fail(k, "must be off, opportunistic, required or verify");
     }},
    {"delivery", "tls_ca_file", Kind::string,
     [](Config& c, const std::string&, const Value& v) { c.delivery.tls_ca_file = str(v); }},
    {"delivery", "mta_sts_port", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.delivery.mta_sts_port = int_in(k, v, 1, 65535);
     }},
    {"delivery", "mta_sts_allow_private", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.delivery.mta_sts_allow_private = std::get<bool>(v);
     }},
    {"delivery", "retry_schedule_s", Kind::int_list,
     [](Config& c, const std::string& k, const Value& v) {
         c.delivery.retry_schedule_s = schedule(k, v);
     }},
    {"delivery", "connect_timeout_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.delivery.connect_timeout_s = int_in(k, v, 1, 3600);
     }},
    {"delivery", "command_timeout_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.delivery.command_timeout_s = int_in(k, v, 1, 3600);
     }},
    {"delivery", "max_connections", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.delivery.max_connections = int_in(k, v, 1, 10000);
     }},
    {"delivery", "max_connections_per_domain", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.delivery.max_connections_per_domain = int_in(k, v, 1, 1000);
     }},
    {"delivery", "lease_s", Kind::integer,
     [](Config& c, const std::string& k,
        const Value& v) { c.delivery.lease_s = int_in(k, v, 10, 86400); }},
    {"limits", "send_rate_per_minute", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.limits.send_rate_per_minute = int_in(k, v, 1, 100'000'000);
     }},
    {"limits", "max_recipients", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.limits.max_recipients = int_in(k, v, 1, 1'000'000);
     }},
    {"limits", "max_attachment_bytes", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.limits.max_attachment_bytes = int_in(k, v, 1, 1'000'000'000);
     }},
    {"retention", "logs_days", Kind::integer,
     [](Config& c, const std::string& k,
        const Value& v) { c.retention.logs_days = int_in(k, v, 1, 36500); }},
    {"webhooks", "allow_private_targets", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.webhooks.allow_private_targets = std::get<bool>(v);
     }},
    {"webhooks", "retry_schedule_s", Kind::int_list,
     [](Config& c, const std::string& k, const Value& v) {
         c.webhooks.retry_schedule_s = schedule(k, v);
     }},
};

// The operator's keys of issue 28 (logs, metrics, the drain): a table of their own, which
// also keeps each table within what clang-format lays out as a table.
const Spec kOperationsSpecs[] = {
    {"server", "shutdown_grace_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.server.shutdown_grace_s = int_in(k, v, 0, 3600);
     }},
    {"log", "format", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         if (str(v) == "text")
             c.log.format = LogFormat::text;
         else if (str(v) == "json")
             c.log.format = LogFormat::json;
         else
             fail(k, "'" + str(v) + "' is not a log format (text, json)");
     }},
    {"log", "level", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         if (!log::parse_level(str(v), c.log.level))
             fail(k, "'" + str(v) + "' is not a log level (debug, info, warn, error)");
     }},
    {"metrics", "enabled", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) { c.metrics.enabled = std::get<bool>(v); }},
    {"metrics", "trusted_networks", Kind::string_list,
     [](Config& c, const std::string& k, const Value& v) {
         c.metrics.trusted_networks = networks(k, v);
     }},
    {"metrics", "token", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         for (const char ch : str(v))
             if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f)
                 fail(k, "must not contain spaces or control characters");
         c.metrics.token = str(v);
     }},
};

// The keys of issue 29 (what an account manages itself: return paths, DKIM rotation,
// tracking hosts): a table of their own, for the reason kOperationsSpecs gives.
const Spec kDomainSpecs[] = {
    {"dns", "return_path_target", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         // Empty: dns.inbound_mx (serve.cpp, domain_policy).
         c.dns.return_path_target = str(v).empty() ? std::string() : hostname(k, v);
     }},
    {"dkim", "rotate_days", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.dkim.rotate_days = int_in(k, v, 0, 3650);
     }},
    {"tracking", "cname_target", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         c.tracking.cname_target = str(v).empty() ? std::string() : hostname(k, v);
     }},
};

// The keys of issue 31 (the web dashboard, docs/dashboard.md): a table of their own, for the
// reason kOperationsSpecs gives.
const Spec kDashboardSpecs[] = {
    {"dashboard", "enabled", Kind::boolean,
     [](Config& c, const std::string&, const Value& v) {
         c.dashboard.enabled = std::get<bool>(v);
     }},
    {"dashboard", "session_ttl_s", Kind::integer,
     [](Config& c, const std::string& k, const Value& v) {
         c.dashboard.session_ttl_s = int_in(k, v, 60, 31'536'000);
     }},
    {"dashboard", "secure_cookie", Kind::string,
     [](Config& c, const std::string& k, const Value& v) {
         if (str(v) != "auto" && str(v) != "always" && str(v) != "never")
             fail(k, "'" + str(v) + "' is not one of auto, always, never");
         c.dashboard.secure_cookie = str(v);
     }},
};

// Every key, in the four tables.
const std::array<std::span<const Spec>, 4> kAllSpecs{
    std::span<const Spec>(kSpecs), std::span<const Spec>(kOperationsSpecs),
    std::span<const Spec>(kDomainSpecs), std::span<const Spec>(kDashboardSpecs)};

const Spec* find_spec(std::string_view section, std::string_view key) {
    for (const auto table : kAllSpecs)
        for (const auto& s : table)
            if (section == s.section && key == s.key) return &s;
    return nullptr;
}

bool known_section(std::string_view section) {
    for (const auto table : kAllSpecs)
        for (const auto& s : table)
            if (section == s.section) return true;
    return false;
}

Value from_toml(const Spec& spec, const std::string& name, const toml::node& node) {
    switch (spec.kind) {
        case Kind::string:
            if (auto v = node.value<std::string>(); v && node.is_string()) return *v;
            break;
        case Kind::boolean:
            if (auto v = node.value<bool>(); v && node.is_boolean()) return *v;
            break;
        case Kind::integer:
            if (auto v = node.value<std::int64_t>(); v && node.is_integer()) return *v;
            break;
        case Kind::int_list:
            if (const auto* arr = node.as_array()) {
                std::vector<std::int64_t> out;
                for (const auto& el : *arr) {
                    if (!el.is_integer())
                        fail(name, std::string("expected ") + kind_name(spec.kind));
                    out.push_back(*el.value<std::int64_t>());
                }
                return out;
            }
            break;
        case Kind::string_list:
            if (const auto* arr = node.as_array()) {
                std::vector<std::string> out;
                for (const auto& el : *arr) {
                    if (!el.is_string())
                        fail(name, std::string("expected ") + kind_name(spec.kind));
                    out.push_back(*el.value<std::string>());
                }
                return out;
            }
            break;
    }
    fail(name, std::string("expected ") + kind_name(spec.kind));
}

Value from_env(const Spec& spec, const std::string& var, std::string_view text) {
    switch (spec.kind) {
        case Kind::string:
            return std::string(text);
        case Kind::boolean:
            if (text == "true" || text == "1" || text == "yes") return true;
            if (text == "false" || text == "0" || text == "no") return false;
            break;
        case Kind::integer:
            if (auto n = to_int(trim(text))) return *n;
            break;
        case Kind::int_list: {
            std::vector<std::int64_t> out;
            for (auto part : split_commas(text)) {
                auto n = to_int(part);
                if (!n)
                    fail(var,
                         std::string("expected ") + kind_name(spec.kind) + ", comma-separated");
                out.push_back(*n);
            }
            return out;
        }
        case Kind::string_list: {
            std::vector<std::string> out;
            for (auto part : split_commas(text)) out.emplace_back(part);
            return out;
        }
    }
    fail(var, std::string("expected ") + kind_name(spec.kind));
}

std::string env_name(const Spec& s) {
    std::string out = "POSTHORN_";
    for (const char* p : {s.section, "_", s.key})
        for (const char* c = p; *c; ++c)
            out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(*c))));
    return out;
}

void require_readable(const std::string& key, const std::string& path) {
    std::ifstream f(path);
    if (!f) fail(key, "cannot read '" + path + "'");
}

}  // namespace

std::string HostPort::to_string() const {
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

std::optional<HostPort> parse_host_port(std::string_view text, std::uint16_t default_port) {
    HostPort hp;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        hp.host = std::string(text.substr(1, close - 1));
        auto rest = text.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return std::nullopt;
            port = rest.substr(1);
            if (port.empty()) return std::nullopt;
        }
    } else {
        const auto colon = text.rfind(':');
        if (colon != std::string_view::npos && text.find(':') != colon) {
            hp.host = std::string(text);  // a bare IPv6 literal, no port
        } else {
            hp.host = std::string(text.substr(0, colon));
            if (colon != std::string_view::npos) {
                port = text.substr(colon + 1);
                if (port.empty()) return std::nullopt;
            }
        }
    }
    if (hp.host.empty()) return std::nullopt;
    if (port.empty()) {
        if (default_port == 0) return std::nullopt;
        hp.port = default_port;
    } else {
        auto n = to_int(port);
        if (!n || *n < 0 || *n > 65535) return std::nullopt;
        hp.port = static_cast<std::uint16_t>(*n);
    }
    return hp;
}

std::string Config::sqlite_path() const {
    constexpr std::string_view kScheme = "sqlite://";
    if (database.url.rfind(kScheme, 0) != 0) return {};
    return database.url.substr(kScheme.size());
}

std::string Config::tracking_cname_target() const {
    if (!tracking.cname_target.empty()) return tracking.cname_target;
    auto u = boost::urls::parse_absolute_uri(server.public_url);
    if (!u) return "localhost";  // public_url is checked at load: not reached
    return std::string(u->host());
}

bool Config::dashboard_secure_cookie() const {
    if (dashboard.secure_cookie == "always") return true;
    if (dashboard.secure_cookie == "never") return false;
    auto u = boost::urls::parse_absolute_uri(server.public_url);
    return u && u->scheme() == "https";
}

std::size_t Config::http_body_limit() const {
    const auto b64 = (static_cast<std::size_t>(limits.max_attachment_bytes) + 2) / 3 * 4;
    return b64 + (2u << 20);
}

Config load_config(const std::string& path, const Getenv& getenv) {
    Config c;
    if (!path.empty()) {
        require_readable("config file", path);
        toml::table root;
        try {
            root = toml::parse_file(path);
        } catch (const toml::parse_error& e) {
            throw ConfigError("config file " + path + ": line " +
                              std::to_string(e.source().begin.line) + ": " +
                              std::string(e.description()));
        }
        for (const auto& [section_key, section_node] : root) {
            const std::string section(section_key.str());
            if (!known_section(section))
                throw ConfigError("unknown config section [" + section + "]");
            const auto* table = section_node.as_table();
            if (!table) throw ConfigError(section + ": expected a [" + section + "] table");
            for (const auto& [key, node] : *table) {
                const std::string name = section + "." + std::string(key.str());
                const auto* spec = find_spec(section, key.str());
                if (!spec) throw ConfigError("unknown config key " + name);
                spec->apply(c, name, from_toml(*spec, name, node));
            }
        }
    }
    for (const auto table : kAllSpecs) {
        for (const auto& spec : table) {
            const auto var = env_name(spec);
            if (const char* text = getenv(var.c_str()))
                spec.apply(c, var, from_env(spec, var, text));
        }
    }
    if (c.smtp.tls_cert.empty() != c.smtp.tls_key.empty())
        throw ConfigError("smtp.tls_cert: smtp.tls_cert and smtp.tls_key go together");
    if (!c.smtp.tls_cert.empty()) {
        require_readable("smtp.tls_cert", c.smtp.tls_cert);
        require_readable("smtp.tls_key", c.smtp.tls_key);
    }
    if (!c.delivery.tls_ca_file.empty())
        require_readable("delivery.tls_ca_file", c.delivery.tls_ca_file);
    if (c.database.url.empty()) c.database.url = "sqlite://" + c.server.data_dir + "/posthorn.db";
    if (c.server.master_key_file.empty())
        c.server.master_key_file = c.server.data_dir + "/master.key";
    if (c.server.node_id.empty()) {
        // The host name and the HTTP port: nodes on one machine differ by their ports.
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
            std::snprintf(host, sizeof host, "localhost");
        c.server.node_id = std::string(host) + ":" + std::to_string(c.http.listen.port);
    }
    return c;
}

}  // namespace posthorn::app
