// core/clock.hpp — the Clock seam (CONVENTIONS §9): production code asks a Clock for the
// time so that tests can hold it still or move it on (core/testing/manual_clock.hpp).
#pragma once

#include "core/time.hpp"

namespace posthorn::core {

class Clock {
  public:
    virtual ~Clock() = default;
    virtual UnixMs now_ms() const = 0;
};

class SystemClock final : public Clock {
  public:
    UnixMs now_ms() const override;
};

}  // namespace posthorn::core
