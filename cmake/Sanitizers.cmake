# make test SANITIZE=address,undefined  ->  -DPH_SANITIZE=address,undefined
set(PH_SANITIZE "" CACHE STRING "Comma-separated sanitizers (address, undefined, thread)")
if(PH_SANITIZE)
  string(REPLACE "," ";" _ph_sans "${PH_SANITIZE}")
  foreach(san ${_ph_sans})
    add_compile_options(-fsanitize=${san} -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${san})
  endforeach()
  # GCC's -Wmaybe-uninitialized sees the sanitizers' instrumentation and raises false
  # positives in inlined library code (Beast's parser in core/beast_impl.cpp, as boost::none).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()

# make fuzz  ->  clang, -DPH_FUZZ=ON (tests/fuzz/CMakeLists.txt): libFuzzer's coverage
# instrumentation everywhere; the fuzz targets link libFuzzer itself.
option(PH_FUZZ "Build tests/fuzz for libFuzzer (clang only)" OFF)
if(PH_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
