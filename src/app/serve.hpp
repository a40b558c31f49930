// app/serve.hpp — `posthorn serve`: wires the store, the API and the HTTP server on an
// IoPool, runs the background jobs, and shuts down in order on SIGTERM/SIGINT.
#pragma once

#include "app/config.hpp"

namespace posthorn::app {

// Returns the process exit code (0 after a clean shutdown).
int serve(const Config& config);

}  // namespace posthorn::app
