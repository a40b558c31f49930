// posthorn — the binary: `serve`, and the operator's CLI of DESIGN §1.
// Exit codes: 0 ok, 1 the operation failed, 2 bad usage or bad configuration.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "app/commands.hpp"
#include "app/config.hpp"
#include "app/queue_commands.hpp"
#include "app/serve.hpp"
#include "app/store_copy.hpp"
#include "core/log.hpp"
#include "core/time.hpp"
#include "core/version.hpp"

using namespace posthorn;

namespace {

// Text: "2026-11-27T10:00:00.123Z info message key=value"; JSON: one object a line
// (log::json_line). Either way to stderr, a line at a time.
void install_log_sink(bool json) {
    auto logger = spdlog::stderr_color_mt("posthorn");
    if (json)
        logger->set_pattern("%v");
    else
        logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
    logger->set_level(spdlog::level::debug);
    log::set_sink([logger, json](log::Level level, std::string_view msg, log::Fields fields) {
        static constexpr spdlog::level::level_enum kMap[] = {
            spdlog::level::debug, spdlog::level::info, spdlog::level::warn, spdlog::level::err};
        const auto spd = kMap[static_cast<int>(level)];
        if (json) {
            const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch());
            logger->log(spd, log::json_line(format_iso8601(now.count()), level, msg, fields));
        } else if (fields.empty()) {
            logger->log(spd, msg);
        } else {
            logger->log(spd, log::text_line(msg, fields));
        }
    });
}

int run(int argc, char** argv) {
    CLI::App cli{"posthorn — a self-hosted transactional email service"};
    cli.require_subcommand(1);
    cli.fallthrough();
    cli.set_version_flag("-V,--version", std::string("posthorn ") + std::string(core::version()),
                         "print the version and exit");
    std::string config_path;
    cli.add_option("-c,--config", config_path, "TOML config file (env POSTHORN_* overrides it)");

    auto* serve_cmd = cli.add_subcommand("serve", "run the service");

    auto* account = cli.add_subcommand("account", "manage accounts")->require_subcommand(1);
    std::string account_name;
    auto* account_create = account->add_subcommand("create", "create an account, print its id");
    account_create->add_option("name", account_name, "account name")->required();

    auto* key = cli.add_subcommand("key", "manage API keys")->require_subcommand(1);
    std::string key_account, key_id;
    auto* key_create = key->add_subcommand("create", "create a key; the key is the last line");
    key_create->add_option("--account", key_account, "account name")->required();
    bool key_test = false;
    key_create->add_flag("--test", key_test,
                         "a test-mode key: its mail is accepted and recorded, never delivered "
                         "(docs/test-mode.md)");
    auto* key_list = key->add_subcommand("list", "list an account's keys (never the keys)");
    key_list->add_option("--account", key_account, "account name")->required();
    auto* key_revoke = key->add_subcommand("revoke", "revoke a key: it answers 401 from now on");
    key_revoke->add_option("key_id", key_id, "key id (key_…)")->required();

    auto* dns = cli.add_subcommand("dns", "DNS for the operator")->require_subcommand(1);
    auto* dns_zone = dns->add_subcommand("zone", "print the DKIM TXT records to serve (zone file)");

    auto* queue = cli.add_subcommand("queue", "the delivery queue of every account: look, control")
                      ->require_subcommand(1);
    app::QueueFilter queue_filter;
    bool queue_json = false;
    auto selectors = [&queue_filter](CLI::App* cmd, const char* what) {
        cmd->add_option("--domain", queue_filter.domain, std::string(what) + " to this domain");
        cmd->add_option("--account", queue_filter.account, "of this account (its name)");
        cmd->add_option("--email", queue_filter.email, "of this email (em_…)");
    };
    auto* queue_summary = queue->add_subcommand(
        "summary", "queued recipients by destination domain and state, oldest, next attempt");
    selectors(queue_summary, "only recipients");
    queue_summary->add_flag("--json", queue_json, "JSON (as GET /v1/queue answers) for scripts");
    struct Control {
        const char* name;
        const char* help;
        domain::QueueAction action;
        CLI::App* cmd = nullptr;
    };
    std::vector<Control> controls = {
        {"hold", "hold queued recipients: not attempted until released", domain::QueueAction::hold},
        {"release", "release held recipients: due again as they were",
         domain::QueueAction::release},
        {"retry", "make deferred recipients due now", domain::QueueAction::retry},
        {"purge", "fail queued recipients (FAILED, reason purged; events sent)",
         domain::QueueAction::purge},
    };
    for (auto& c : controls) {
        c.cmd = queue->add_subcommand(c.name, std::string(c.help) +
                                                  "; at least one of --domain, --account, "
                                                  "--email (each narrows)");
        selectors(c.cmd, "recipients");
    }

    auto* store_cmd = cli.add_subcommand("store", "move the store")->require_subcommand(1);
    std::string copy_from, copy_to;
    auto* store_copy = store_cmd->add_subcommand(
        "copy",
        "copy a stopped SQLite store into an empty PostgreSQL database, then compare counts");
    store_copy->add_option("--from", copy_from, "the SQLite store: sqlite://PATH")->required();
    store_copy->add_option("--to", copy_to, "an empty database: postgresql://…")->required();

    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = cli.exit(e);
        return rc == 0 ? 0 : 2;
    }

    if (store_copy->parsed()) {  // its two URLs, not the config's database
        install_log_sink(false);
        log::set_level(log::Level::warn);
        return app::store_copy(copy_from, copy_to);
    }
    app::Config config;
    try {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): no other thread exists yet
        config = app::load_config(config_path, [](const char* name) { return std::getenv(name); });
    } catch (const app::ConfigError& e) {
        std::cerr << "posthorn: configuration error: " << e.what() << "\n";
        return 2;
    }
    install_log_sink(config.log.format == app::LogFormat::json);
    log::set_level(config.log.level);
    try {
        if (serve_cmd->parsed()) return app::serve(config);
        log::set_level(std::max(config.log.level, log::Level::warn));  // results, not chatter
        if (account_create->parsed()) return app::account_create(config, account_name);
        if (key_create->parsed()) return app::key_create(config, key_account, key_test);
        if (key_list->parsed()) return app::key_list(config, key_account);
        if (key_revoke->parsed()) return app::key_revoke(config, key_id);
        if (dns_zone->parsed()) return app::dns_zone(config);
        if (queue_summary->parsed()) return app::queue_summary(config, queue_filter, queue_json);
        for (const auto& c : controls)
            if (c.cmd->parsed()) return app::queue_control(config, c.action, queue_filter);
    } catch (const app::ConfigError& e) {
        std::cerr << "posthorn: configuration error: " << e.what() << "\n";
        return 2;
    }
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {  // exit code 1 and the reason, not std::terminate
        std::cerr << "posthorn: " << e.what() << "\n";
        return 1;
    }
}
