// app/commands.hpp — the operator's CLI (DESIGN §1). Each works on the data dir of the
// config, also while a server runs on it, and returns the exit code.
#pragma once

#include <string>

#include "app/config.hpp"

namespace posthorn::app {

int account_create(const Config& config, const std::string& name);
// `test`: a test-mode key (domain/test_mode.hpp), whose mail is never delivered.
int key_create(const Config& config, const std::string& account_name, bool test = false);
int key_list(const Config& config, const std::string& account_name);
int key_revoke(const Config& config, const std::string& key_id);
// `posthorn dns zone`: the DKIM TXT records the operator's DNS serves under dns.dkim_zone.
int dns_zone(const Config& config);

}  // namespace posthorn::app
