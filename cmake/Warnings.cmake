# Warnings as errors on our own targets only; third-party headers come in as SYSTEM includes.
set(PH_WARNINGS -Wall -Wextra -Wpedantic -Werror -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND PH_WARNINGS
    # GCC 12 false positive on Asio's recycling allocator for coroutine frames at -O2+.
    -Wno-mismatched-new-delete
    # GCC 12 false positive (PR 105329) on std::string concatenation at -O2+.
    -Wno-restrict)
endif()
function(ph_warnings target)
  target_compile_options(${target} PRIVATE ${PH_WARNINGS})
endfunction()
