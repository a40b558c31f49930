# `make install` (cmake --install build --prefix PREFIX, DESTDIR honoured): the binary, the
# example configuration and the systemd unit. The unit and the configuration's place depend
# on the prefix chosen at install time (--prefix), not at configure time, so they are
# written by cmake/PhInstallFiles.cmake when the install runs:
#
#   PREFIX/bin/posthorn
#   SYSCONFDIR/posthorn/posthorn.toml            SYSCONFDIR: /etc for PREFIX /usr, else PREFIX/etc
#   PREFIX/lib/systemd/system/posthorn.service   ExecStart=PREFIX/bin/posthorn --config …
#
# scripts/make-deb.sh packages exactly what this installs with PREFIX /usr.
install(TARGETS posthorn RUNTIME DESTINATION bin)
install(CODE "set(PH_PACKAGING_DIR \"${PROJECT_SOURCE_DIR}/packaging\")
set(PH_BINARY_DIR \"${PROJECT_BINARY_DIR}\")")
install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/PhInstallFiles.cmake)
