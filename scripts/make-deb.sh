#!/usr/bin/env bash
# `make deb`: a Debian package of the built binary, made of exactly what `make install`
# installs with PREFIX=/usr (cmake/PhInstall.cmake), plus the maintainer scripts and the
# control files of packaging/deb/. dpkg-deb builds it (--root-owner-group: no fakeroot);
# its Depends come from the binary's libraries (dpkg-shlibdeps). Prints the package's path.
#   scripts/make-deb.sh [BUILD_DIR [OUT_DIR]]     (defaults: build, BUILD_DIR)
#   DEB_MAINTAINER="Name <mail>" sets the Maintainer field.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-build}")
out=$(realpath -m "${2:-$build}")
bin=$build/posthorn
if [[ ! -x $bin ]]; then
  echo "make-deb: no $bin: build first (make build)" >&2
  exit 1
fi
version=$("$bin" --version | awk '{print $2}')  # "posthorn 0.1.0"
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-posthorn developers <posthorn@example.invalid>}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/debian/posthorn  # where dpkg-shlibdeps expects a package's files
DESTDIR=$root cmake --install "$build" --prefix /usr >/dev/null
strip --strip-unneeded "$root/usr/bin/posthorn"

mkdir -m 0755 "$root/DEBIAN"
install -m 0755 "$src"/packaging/deb/{postinst,prerm,postrm} "$root/DEBIAN/"
# dpkg keeps an operator's edits of a conffile across upgrades, and asks before replacing.
echo /etc/posthorn/posthorn.toml >"$root/DEBIAN/conffiles"
# dpkg-shlibdeps wants a debian/control in its working directory.
printf 'Source: posthorn\n\nPackage: posthorn\nArchitecture: any\n' >"$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O "$root/usr/bin/posthorn" | sed -n 's/^shlibs:Depends=//p')
if [[ -z $shlibs ]]; then
  echo "make-deb: dpkg-shlibdeps found no dependencies of $bin" >&2
  exit 1
fi
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
  -e "s|@INSTALLED_SIZE@|$size|" -e "s|@SHLIBS@|$shlibs|" \
  "$src/packaging/deb/control.in" >"$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
  xargs -0 md5sum) >"$root/DEBIAN/md5sums"

mkdir -p "$out"
deb=$out/posthorn_${version}_${arch}.deb
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
echo "$deb"
