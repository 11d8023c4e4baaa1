#!/usr/bin/python3
"""The .deb from `cpack -G DEB`, checked with dpkg's own tools.

usage: test_deb.py BUILD SOURCE SCRATCH

1. cpack makes exactly eigstream_<version>_<arch>.deb (arch: dpkg --print-architecture).
2. dpkg-deb -I: the control fields; Depends names the Debian 12 package of
   every shared library an ELF file of the package needs (owner by dpkg -S)
   and python3-numpy; /etc/eigstream/eigstream.cfg is a conffile; a shlibs
   line for libeigstream-eig.so.2.
3. dpkg-deb -c: the daemon and every tool in /usr/bin, the library, header,
   CMake and pkg-config packages, the Python package, the configuration in
   /etc (nothing under /usr/local or /usr/etc).
4. dpkg -x into a scratch root: the daemon's --version and --help, every
   tool's --help (eigstream-bench record defaulting to the sim and replay
   beside it), --check-config on the shipped configuration; the consumer
   (test_install.py consumer) and the Python tests against that root.
5. dpkg --root on a scratch root with its own database (maintainer scripts
   outside a chroot; ldconfig, systemd-sysusers and systemctl replaced by
   stubs that record their calls): install registers the conffile and runs
   systemd-sysusers on the scratch root for eigstream.conf (the units' user),
   and no script calls ldconfig (the package activates libc-bin's ldconfig
   trigger instead: test_lintian.py); remove deletes the files and keeps an
   edited conffile; purge deletes the conffile. Nothing is installed on this
   machine.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from deb_checks import check, failures, run

BUILD, SOURCE, SCRATCH = (os.path.abspath(p) for p in sys.argv[1:4])
HERE = os.path.dirname(os.path.abspath(__file__))


def make_deb():
    out = os.path.join(SCRATCH, "cpack")
    run(["cpack", "-G", "DEB", "--config", os.path.join(BUILD, "CPackConfig.cmake"), "-B", out])
    version = re.search(r"project\(eigstream VERSION ([\d.]+)",
                        open(os.path.join(SOURCE, "CMakeLists.txt")).read()).group(1)
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    debs = glob.glob(os.path.join(out, "*.deb"))
    expected = os.path.join(out, f"eigstream_{version}_{arch}.deb")
    check(debs == [expected], f"cpack made {debs}, expected {expected}")
    return expected, version, arch


def field(info, name):
    m = re.search(rf"^ {name}: (.*)$", info, re.M)
    return m.group(1).strip() if m else ""


def owner_of(soname):
    """(package, path): the installed Debian package that holds soname (via
    the loader's cache and dpkg -S on the resolved file), without an
    alternatives flavour suffix, and the file; package None when no package
    owns it, path None when the loader does not know it."""
    cache = run(["ldconfig", "-p"]).stdout
    m = re.search(rf"^\s*{re.escape(soname)} \(libc6,x86-64\) => (\S+)", cache, re.M)
    if not m:
        return None, None
    for path in (m.group(1), os.path.realpath(m.group(1))):
        r = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if r.returncode == 0:
            pkg = r.stdout.split(":")[0]
            return re.sub(r"-(pthread|openmp|serial)$", "", pkg), path
    return None, os.path.realpath(m.group(1))


CUDA_LIBRARIES = re.compile(r"^lib(cudart|cublas|cublasLt|cufft|cusolver|cusparse|nvJitLink)\.so\.")


def from_cuda_toolkit(soname, path):
    """A CUDA runtime library that no Debian package owns here: NVIDIA's CUDA
    Toolkit installed outside dpkg (/usr/local/cuda...). A CUDA build's .deb
    cannot name a package for it; the README's Install section says that the
    target machine needs NVIDIA's CUDA runtime libraries."""
    return bool(CUDA_LIBRARIES.match(soname)) and path is not None and "/cuda" in path


def check_control(deb, version, arch, root):
    info = run(["dpkg-deb", "-I", deb]).stdout
    check(field(info, "Package") == "eigstream", "Package field")
    check(field(info, "Version") == version, f"Version {field(info, 'Version')}")
    check(field(info, "Architecture") == arch, f"Architecture {field(info, 'Architecture')}")
    depends = {d.split()[0] for d in field(info, "Depends").split(",") if d.strip()}
    for pkg in ("python3", "python3-numpy", "libzmq5", "libconfig9", "liblapacke", "libgomp1"):
        check(pkg in depends, f"Depends lacks {pkg}: {sorted(depends)}")
    needed = set()
    for f in glob.glob(os.path.join(root, "usr", "**", "*"), recursive=True):
        if os.path.isfile(f) and not os.path.islink(f) and open(f, "rb").read(4) == b"\x7fELF":
            needed |= set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                                     run(["readelf", "-d", f]).stdout))
    for soname in sorted(needed - {"libeigstream-eig.so.2"}):
        pkg, path = owner_of(soname)
        if pkg is None and from_cuda_toolkit(soname, path):
            print(f"{soname}: from the CUDA Toolkit at {path}, no Debian package: not in Depends")
            continue
        check(pkg in depends, f"{soname} (package {pkg}) is needed but not in Depends {sorted(depends)}")
    control = os.path.join(SCRATCH, "control")
    shutil.rmtree(control, ignore_errors=True)
    run(["dpkg-deb", "-e", deb, control])
    conffiles = open(os.path.join(control, "conffiles")).read().split()
    check(conffiles == ["/etc/eigstream/eigstream.cfg"], f"conffiles {conffiles}")
    shlibs = open(os.path.join(control, "shlibs")).read().split()
    check(shlibs[:3] == ["libeigstream-eig", "2", "eigstream"], f"shlibs {shlibs}")


