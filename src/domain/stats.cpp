#include "domain/stats.hpp"

#include <algorithm>

namespace posthorn::domain {

std::string domain_dimension(std::string_view domain_id) {
    return "domain:" + std::string(domain_id);
}

std::string tag_dimension(const Tag& tag) { return "tag:" + tag.name + ":" + tag.value; }

std::vector<StatBump> stat_bumps(const Email& email, StatKind kind, UnixMs at) {
    std::vector<StatBump> out;
    if (email.test) return out;  // test mail counts nowhere (stats.hpp)
    out.reserve(2 + email.tags.size());
    const auto hour = stat_floor(at, kStatHourMs);
    auto add = [&](std::string dimension) {
        out.push_back(StatBump{.account_id = email.account_id,
                               .hour = hour,
                               .dimension = std::move(dimension),
                               .kind = kind,
                               .count = 1});
    };
    add("");
    if (!email.domain_id.empty()) add(domain_dimension(email.domain_id));
    for (const auto& t : email.tags) add(tag_dimension(t));
    return out;
}

std::vector<StatBump> accepted_stats(const Email& email) {
    return stat_bumps(email, StatKind::accepted, email.created_at);
}

namespace {

StatKind bounce_kind(const Email& before, const EmailChange& change) {
    // The class of the first bounced recipient, as the change leaves them.
    for (const auto& r : before.recipients) {
        auto status = r.status;
        auto bounce = r.bounce;
        if (auto it = std::find_if(change.recipients.begin(), change.recipients.end(),
                                   [&](const RecipientChange& c) { return c.id == r.id; });
            it != change.recipients.end()) {
            status = it->status;
            bounce = it->bounce;
        }
        if (status != RecipientStatus::bounced) continue;
        switch (bounce ? bounce->type : BounceType::undetermined) {
            case BounceType::hard:
                return StatKind::bounced_hard;
            case BounceType::soft:
                return StatKind::bounced_soft;
            case BounceType::block:
                return StatKind::bounced_block;
            case BounceType::undetermined:
                return StatKind::bounced_undetermined;
        }
    }
    return StatKind::bounced_undetermined;
}

}  // namespace

std::vector<StatKind> stat_kinds(const Email& before, const EmailChange& change) {
    std::vector<StatKind> out;
    if (change.status != before.status) {
        switch (change.status) {
            case EmailStatus::delivered:
                out.push_back(StatKind::delivered);
                break;
            case EmailStatus::bounced:
                out.push_back(bounce_kind(before, change));
                break;
            case EmailStatus::complained:
                out.push_back(StatKind::complained);
                break;
            case EmailStatus::failed:
                out.push_back(StatKind::failed);
                break;
            case EmailStatus::blocked:
                out.push_back(StatKind::blocked);
                break;
            case EmailStatus::queued:
            case EmailStatus::sent:
            case EmailStatus::scheduled:
            case EmailStatus::canceled:
                break;
        }
    }
    if (change.opened_at && !before.opened_at) out.push_back(StatKind::opened);
    if (change.clicked_at && !before.clicked_at) out.push_back(StatKind::clicked);
    return out;
}

void count_change(const Email& before, EmailChange& change) {
    for (const auto kind : stat_kinds(before, change)) {
        auto bumps = stat_bumps(before, kind, change.at);
        change.stats.insert(change.stats.end(), std::make_move_iterator(bumps.begin()),
                            std::make_move_iterator(bumps.end()));
    }
}

std::variant<StatWindow, StatWindowError> stat_window(StatInterval interval,
                                                      std::optional<UnixMs> from,
                                                      std::optional<UnixMs> to, UnixMs now) {
    StatWindow w{.interval = interval,
                 .width = interval == StatInterval::hour ? kStatHourMs : kStatDayMs};
    const UnixMs span = interval == StatInterval::hour ? 24 * kStatHourMs : 30 * kStatDayMs;
    auto ceil = [&](UnixMs t) {
        const auto f = stat_floor(t, w.width);
        return f == t ? t : f + w.width;
    };
    w.to = to ? ceil(*to) : stat_floor(now, w.width) + w.width;
    w.from = from ? stat_floor(*from, w.width) : w.to - span;
    if (from && to && *from >= *to) return StatWindowError{"from", "from must be before to"};
    if (w.from >= w.to) return StatWindowError{"from", "from must be before to"};
    if (w.buckets() > kMaxStatBuckets)
        return StatWindowError{"to", "from and to span " + std::to_string(w.buckets()) + " " +
                                         (interval == StatInterval::hour ? "hours" : "days") +
                                         "; at most " + std::to_string(kMaxStatBuckets) +
                                         " buckets are answered at once"};
    return w;
}

std::int64_t StatCounts::bounced() const {
    return (*this)[StatKind::bounced_hard] + (*this)[StatKind::bounced_soft] +
           (*this)[StatKind::bounced_block] + (*this)[StatKind::bounced_undetermined];
}

}  // namespace posthorn::domain
