// app/queue_commands.hpp — `posthorn queue`: the operator's view of the delivery queue across
// every account, and its controls (docs/delivery.md "Queue control"). They work on the store
// of the config, also while servers run on it: a server sees a change at its next look at the
// queue (SQLite: within a second; PostgreSQL: at once, told by NOTIFY). Which recipients each
// command takes and what a purge does are domain/queue_control.hpp's rules. Each returns the
// exit code: 0 done, 1 failed (an unknown account, the store), 2 bad usage.
#pragma once

#include <optional>
#include <string>

#include "app/config.hpp"
#include "domain/queue_control.hpp"

namespace posthorn::app {

// The recipients a command is about; every one given narrows.
struct QueueFilter {
    std::optional<std::string> domain;   // the recipient's destination domain, as typed
    std::optional<std::string> account;  // an account's name
    std::optional<std::string> email;    // em_…
};

// `posthorn queue summary [--json]`: the queued recipients by destination domain and state,
// with the oldest queued time and the next attempt, as an aligned table (or the JSON of
// GET /v1/queue); the filter, if any, narrows it.
int queue_summary(const Config& config, const QueueFilter& filter, bool json);

// `posthorn queue hold|release|retry|purge`: at least one of the filter's selectors is
// required (2 otherwise). Prints how many recipients it changed.
int queue_control(const Config& config, domain::QueueAction action, const QueueFilter& filter);

}  // namespace posthorn::app
