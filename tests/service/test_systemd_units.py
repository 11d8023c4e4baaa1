#!/usr/bin/python3
"""systemd-analyze verify on the shipped units (label unit).

  test_systemd_units.py UNIT_DIR REALTIME_DROPIN

UNIT_DIR holds eigstream.service and eigstream@.service generated for this
build tree (ExecStart names the built daemon, which verify requires to be
executable). The oracle is systemd's own unit parser: verify must print
nothing for both units, each with the real-time drop-in, and for an
instance of the template. A control copy with one misspelt key must be
reported, so that a verifier that reads nothing cannot pass. The units must
also say what README promises (Type=notify, the watchdog, the hardening).
Exit 77 (skipped) without systemd-analyze.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from service_util import check, finish

UNIT_DIR, DROPIN = sys.argv[1], sys.argv[2]


def verify(unit_path_dir, *units):
    env = dict(os.environ, SYSTEMD_UNIT_PATH=unit_path_dir + ":")
    r = subprocess.run(["systemd-analyze", "verify", "--man=false", *units], env=env, capture_output=True,
                       text=True, timeout=60)
    return r.returncode, (r.stdout + r.stderr).strip()


def settings(path):
    """Key=value lines of a unit file (repeated keys kept in order)."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", "[")) and "=" in line:
                key, value = line.split("=", 1)
                out.setdefault(key, []).append(value)
    return out


def main():
    if shutil.which("systemd-analyze") is None:
        print("skipped: systemd-analyze not found (apt-get install systemd)")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="eigstream-units-")
    for unit in ("eigstream.service", "eigstream@.service"):
        shutil.copy(os.path.join(UNIT_DIR, unit), tmp)
        os.makedirs(os.path.join(tmp, unit + ".d"))
        shutil.copy(DROPIN, os.path.join(tmp, unit + ".d", "realtime.conf"))
    rc, out = verify(tmp, "eigstream.service", "eigstream@site1.service")
    check(rc == 0 and out == "", f"systemd-analyze verify: exit {rc}: {out}")

    # The control: a misspelt key in a copy must be reported.
    bad = os.path.join(tmp, "control")
    os.makedirs(bad)
    with open(os.path.join(tmp, "eigstream.service")) as f:
        text = f.read()
    with open(os.path.join(bad, "eigstream.service"), "w") as f:
        f.write(text.replace("ProtectHome=yes", "ProtectHoem=yes"))
    rc, out = verify(bad, "eigstream.service")
    check("Unknown key" in out and "ProtectHoem" in out, f"control not reported by verify: {out!r}")

    for unit in ("eigstream.service", "eigstream@.service"):
        s = settings(os.path.join(UNIT_DIR, unit))
        for key, value in [("Type", "notify"), ("Restart", "on-failure"), ("NoNewPrivileges", "yes"),
                           ("ProtectSystem", "strict"), ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                           ("CapabilityBoundingSet", ""), ("RestrictRealtime", "yes"),
                           ("ExecReload", "/bin/kill -HUP $MAINPID")]:
            check(s.get(key) == [value], f"{unit}: {key}={s.get(key)}, want {value!r}")
        check("WatchdogSec" in s, f"{unit}: no WatchdogSec")
        check(s.get("RestrictAddressFamilies", [""])[0].split() == ["AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"],
              f"{unit}: RestrictAddressFamilies={s.get('RestrictAddressFamilies')}")
    template = settings(os.path.join(UNIT_DIR, "eigstream@.service"))
    check(template["ExecStart"][0].endswith("/%i.cfg"), f"template ExecStart {template['ExecStart']}")
    dropin = settings(DROPIN)
    check(sorted(dropin.get("AmbientCapabilities", [""])[0].split()) == ["CAP_IPC_LOCK", "CAP_SYS_NICE"],
          f"drop-in capabilities {dropin.get('AmbientCapabilities')}")
    finish("systemd units")


if __name__ == "__main__":
    main()
