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
  add_compile_options(-Wno-maybe-uninitialized)
endif()
