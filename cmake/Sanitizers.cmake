# make test SANITIZE=address,undefined  ->  -DPH_SANITIZE=address,undefined
set(PH_SANITIZE "" CACHE STRING "Comma-separated sanitizers (address, undefined, thread)")
if(PH_SANITIZE)
  string(REPLACE "," ";" _ph_sans "${PH_SANITIZE}")
  foreach(san ${_ph_sans})
    add_compile_options(-fsanitize=${san} -fno-omit-frame-pointer)
    add_link_options(-fsanitize=${san})
  endforeach()
endif()
