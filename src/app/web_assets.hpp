// app/web_assets.hpp — the dashboard's static files (web/, built by `node web/build.mjs`),
// compiled into the binary at build time by cmake/PhWebAssets.cmake: the table that
// api::DashboardOptions::files serves. Nothing is read from disk at run time.
#pragma once

#include <span>

#include "api/dashboard.hpp"

namespace posthorn::app {

std::span<const api::StaticFile> web_assets();

}  // namespace posthorn::app
