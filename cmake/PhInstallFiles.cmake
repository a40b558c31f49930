# Runs at install time (install(SCRIPT) of cmake/PhInstall.cmake), when CMAKE_INSTALL_PREFIX
# is the prefix of this install and $ENV{DESTDIR} its staging root.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(SYSCONFDIR "/etc")  # as GNUInstallDirs and Debian have it
else()
  set(SYSCONFDIR "${CMAKE_INSTALL_PREFIX}/etc")
endif()
set(BINDIR "${CMAKE_INSTALL_PREFIX}/bin")
set(UNITDIR "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")

# Files filled in for this prefix and root, apart from those of another install running at
# the same time (the package test runs `make install` and `make deb` side by side).
string(MD5 staged "$ENV{DESTDIR}|${CMAKE_INSTALL_PREFIX}")
set(staged "${PH_BINARY_DIR}/ph_install/${staged}")
file(MAKE_DIRECTORY "${staged}")
configure_file("${PH_PACKAGING_DIR}/posthorn.service.in" "${staged}/posthorn.service" @ONLY)
file(INSTALL DESTINATION "${UNITDIR}" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
     FILES "${staged}/posthorn.service")

# The configuration is the operator's once installed: an install over an existing one
# leaves it and puts the new example beside it.
set(config_dir "${SYSCONFDIR}/posthorn")
if(EXISTS "$ENV{DESTDIR}${config_dir}/posthorn.toml")
  configure_file("${PH_PACKAGING_DIR}/posthorn.toml" "${staged}/posthorn.toml.new" COPYONLY)
  message(STATUS "Keeping: $ENV{DESTDIR}${config_dir}/posthorn.toml (the example: posthorn.toml.new)")
  file(INSTALL DESTINATION "${config_dir}" TYPE FILE
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
       FILES "${staged}/posthorn.toml.new")
else()
  # World-readable as installed (it holds no secret yet); the Debian package makes it
  # root:posthorn 0640 in its postinst.
  file(INSTALL DESTINATION "${config_dir}" TYPE FILE
       PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
       FILES "${PH_PACKAGING_DIR}/posthorn.toml")
endif()
