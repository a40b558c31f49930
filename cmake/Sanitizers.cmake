# make test SANITIZE=address,undefined  ->  -DPH_SANITIZE=address,undefined
set(PH_SANITIZE "" CACHE STRING "Comma-separated sanitizers (address, undefined, thread)")
if(PH_SANITIZE)
  string(REPLACE "," ";" _ph_sans "${PH_SANITIZE}")
  foreach(san ${_ph_sans})
    add_compile_options(-fsanitize=${san} -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${san})
  endforeach()
  # Every UBSan finding ends the process (exit code 1 or an abort), so a test fails on it
  # instead of printing and carrying on.
  add_compile_options(-fno-sanitize-recover=all)
  # The sanitizer build is for finding bugs, not for speed: -O1 (what ASan recommends)
  # instead of Release's -O3 takes a third of the CPU time to compile (docs/testing.md).
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    add_compile_options(-O1)
  endif()
  # GCC's -Wmaybe-uninitialized sees the sanitizers' instrumentation and raises false
  # positives in inlined library code (Beast's parser in core/beast_impl.cpp, as boost::none).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()

# The environment of every test of a sanitizer build, set once for the whole ctest run (a
# TEST_INCLUDE_FILES script runs in ctest before any test): LeakSanitizer on (the default on
# Linux, said once more; the integration tests pass it on to the posthorn processes they
# start and check their exit codes), a few stricter ASan checks that cost little, and UBSan's
# stack traces. Options already in the environment come after ours, and win.
if(PH_SANITIZE)
  set(_ph_asan "detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1")
  set(_ph_ubsan "halt_on_error=1:print_stacktrace=1")
  file(WRITE ${CMAKE_BINARY_DIR}/sanitizer_env.cmake
    "set(ENV{ASAN_OPTIONS} \"${_ph_asan}:\$ENV{ASAN_OPTIONS}\")\n"
    "set(ENV{UBSAN_OPTIONS} \"${_ph_ubsan}:\$ENV{UBSAN_OPTIONS}\")\n")
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY TEST_INCLUDE_FILES
               ${CMAKE_BINARY_DIR}/sanitizer_env.cmake)
endif()

# make fuzz  ->  clang, -DPH_FUZZ=ON (tests/fuzz/CMakeLists.txt): libFuzzer's coverage
# instrumentation everywhere; the fuzz targets link libFuzzer itself.
option(PH_FUZZ "Build tests/fuzz for libFuzzer (clang only)" OFF)
if(PH_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
