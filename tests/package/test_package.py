"""Packaging (issue 28, point 6): `make install` and `make deb` from the built binary.

- `make install DESTDIR=… PREFIX=…` puts the binary, the example configuration and the
  systemd unit where they belong for the prefix, and keeps an operator's configuration.
- `make deb` builds a package whose files, conffiles, control fields and maintainer scripts
  are the expected ones; the postinst, run against stand-ins for the system's tools, makes
  the posthorn system user and its data dir; `systemd-analyze verify` accepts its unit,
  which is hardened as docs/operations.md says; its configuration loads.

Run by ctest as `package` (label `package`) with PH_BUILD_DIR, the build directory."""
from __future__ import annotations

import os
import pathlib
import shutil
import stat
import subprocess

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("PH_BUILD_DIR") or SRC / "build")
UNIT = "usr/lib/systemd/system/posthorn.service"


def make(*args: str) -> subprocess.CompletedProcess:
    """The Makefile's target, on the build directory ctest runs from (its `build` step is
    then up to date); not part of a make of the caller's (make test)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "DESTDIR")}
    r = subprocess.run(["make", "-s", "-C", str(SRC), f"BUILD_DIR={BUILD}", *args], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def version() -> str:
    out = subprocess.run([str(BUILD / "posthorn"), "--version"], capture_output=True, text=True,
                         check=True).stdout
    return out.split()[1]


def unit_directives(path: pathlib.Path) -> dict[str, list[str]]:
    """`Key` → its values in order (systemd allows a key more than once), over all sections."""
    out: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        out.setdefault(key.strip(), []).append(value.strip())
    return out


def one(d: dict[str, list[str]], key: str) -> str:
    values = d.get(key, [])
    assert len(values) == 1, f"{key}: {values}"
    return values[0]


def test_make_install_places_the_files_for_the_prefix(tmp_path):
    root = tmp_path / "x"
    make("install", f"DESTDIR={root}", "PREFIX=/usr")
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if not p.is_dir())
    assert files == ["etc/posthorn/posthorn.toml", "usr/bin/posthorn", UNIT]
    binary = root / "usr/bin/posthorn"
    assert binary.stat().st_mode & stat.S_IXUSR
    assert subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                          check=True).stdout == f"posthorn {version()}\n"
    assert (root / "etc/posthorn/posthorn.toml").read_bytes() == \
        (SRC / "packaging/posthorn.toml").read_bytes()
    unit = unit_directives(root / UNIT)
    assert one(unit, "ExecStart") == "/usr/bin/posthorn --config /etc/posthorn/posthorn.toml serve"

    # Another prefix: the configuration under it, the unit pointing there.
    local = tmp_path / "local"
    make("install", f"DESTDIR={local}", "PREFIX=/usr/local")
    assert (local / "usr/local/bin/posthorn").exists()
    assert (local / "usr/local/etc/posthorn/posthorn.toml").exists()
    assert one(unit_directives(local / "usr/local/lib/systemd/system/posthorn.service"),
               "ExecStart") == \
        "/usr/local/bin/posthorn --config /usr/local/etc/posthorn/posthorn.toml serve"

    # Installing again keeps the operator's configuration; the example goes beside it.
    config = root / "etc/posthorn/posthorn.toml"
    config.write_text('[server]\ndata_dir = "/srv/mail"\n')
    r = make("install", f"DESTDIR={root}", "PREFIX=/usr")
    assert config.read_text() == '[server]\ndata_dir = "/srv/mail"\n'
    assert (root / "etc/posthorn/posthorn.toml.new").read_bytes() == \
        (SRC / "packaging/posthorn.toml").read_bytes()
    assert "Keeping:" in r.stdout + r.stderr


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    r = make("deb", f"DEB_DIR={out}")
    path = pathlib.Path(r.stdout.strip().splitlines()[-1])
    assert path == out / f"posthorn_{version()}_{arch()}.deb"
    assert path.exists()
    return path


def arch() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def dpkg_deb(*args) -> str:
    return subprocess.run(["dpkg-deb", *map(str, args)], capture_output=True, text=True,
                          check=True).stdout


def test_the_package_holds_the_expected_files(deb):
    listing = dpkg_deb("-c", deb).splitlines()
    files = sorted(line.split()[-1] for line in listing if not line.startswith("d"))
    assert files == ["./etc/posthorn/posthorn.toml", "./usr/bin/posthorn", f"./{UNIT}"]
    owners = {line.split()[1] for line in listing}
    assert owners == {"root/root"}, "files owned by root, whoever built it"
    fields = {k: dpkg_deb("-f", deb, k).strip() for k in
              ("Package", "Version", "Architecture", "Section", "Depends", "Maintainer")}
    assert fields["Package"] == "posthorn"
    assert fields["Version"] == version()
    assert fields["Architecture"] == arch()
    assert fields["Section"] == "mail"
    depends = [d.strip().split()[0] for d in fields["Depends"].split(",")]
    # publicsuffix: the list DMARC's organizational domains are read from (mail/auth.cpp);
    # libspf2-2, libopendkim11, libopendmarc2: the inbound checks, through dpkg-shlibdeps.
    for needed in ("adduser", "init-system-helpers", "procps", "libc6", "libssl3",
                   "libsqlite3-0", "libpq5", "publicsuffix", "libspf2-2", "libopendkim11",
                   "libopendmarc2"):
        assert needed in depends, fields["Depends"]


def test_conffiles_and_maintainer_scripts(deb, tmp_path):
    control = tmp_path / "control"
    subprocess.run(["dpkg-deb", "-e", str(deb), str(control)], check=True)
    assert (control / "conffiles").read_text() == "/etc/posthorn/posthorn.toml\n"
    for script in ("postinst", "prerm", "postrm"):
        path = control / script
        assert path.stat().st_mode & 0o777 == 0o755, script
        assert path.read_text().startswith("#!/bin/sh\n")
        subprocess.run(["sh", "-n", str(path)], check=True)  # parses
    md5sums = (control / "md5sums").read_text()
    assert "usr/bin/posthorn" in md5sums and "etc/posthorn/posthorn.toml" in md5sums


def fake_tools(tmp_path: pathlib.Path, user_exists: bool) -> tuple[pathlib.Path, pathlib.Path]:
    """Stand-ins for the tools the maintainer scripts call, each logging its arguments."""
    bin_dir, log = tmp_path / "fakebin", tmp_path / "calls.log"
    bin_dir.mkdir(parents=True)
    for tool in ("adduser", "install", "chown", "chmod", "deb-systemd-helper",
                 "deb-systemd-invoke", "systemctl", "dpkg-statoverride", "getent"):
        rc = {"getent": 0 if user_exists else 2, "dpkg-statoverride": 1}.get(tool, 0)
        # deb-systemd-helper was-enabled: not yet (a first install).
        if tool == "deb-systemd-helper":
            body = f'echo "{tool} $*" >> {log}\n[ "$2" = was-enabled ] && exit 1\nexit 0\n'
        else:
            body = f'echo "{tool} $*" >> {log}\nexit {rc}\n'
        (bin_dir / tool).write_text("#!/bin/sh\n" + body)
        (bin_dir / tool).chmod(0o755)
    return bin_dir, log


def run_script(control: pathlib.Path, script: str, bin_dir: pathlib.Path, *args) -> None:
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    subprocess.run(["sh", str(control / script), *args], env=env, check=True, timeout=30)


def test_postinst_makes_the_system_user_and_enables_the_service(deb, tmp_path):
    control = tmp_path / "control"
    subprocess.run(["dpkg-deb", "-e", str(deb), str(control)], check=True)
    bin_dir, log = fake_tools(tmp_path, user_exists=False)
    run_script(control, "postinst", bin_dir, "configure")
    calls = log.read_text().splitlines()
    assert "getent passwd posthorn" in calls
    assert ("adduser --quiet --system --group --home /var/lib/posthorn --no-create-home "
            "--gecos posthorn mail service posthorn") in calls
    if not pathlib.Path("/var/lib/posthorn").is_dir():
        assert "install -d -o posthorn -g posthorn -m 0750 /var/lib/posthorn" in calls
    assert "chown root:posthorn /etc/posthorn/posthorn.toml" in calls
    assert "chmod 0640 /etc/posthorn/posthorn.toml" in calls
    assert "deb-systemd-helper enable posthorn.service" not in calls  # was-enabled said no
    assert "deb-systemd-helper update-state posthorn.service" in calls

    # An upgrade: the user exists; nothing is made again.
    bin2, log2 = fake_tools(tmp_path / "again", user_exists=True)
    run_script(control, "postinst", bin2, "configure", "0.0.9")
    assert not any(c.startswith("adduser") for c in log2.read_text().splitlines())

    # Purge forgets the service (postrm asks for /usr/bin/deb-systemd-helper itself: the
    # package depends on init-system-helpers, which has it).
    bin3, log3 = fake_tools(tmp_path / "rm", user_exists=True)
    run_script(control, "postrm", bin3, "purge")
    assert "deb-systemd-helper purge posthorn.service" in log3.read_text().splitlines()


def extracted(deb, tmp_path) -> pathlib.Path:
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return root


def test_the_unit_is_hardened(deb, tmp_path):
    unit = unit_directives(extracted(deb, tmp_path) / UNIT)
    expected = {
        "Type": "simple", "User": "posthorn", "Group": "posthorn",
        "ExecStart": "/usr/bin/posthorn --config /etc/posthorn/posthorn.toml serve",
        "ExecReload": "/bin/kill -HUP $MAINPID", "Restart": "on-failure",
        "NoNewPrivileges": "yes", "ProtectSystem": "strict",
        "ReadWritePaths": "/var/lib/posthorn", "StateDirectory": "posthorn",
        "PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectHome": "yes",
        "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
        "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes",
        "AmbientCapabilities": "CAP_NET_BIND_SERVICE",
        "CapabilityBoundingSet": "CAP_NET_BIND_SERVICE",
        "RestrictAddressFamilies": "AF_UNIX AF_INET AF_INET6",
        "WantedBy": "multi-user.target",
    }
    for key, value in expected.items():
        assert one(unit, key) == value, key
    assert int(one(unit, "LimitNOFILE")) >= 65536
    assert "User" in unit and "DynamicUser" not in unit


def test_systemd_analyze_verify_accepts_the_unit(deb, tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze is missing: scripts/install-deps.sh installs systemd")
    root = extracted(deb, tmp_path)
    # The unit as installed, but for the path of its binary, which is not in /usr/bin on
    # the machine that builds the package: verify checks that ExecStart's file exists.
    text = (root / UNIT).read_text()
    assert "ExecStart=/usr/bin/posthorn " in text
    units = tmp_path / "units"
    units.mkdir()
    unit = units / "posthorn.service"
    unit.write_text(text.replace("ExecStart=/usr/bin/posthorn ",
                                 f"ExecStart={root}/usr/bin/posthorn "))

    def verify(path):
        r = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True,
                           text=True, timeout=60)
        ours = [line for line in (r.stdout + r.stderr).splitlines() if "posthorn" in line]
        return r.returncode, ours

    rc, complaints = verify(unit)
    assert rc == 0 and complaints == [], complaints
    # The check is real: a misspelt directive is reported.
    bad = units / "posthorn-bad.service"
    bad.write_text(unit.read_text().replace("ProtectHome=yes", "ProtectHome=yes\nProtectHomes=yes"))
    _, complaints = verify(bad)
    assert any("Unknown key 'ProtectHomes'" in line for line in complaints), complaints


def test_the_packaged_configuration_loads(deb, tmp_path):
    root = extracted(deb, tmp_path)
    if pathlib.Path("/var/lib/posthorn/posthorn.db").exists():
        pytest.skip("this machine has an install in /var/lib/posthorn")
    r = subprocess.run([str(root / "usr/bin/posthorn"), "--config",
                        str(root / "etc/posthorn/posthorn.toml"), "dns", "zone"],
                       capture_output=True, text=True, timeout=60)
    # Exit 1, not 2 (a bad configuration): the file loads, and names the data dir.
    assert r.returncode == 1, r.stderr
    assert r.stderr == ("posthorn: no database at /var/lib/posthorn/posthorn.db; "
                        "is --config / data_dir right?\n")
