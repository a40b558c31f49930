#include "http/router.hpp"

namespace posthorn::http {
namespace {

std::vector<std::string_view> split(std::string_view path) {
    std::vector<std::string_view> out;
    if (path.empty() || path.front() != '/') return out;
    path.remove_prefix(1);
    for (;;) {
        const auto slash = path.find('/');
        out.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    return out;
}

bool is_placeholder(std::string_view s) {
    return s.size() > 2 && s.front() == '{' && s.back() == '}';
}

}  // namespace

std::size_t Router::add(std::string method, std::string_view pattern) {
    Route r{std::move(method), {}};
    for (auto seg : split(pattern)) r.segments.emplace_back(seg);
    routes_.push_back(std::move(r));
    return routes_.size() - 1;
}

Router::Match Router::match(std::string_view method, std::string_view path) const {
    Match m;
    const auto segs = split(path);
    if (segs.empty()) return m;
    for (std::size_t i = 0; i < routes_.size(); ++i) {
        const auto& r = routes_[i];
        if (r.segments.size() != segs.size()) continue;
        std::vector<std::pair<std::string, std::string>> params;
        bool ok = true;
        for (std::size_t j = 0; j < segs.size() && ok; ++j) {
            const auto& want = r.segments[j];
            if (is_placeholder(want)) {
                ok = !segs[j].empty();
                params.emplace_back(want.substr(1, want.size() - 2), segs[j]);
            } else {
                ok = want == segs[j];
            }
        }
        if (!ok) continue;
        m.path_known = true;
        if (r.method == method) {
            m.route = i;
            m.params = std::move(params);
            m.allowed.clear();
            return m;
        }
        if (m.allowed.find(r.method) == std::string::npos) {
            if (!m.allowed.empty()) m.allowed += ", ";
            m.allowed += r.method;
        }
    }
    return m;
}

}  // namespace posthorn::http