def check_contents(deb, programs):
    listing = run(["dpkg-deb", "-c", deb]).stdout
    paths = {line.split()[5].split(" -> ")[0] for line in listing.splitlines() if len(line.split()) >= 6}
    for p in programs:
        check(f"./usr/bin/{p}" in paths, f"./usr/bin/{p} not in the package")
    for want in ("./etc/eigstream/eigstream.cfg", "./usr/include/eigstream/eig.h",
                 "./usr/lib/python3/dist-packages/eigstream/__init__.py",
                 "./usr/lib/python3/dist-packages/eigstream_client.py",
                 "./usr/share/doc/eigstream/README.md"):
        check(want in paths, f"{want} not in the package")
    for pattern in (r"\./usr/lib/(.+/)?libeigstream-eig\.so\.2$", r"\./usr/lib/(.+/)?libeigstream-eig\.a$",
                    r"\./usr/lib/(.+/)?pkgconfig/eigstream-eig\.pc$",
                    r"\./usr/lib/(.+/)?cmake/eigstream/eigstream-config\.cmake$"):
        check(any(re.match(pattern, p) for p in paths), f"no {pattern} in the package")
    stray = sorted(p for p in paths if p.startswith(("./usr/local", "./usr/etc")))
    check(not stray, f"files outside the FHS places: {stray}")


def check_extracted(deb, version):
    root = os.path.join(SCRATCH, "root")
    shutil.rmtree(root, ignore_errors=True)
    run(["dpkg", "-x", deb, root])
    bindir = os.path.join(root, "usr", "bin")
    r = run([os.path.join(bindir, "eigstream"), "--version"])
    check(r.stdout.startswith(f"eigstream {version}"), f"eigstream --version: {r.stdout!r}")
    programs = sorted(os.listdir(bindir))
    for p in programs:
        r = run([os.path.join(bindir, p), "--help"])
        check("usage:" in r.stdout, f"{p} --help: no usage line")
    # The bench's record mode runs the sim and replay installed beside it.
    r = run([os.path.join(bindir, "eigstream-bench"), "record", "--help"])
    check(f"(default {bindir}/eigstream-sim)" in r.stdout and f"(default {bindir}/eigstream-replay)" in r.stdout,
          f"eigstream-bench record does not default to the installed sim and replay:\n{r.stdout}")
    run([os.path.join(bindir, "eigstream"), "--check-config", os.path.join(root, "etc", "eigstream", "eigstream.cfg")])
    python = os.path.join(root, "usr", "lib", "python3", "dist-packages")
    env = dict(os.environ, PYTHONPATH=python, EIGSTREAM_LIB="", OMP_NUM_THREADS="2")
    r = run([sys.executable, os.path.join(HERE, "test_python_eigh.py"), os.path.join(SOURCE, "eig", "eig.h"),
             "--backends", "cpu", "--expect-lib-under", root], env=env, expect=None)
    check(r.returncode in (0, 77) and "all passed" in r.stdout, f"Python on the extracted root:\n{r.stdout[-1500:]}")
    r = run([sys.executable, os.path.join(HERE, "test_install.py"), "consumer", SOURCE, os.path.join(root, "usr"),
             os.path.join(SCRATCH, "consumer"), root])
    print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "consumer: no output")
    return root, programs


def check_dpkg_root(deb):
    root = os.path.join(SCRATCH, "dpkg-root")
    shutil.rmtree(root, ignore_errors=True)
    admin = os.path.join(root, "var", "lib", "dpkg")
    for d in ("info", "updates", "triggers"):
        os.makedirs(os.path.join(admin, d))
    open(os.path.join(admin, "status"), "w").close()
    stub = os.path.join(SCRATCH, "stub-bin")
    shutil.rmtree(stub, ignore_errors=True)
    os.makedirs(stub)
    calls = os.path.join(stub, "calls")
    for tool in ("ldconfig", "systemd-sysusers", "systemctl"):
        with open(os.path.join(stub, tool), "w") as f:
            f.write(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\n')
        os.chmod(os.path.join(stub, tool), 0o755)
    env = dict(os.environ, PATH=stub + os.pathsep + os.environ["PATH"])
    dpkg = ["dpkg", f"--root={root}", "--force-not-root", "--force-depends", "--force-script-chrootless"]

    def status():
        text = open(os.path.join(admin, "status")).read()
        m = re.search(r"^Package: eigstream\n(?:.+\n)*?Status: (.+)$", text, re.M)
        return (m.group(1) if m else None), text

    def stub_calls(tool):
        lines = open(calls).read().splitlines() if os.path.exists(calls) else []
        return [line for line in lines if line.split()[0] == tool]

    cfg = os.path.join(root, "etc", "eigstream", "eigstream.cfg")
    daemon = os.path.join(root, "usr", "bin", "eigstream")
    run(dpkg + ["-i", deb], env=env)
    state, text = status()
    check(state == "install ok installed", f"after dpkg -i: status {state}")
    check(re.search(r"^Conffiles:\n /etc/eigstream/eigstream.cfg [0-9a-f]{32}$", text, re.M) is not None,
          "the conffile is not registered")
    check(stub_calls("systemd-sysusers") == [f"systemd-sysusers --root={root} eigstream.conf"],
          f"postinst's systemd-sysusers calls: {stub_calls('systemd-sysusers')}")
    check(os.access(daemon, os.X_OK), "the daemon is not installed")
    with open(cfg, "a") as f:
        f.write("# edited on site\n")
    run(dpkg + ["-r", "eigstream"], env=env)
    state, _ = status()
    check(state == "deinstall ok config-files", f"after dpkg -r: status {state}")
    check(not os.path.exists(daemon), "dpkg -r left the daemon")
    check(os.path.isfile(cfg) and "edited on site" in open(cfg).read(), "dpkg -r did not keep the edited conffile")
    check(not stub_calls("ldconfig") and not stub_calls("systemctl"),
          f"a maintainer script called {stub_calls('ldconfig') + stub_calls('systemctl')} (the trigger runs "
          "ldconfig; systemctl only where systemd runs and not under --root)")
    run(dpkg + ["-P", "eigstream"], env=env)
    state, _ = status()
    check(state is None, f"after dpkg -P: status {state}")
    check(not os.path.exists(cfg), "dpkg -P left the conffile")
    left = [os.path.join(d, f) for d, _, fs in os.walk(root) if not d.startswith(admin) for f in fs]
    check(not left, f"files left after purge: {left[:5]}")


def main():
    for tool in ("cpack", "dpkg", "dpkg-deb", "readelf"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not found")
            sys.exit(77)
    os.makedirs(SCRATCH, exist_ok=True)
    deb, version, arch = make_deb()
    if os.path.isfile(deb):
        root, programs = check_extracted(deb, version)
        check_control(deb, version, arch, root)
        check_contents(deb, programs)
        check_dpkg_root(deb)
    if failures:
        print(f"test_deb: {len(failures)} failures")
        sys.exit(1)
    print("test_deb: all passed")


main()
